//! Reads of the team store that are not resume or search: finding sessions and listing
//! them, with the same rules and answers as [`crate::query`].

use super::decode::RowExt;
use super::Typed;
use crate::error::{Error, Result};
use crate::model::SessionRef;
use crate::query::{LookupSource, SessionFilter, SessionInfo, SessionRow, StoredLine};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::Type;
use postgres::{GenericClient, Row, Transaction};

const SESSION_COLUMNS: &str =
    "SELECT s.id, p.key, s.session_id FROM sessions s JOIN projects p ON p.id = s.project_id";

fn session_ref(r: &Row) -> Result<SessionRef> {
    Ok(SessionRef {
        key: r.col(0)?,
        project: r.col(1)?,
        session_id: r.col(2)?,
    })
}

/// Finds the session a user means (the rules of [`crate::query::resolve_session`]).
///
/// The id is compared by its bytes (`COLLATE "C"`): the same equality and prefixes as in
/// the database's collation, and both then use migration V6's index.
///
/// # Errors
/// [`Error::SessionNotFound`] or [`Error::AmbiguousSession`].
pub fn resolve_session(c: &mut impl GenericClient, arg: &str) -> Result<SessionRef> {
    crate::query::resolve_with(&mut PgLookup(c), arg)
}

/// The team store's answers to a lookup.
struct PgLookup<'a, C>(&'a mut C);

impl<C: GenericClient> LookupSource for PgLookup<'_, C> {
    fn exact(&mut self, id: &str, project: Option<&str>) -> Result<Vec<SessionRef>> {
        let sql = format!(
            "{SESSION_COLUMNS} WHERE s.session_id COLLATE \"C\" = $1
               AND ($2::text IS NULL OR p.key = $2)
             ORDER BY p.key"
        );
        let rows = self
            .0
            .query_typed(&sql, &[(&id, Type::TEXT), (&project, Type::TEXT)])?;
        rows.iter().map(session_ref).collect()
    }

    fn titled(&mut self, title: &str) -> Result<Vec<SessionRef>> {
        let rows = self.0.query_typed(
            "SELECT s.id, p.key, s.session_id FROM catalog c
             JOIN sessions s ON s.id = c.session_key JOIN projects p ON p.id = s.project_id
             WHERE c.custom_title = $1 ORDER BY p.key, s.session_id LIMIT 6",
            &[(&title, Type::TEXT)],
        )?;
        rows.iter().map(session_ref).collect()
    }

    fn prefixed(&mut self, prefix: &str, project: Option<&str>) -> Result<Vec<SessionRef>> {
        let sql = format!(
            "{SESSION_COLUMNS} WHERE starts_with(s.session_id COLLATE \"C\", $1)
             AND ($2::text IS NULL OR p.key = $2) ORDER BY p.key, s.session_id LIMIT 6"
        );
        let rows = self
            .0
            .query_typed(&sql, &[(&prefix, Type::TEXT), (&project, Type::TEXT)])?;
        rows.iter().map(session_ref).collect()
    }
}

const INFO_COLUMNS: &str = "SELECT c.session_id, c.summary, c.last_modified, c.file_size,
        c.custom_title, c.first_prompt, c.git_branch, coalesce(c.cwd, $1), c.tag, c.created_at,
        p.key, c.listed, c.ai_title, c.message_count, c.subagent_count, c.source_state,
        c.first_timestamp, c.last_timestamp, s.origin_host, s.origin_user
     FROM catalog c JOIN projects p ON p.id = c.project_id JOIN sessions s ON s.id = c.session_key";

fn session_info(r: &Row) -> Result<SessionInfo> {
    Ok(session_row(r)?.to_info())
}

/// A row of [`INFO_COLUMNS`], its text borrowed.
fn session_row(r: &Row) -> Result<SessionRow<'_>> {
    let subagent_count: i64 = r.col(14)?;
    Ok(SessionRow {
        session_id: r.col(0)?,
        summary: r.col(1)?,
        last_modified: r.col(2)?,
        file_size: r.col(3)?,
        custom_title: r.col(4)?,
        first_prompt: r.col(5)?,
        git_branch: r.col(6)?,
        cwd: r.col(7)?,
        tag: r.col(8)?,
        created_at: r.col(9)?,
        project: r.col(10)?,
        listed: r.col(11)?,
        ai_title: r.col(12)?,
        message_count: r.col(13)?,
        has_subagents: subagent_count > 0,
        subagent_count,
        source_state: r.col(15)?,
        first_timestamp: r.col(16)?,
        last_timestamp: r.col(17)?,
        origin_host: r.col(18)?,
        origin_user: r.col(19)?,
    })
}

/// Lists sessions from the catalog (the rules of [`crate::query::list_sessions`]), and
/// filters by origin host.
///
/// # Errors
/// Fails on a database error.
pub fn list_sessions(
    c: &mut impl GenericClient,
    filter: &SessionFilter,
) -> Result<Vec<SessionInfo>> {
    let mut out = Vec::new();
    for_each_session(c, filter, |s| {
        out.push(s.to_info());
        Ok::<(), Error>(())
    })?;
    Ok(out)
}

/// [`list_sessions`] one session at a time, its text borrowed from the row as it arrives
/// (`sessions --json` writes each out without making the list: making and freeing 10,000
/// entries' strings was a third of the client's time).
///
/// # Errors
/// Fails on a database error, or with what `each` returns.
pub fn for_each_session<E: From<Error>>(
    c: &mut impl GenericClient,
    filter: &SessionFilter,
    mut each: impl FnMut(&SessionRow<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    // Without a project, a session id stored in several projects is listed once, from its
    // newest copy. The condition is left out of the text, not switched off by a parameter:
    // behind an `OR` the planner probes the catalog once per row (10,000 index lookups for
    // a plain `sessions`), where alone it becomes one hash anti-join.
    let newest_copy = if filter.project.is_some() {
        ""
    } else {
        "AND NOT EXISTS (
             SELECT 1 FROM catalog d WHERE d.session_id = c.session_id
               AND d.session_key <> c.session_key AND ($2 OR d.listed)
               AND (d.last_modified > c.last_modified
                    OR (d.last_modified = c.last_modified AND d.session_key < c.session_key)))"
    };
    // COLLATE "C": the SQLite store orders ids by their bytes.
    let sql = format!(
        "{INFO_COLUMNS}
     WHERE ($2 OR c.listed)
       AND ($3::text IS NULL OR p.key = $3
            OR (length($3) > 200 AND starts_with(p.key, $3)))
       AND ($4::text IS NULL OR c.tag = $4)
       AND ($5::text IS NULL OR c.git_branch = $5)
       AND ($6::bigint IS NULL OR c.last_modified >= $6)
       AND ($7::bigint IS NULL OR c.last_modified <= $7)
       AND ($8::text IS NULL OR strpos(c.name_text, $8) > 0)
       AND ($11::text IS NULL OR strpos(lower(p.key), $11) > 0
            OR strpos(lower(coalesce(c.cwd, '')), $11) > 0)
       AND ($12::text IS NULL OR s.origin_host = $12)
       {newest_copy}
     ORDER BY c.last_modified DESC, c.session_id COLLATE \"C\" DESC
     LIMIT $9 OFFSET $10"
    );
    let limit: Option<i64> = filter.limit.filter(|n| *n > 0);
    let offset = filter.offset.filter(|n| *n > 0).unwrap_or(0);
    let lower = |s: &Option<String>| {
        s.as_deref()
            .map(str::to_lowercase)
            .filter(|n| !n.is_empty())
    };
    let name = lower(&filter.name);
    let contains = lower(&filter.project_contains);
    let params: &Typed<'_> = &[
        (&filter.directory, Type::TEXT),
        (&filter.include_hidden, Type::BOOL),
        (&filter.project, Type::TEXT),
        (&filter.tag, Type::TEXT),
        (&filter.branch, Type::TEXT),
        (&filter.since, Type::INT8),
        (&filter.until, Type::INT8),
        (&name, Type::TEXT),
        (&limit, Type::INT8),
        (&offset, Type::INT8),
        (&contains, Type::TEXT),
        (&filter.host, Type::TEXT),
    ];
    let mut rows = c
        .query_typed_raw(&sql, params.iter().cloned())
        .map_err(Error::from)?;
    while let Some(r) = rows.next().map_err(Error::from)? {
        each(&session_row(&r)?)?;
    }
    Ok(())
}

/// The catalog entry of one session, listed or not.
///
/// # Errors
/// [`Error::SessionNotFound`] when the session has no catalog row; database errors.
pub fn get_session_info(
    c: &mut impl GenericClient,
    session: &SessionRef,
    directory: Option<&str>,
) -> Result<SessionInfo> {
    let r = c
        .query_typed_opt(
            &format!("{INFO_COLUMNS} WHERE c.session_key = $2"),
            &[(&directory, Type::TEXT), (&session.key, Type::INT8)],
        )?
        .ok_or_else(|| Error::SessionNotFound(session.session_id.clone()))?;
    session_info(&r)
}

/// Whether a project folder of this exact name is stored.
///
/// # Errors
/// Fails on a database error.
pub fn project_exists(c: &mut impl GenericClient, key: &str) -> Result<bool> {
    Ok(c.query_typed_opt(
        "SELECT 1 FROM projects WHERE key = $1",
        &[(&key, Type::TEXT)],
    )?
    .is_some())
}

/// The stored session ids just before and after `id`, in byte order.
///
/// # Errors
/// Fails on a database error.
pub fn neighbour_ids(
    c: &mut impl GenericClient,
    id: &str,
) -> Result<(Option<String>, Option<String>)> {
    let r = c.query_typed_one(
        "SELECT (SELECT max(session_id COLLATE \"C\") FROM catalog WHERE session_id < $1 COLLATE \"C\"),
                (SELECT min(session_id COLLATE \"C\") FROM catalog WHERE session_id > $1 COLLATE \"C\")",
        &[(&id, Type::TEXT)],
    )?;
    Ok((r.col(0)?, r.col(1)?))
}

/// Every stored session id, in byte order, each once.
///
/// # Errors
/// Fails on a database error.
pub fn all_session_ids(tx: &mut Transaction<'_>) -> Result<Vec<String>> {
    tx.query(
        "SELECT DISTINCT session_id COLLATE \"C\" FROM catalog ORDER BY 1",
        &[],
    )?
    .iter()
    .map(|r| r.col(0))
    .collect()
}

/// The `timestamp` of every record with a uuid in the session's live transcripts (see
/// [`crate::query::record_timestamps`]).
///
/// # Errors
/// Fails on a database error.
pub fn record_timestamps(
    tx: &mut Transaction<'_>,
    session: &SessionRef,
) -> Result<std::collections::HashMap<String, String>> {
    tx.query(
        "SELECT r.uuid, r.timestamp FROM rows r JOIN transcripts t ON t.id = r.transcript_id
         WHERE t.session_id = $1 AND t.superseded_at IS NULL
           AND r.uuid IS NOT NULL AND r.timestamp IS NOT NULL",
        &[&session.key],
    )?
    .iter()
    .map(|r| Ok((r.col(0)?, r.col(1)?)))
    .collect()
}

/// The session of exactly this project and id (the viewer's paths name both); no prefix or
/// title matching (see [`crate::query::find_exact_session`]).
///
/// # Errors
/// [`Error::SessionNotFound`]; database errors.
pub fn find_exact_session(
    tx: &mut Transaction<'_>,
    project: &str,
    session_id: &str,
) -> Result<SessionRef> {
    let r = tx
        .query_opt(
            &format!("{SESSION_COLUMNS} WHERE p.key = $1 AND s.session_id = $2"),
            &[&project, &session_id],
        )?
        .ok_or_else(|| Error::SessionNotFound(format!("{project}/{session_id}")))?;
    session_ref(&r)
}

/// Every project folder name, in byte order as on SQLite (for a listing's project filter).
///
/// # Errors
/// Fails on a database error.
pub fn project_keys(tx: &mut Transaction<'_>) -> Result<Vec<String>> {
    tx.query("SELECT key FROM projects ORDER BY key COLLATE \"C\"", &[])?
        .iter()
        .map(|r| r.col(0))
        .collect()
}

/// Every tag some session has now, in byte order (for a listing's tag filter).
///
/// # Errors
/// Fails on a database error.
pub fn tags(tx: &mut Transaction<'_>) -> Result<Vec<String>> {
    tx.query(
        "SELECT DISTINCT tag COLLATE \"C\" FROM catalog WHERE tag IS NOT NULL AND tag <> ''
         ORDER BY 1",
        &[],
    )?
    .iter()
    .map(|r| r.col(0))
    .collect()
}

/// The live transcript of a session: its main one (`agent` `None`) or its sub-agent
/// `agent`'s, if stored (see [`crate::query::session_transcript`]).
///
/// # Errors
/// Fails on a database error.
pub fn session_transcript(
    tx: &mut Transaction<'_>,
    session: &SessionRef,
    agent: Option<&str>,
) -> Result<Option<i64>> {
    match agent {
        Some(a) => agent_transcript(tx, session, a),
        None => super::export::main_transcript(tx, session),
    }
}

/// The live transcript of a session's sub-agent (`agent_id`), if stored (the rule of
/// [`crate::query::agent_transcript`]).
///
/// # Errors
/// Fails on a database error.
pub fn agent_transcript(
    tx: &mut Transaction<'_>,
    session: &SessionRef,
    agent_id: &str,
) -> Result<Option<i64>> {
    tx.query_opt(
        "SELECT id FROM transcripts WHERE session_id = $1 AND agent_id = $2
           AND subpath <> '' AND superseded_at IS NULL ORDER BY subpath COLLATE \"C\" LIMIT 1",
        &[&session.key, &agent_id],
    )?
    .map(|r| r.col(0))
    .transpose()
}

/// The lines of one transcript, in file order (see [`crate::query::transcript_lines`]).
///
/// # Errors
/// Fails on a database error.
pub fn transcript_lines(tx: &mut Transaction<'_>, transcript: i64) -> Result<Vec<StoredLine>> {
    tx.query(
        "SELECT ordinal, raw FROM rows WHERE transcript_id = $1 ORDER BY ordinal",
        &[&transcript],
    )?
    .into_iter()
    .map(|r| {
        Ok(StoredLine {
            ordinal: r.col(0)?,
            raw: r.col(1)?,
            damaged: false,
        })
    })
    .collect()
}

/// A page of a transcript's lines (see [`crate::query::transcript_lines_after`]).
///
/// # Errors
/// Fails on a database error.
pub fn transcript_lines_after(
    tx: &mut Transaction<'_>,
    transcript: i64,
    after: i64,
    limit: i64,
) -> Result<Vec<StoredLine>> {
    tx.query(
        "SELECT ordinal, raw FROM rows WHERE transcript_id = $1 AND ordinal > $2
         ORDER BY ordinal LIMIT $3",
        &[&transcript, &after, &limit],
    )?
    .into_iter()
    .map(|r| {
        Ok(StoredLine {
            ordinal: r.col(0)?,
            raw: r.col(1)?,
            damaged: false,
        })
    })
    .collect()
}

/// One line of a transcript by its position (see [`crate::query::transcript_line`]).
///
/// # Errors
/// Fails on a database error.
pub fn transcript_line(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
) -> Result<Option<Vec<u8>>> {
    tx.query_opt(
        "SELECT raw FROM rows WHERE transcript_id = $1 AND ordinal = $2",
        &[&transcript, &ordinal],
    )?
    .map(|r| r.col(0))
    .transpose()
}
