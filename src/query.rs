//! Reads that are not resume or search: finding sessions and listing them.

use crate::error::{Error, Result};
use crate::model::SessionRef;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

const SESSION_COLUMNS: &str =
    "SELECT s.id, p.key, s.session_id FROM sessions s JOIN projects p ON p.id = s.project_id";

/// [`SESSION_COLUMNS`] for a session id in any project: one seek per project in the
/// sessions' (project, id) index. Left to itself, SQLite scanned every session instead.
const SESSION_COLUMNS_BY_PROJECT: &str = "SELECT s.id, p.key, s.session_id
     FROM projects p CROSS JOIN sessions s ON s.project_id = p.id";

fn session_ref(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRef> {
    Ok(SessionRef {
        key: row.get(0)?,
        project: row.get(1)?,
        session_id: row.get(2)?,
    })
}

/// Finds the session a user means: a full session id, `PROJECT/SESSION` to pick among
/// projects, a session's exact custom title when only one session has it, or a unique
/// prefix of a session id (in that order).
///
/// # Errors
/// [`Error::SessionNotFound`] or [`Error::AmbiguousSession`] when the argument does not
/// name exactly one session.
pub fn resolve_session(conn: &Connection, arg: &str) -> Result<SessionRef> {
    resolve_with(&mut SqliteLookup(conn), arg)
}

/// The three questions [`resolve_session`]'s rules ask an engine; each answer is in
/// project then session id order, at most 6 for a title or prefix (5 are shown when
/// ambiguous, the 6th says there are more).
pub(crate) trait LookupSource {
    /// Sessions whose id is `id` exactly (in `project` only, when given).
    fn exact(&mut self, id: &str, project: Option<&str>) -> Result<Vec<SessionRef>>;
    /// Sessions whose custom title is `title` exactly.
    fn titled(&mut self, title: &str) -> Result<Vec<SessionRef>>;
    /// Sessions whose id starts with `prefix`, compared by bytes.
    fn prefixed(&mut self, prefix: &str, project: Option<&str>) -> Result<Vec<SessionRef>>;
}

/// [`resolve_session`]'s rules over any engine.
///
/// # Errors
/// As [`resolve_session`].
pub(crate) fn resolve_with(src: &mut impl LookupSource, arg: &str) -> Result<SessionRef> {
    let arg = arg.trim();
    if arg.is_empty() {
        return Err(Error::SessionNotFound(arg.to_owned()));
    }
    let (project, id) = match arg.rsplit_once('/') {
        Some((p, s)) if !p.is_empty() => (Some(p), s),
        _ => (None, arg),
    };
    let exact = src.exact(id, project)?;
    if !exact.is_empty() {
        return one_match(arg, exact);
    }
    let titled = src.titled(arg)?;
    if !titled.is_empty() {
        return one_match(arg, titled);
    }
    one_match(arg, src.prefixed(id, project)?)
}

/// SQLite's answers to a lookup.
struct SqliteLookup<'a>(&'a Connection);

impl LookupSource for SqliteLookup<'_> {
    fn exact(&mut self, id: &str, project: Option<&str>) -> Result<Vec<SessionRef>> {
        Ok(self
            .0
            .prepare_cached(&format!(
                "{SESSION_COLUMNS_BY_PROJECT} WHERE s.session_id = ?1 AND (?2 IS NULL OR p.key = ?2)
                 ORDER BY p.key"
            ))?
            .query_map(params![id, project], session_ref)?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn titled(&mut self, title: &str) -> Result<Vec<SessionRef>> {
        Ok(self
            .0
            .prepare_cached(SELECT_BY_TITLE)?
            .query_map([title], session_ref)?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn prefixed(&mut self, prefix: &str, project: Option<&str>) -> Result<Vec<SessionRef>> {
        Ok(self
            .0
            .prepare_cached(&format!(
                "{SESSION_COLUMNS} WHERE substr(s.session_id, 1, length(?1)) = ?1
                 AND (?2 IS NULL OR p.key = ?2) ORDER BY p.key, s.session_id LIMIT 6"
            ))?
            .query_map(params![prefix, project], session_ref)?
            .collect::<rusqlite::Result<_>>()?)
    }
}

const SELECT_BY_TITLE: &str = "SELECT s.id, p.key, s.session_id FROM catalog c
     JOIN sessions s ON s.id = c.session_key JOIN projects p ON p.id = s.project_id
     WHERE c.custom_title = ?1 ORDER BY p.key, s.session_id LIMIT 6";

/// The one session `arg` names among `matches`, or why there is none.
fn one_match(arg: &str, matches: Vec<SessionRef>) -> Result<SessionRef> {
    match matches.len() {
        0 => Err(Error::SessionNotFound(arg.to_owned())),
        1 => Ok(matches.into_iter().next().expect("one match")),
        _ => Err(Error::AmbiguousSession {
            query: arg.to_owned(),
            candidates: matches
                .iter()
                .take(5)
                .map(|s| format!("{}/{}", s.project, s.session_id))
                .collect(),
        }),
    }
}

/// Which sessions a listing shows. `Default` lists every listed session of every project.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    /// Only this project folder (a sanitized name; over 200 characters it matches by prefix).
    pub project: Option<String>,
    /// Only projects whose folder name or a session's `cwd` contains this text, ignoring
    /// ASCII case (`--project entireio` finds `-home-me-src-EntireIO`).
    pub project_contains: Option<String>,
    /// The project path the listing is for: the `cwd` of sessions that name none, as the
    /// SDK's `directory` argument.
    pub directory: Option<String>,
    /// Only sessions with exactly this tag.
    pub tag: Option<String>,
    /// Only sessions whose titles, summary or first prompt contain this, ignoring case.
    pub name: Option<String>,
    /// Only sessions last on this git branch.
    pub branch: Option<String>,
    /// Only sessions modified at or after this time (epoch ms).
    pub since: Option<i64>,
    /// Only sessions modified at or before this time (epoch ms).
    pub until: Option<i64>,
    /// At most this many (used only when > 0, as the SDK does).
    pub limit: Option<i64>,
    /// Skip this many first (used only when > 0).
    pub offset: Option<i64>,
    /// Also show sessions the SDK hides (sidechain-only files, nothing to title them by).
    pub include_hidden: bool,
    /// Only sessions that came from this host (a team store records the machine that
    /// imported or first wrote each session; a SQLite store has no such record and refuses
    /// the filter).
    pub host: Option<String>,
}

/// A session as the catalog describes it. The first ten fields are the Agent SDK's
/// `SDKSessionInfo`, with its names and meanings; the rest are sessiondb's own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionInfo {
    /// The session id (the transcript's file stem).
    pub session_id: String,
    /// The display title: custom title, else last prompt, else summary, else first prompt.
    pub summary: Option<String>,
    /// The source file's mtime (or sessiondb's last write to the session), epoch ms.
    pub last_modified: i64,
    /// Bytes of the main transcript.
    pub file_size: i64,
    /// The user-set title, else the AI-generated one.
    pub custom_title: Option<String>,
    /// The first meaningful user prompt, at most 200 characters and `…`.
    pub first_prompt: Option<String>,
    /// The last git branch recorded.
    pub git_branch: Option<String>,
    /// The first working directory recorded, else the listing's directory.
    pub cwd: Option<String>,
    /// The session's tag.
    pub tag: Option<String>,
    /// The first record's timestamp, epoch ms.
    pub created_at: Option<i64>,
    /// The project folder name.
    pub project: String,
    /// Whether listings show the session (the SDK's rules).
    pub listed: bool,
    /// The AI-generated title, if any.
    pub ai_title: Option<String>,
    /// User and assistant records of the main transcript (not meta, not sidechain).
    pub message_count: i64,
    /// Whether the session has sub-agent transcripts.
    pub has_subagents: bool,
    /// How many sub-agent transcripts it has.
    pub subagent_count: i64,
    /// `present`, `vanished` (source file gone, rows kept) or `none` (not from a file).
    pub source_state: String,
    /// The first record timestamp, as written.
    pub first_timestamp: Option<String>,
    /// The last record timestamp, as written.
    pub last_timestamp: Option<String>,
    /// The host that imported or first wrote the session (team stores only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_host: Option<String>,
    /// The user that imported or first wrote the session (team stores only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin_user: Option<String>,
}

impl SessionInfo {
    /// The title people see: the custom (or AI) title, else the first prompt, else
    /// `summary`. Not `summary` first: the Agent SDK's summary is the *last* prompt of a
    /// session without a custom title, so a title built on it changes with every turn.
    pub fn title(&self) -> Option<&str> {
        self.custom_title
            .as_deref()
            .or(self.first_prompt.as_deref())
            .or(self.summary.as_deref())
    }
}

const INFO_COLUMNS: &str = "SELECT c.session_id, c.summary, c.last_modified, c.file_size,
        c.custom_title, c.first_prompt, c.git_branch, coalesce(c.cwd, ?1), c.tag, c.created_at,
        p.key, c.listed, c.ai_title, c.message_count, c.subagent_count, c.source_state,
        c.first_timestamp, c.last_timestamp
     FROM catalog c JOIN projects p ON p.id = c.project_id";

fn session_info(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    session_row(r).map(|s| s.to_info())
}

/// A [`SessionInfo`] that borrows its text from the catalog row it was read from: for a
/// caller that writes each session out as it comes (`sessions --json` of 10,000 sessions
/// spent a quarter of its time making and freeing the strings of the list).
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)] // the fields are SessionInfo's
pub struct SessionRow<'a> {
    pub session_id: &'a str,
    pub summary: Option<&'a str>,
    pub last_modified: i64,
    pub file_size: i64,
    pub custom_title: Option<&'a str>,
    pub first_prompt: Option<&'a str>,
    pub git_branch: Option<&'a str>,
    pub cwd: Option<&'a str>,
    pub tag: Option<&'a str>,
    pub created_at: Option<i64>,
    pub project: &'a str,
    pub listed: bool,
    pub ai_title: Option<&'a str>,
    pub message_count: i64,
    pub has_subagents: bool,
    pub subagent_count: i64,
    pub source_state: &'a str,
    pub first_timestamp: Option<&'a str>,
    pub last_timestamp: Option<&'a str>,
    pub origin_host: Option<&'a str>,
    pub origin_user: Option<&'a str>,
}

impl SessionRow<'_> {
    /// The owned [`SessionInfo`].
    pub fn to_info(&self) -> SessionInfo {
        let owned = |s: Option<&str>| s.map(str::to_owned);
        SessionInfo {
            session_id: self.session_id.to_owned(),
            summary: owned(self.summary),
            last_modified: self.last_modified,
            file_size: self.file_size,
            custom_title: owned(self.custom_title),
            first_prompt: owned(self.first_prompt),
            git_branch: owned(self.git_branch),
            cwd: owned(self.cwd),
            tag: owned(self.tag),
            created_at: self.created_at,
            project: self.project.to_owned(),
            listed: self.listed,
            ai_title: owned(self.ai_title),
            message_count: self.message_count,
            has_subagents: self.has_subagents,
            subagent_count: self.subagent_count,
            source_state: self.source_state.to_owned(),
            first_timestamp: owned(self.first_timestamp),
            last_timestamp: owned(self.last_timestamp),
            origin_host: owned(self.origin_host),
            origin_user: owned(self.origin_user),
        }
    }
}

impl SessionInfo {
    /// The same session as a [`SessionRow`].
    pub fn as_row(&self) -> SessionRow<'_> {
        SessionRow {
            session_id: &self.session_id,
            summary: self.summary.as_deref(),
            last_modified: self.last_modified,
            file_size: self.file_size,
            custom_title: self.custom_title.as_deref(),
            first_prompt: self.first_prompt.as_deref(),
            git_branch: self.git_branch.as_deref(),
            cwd: self.cwd.as_deref(),
            tag: self.tag.as_deref(),
            created_at: self.created_at,
            project: &self.project,
            listed: self.listed,
            ai_title: self.ai_title.as_deref(),
            message_count: self.message_count,
            has_subagents: self.has_subagents,
            subagent_count: self.subagent_count,
            source_state: &self.source_state,
            first_timestamp: self.first_timestamp.as_deref(),
            last_timestamp: self.last_timestamp.as_deref(),
            origin_host: self.origin_host.as_deref(),
            origin_user: self.origin_user.as_deref(),
        }
    }
}

/// A row of [`INFO_COLUMNS`], its text borrowed (a text column must hold UTF-8 text, as
/// reading it into a `String` requires).
fn session_row<'a>(r: &'a rusqlite::Row<'_>) -> rusqlite::Result<SessionRow<'a>> {
    let text = |i: usize| -> rusqlite::Result<Option<&'a str>> {
        let v = r.get_ref(i)?;
        v.as_str_or_null()
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, v.data_type(), Box::new(e)))
    };
    let required = |i: usize| -> rusqlite::Result<&'a str> {
        text(i)?.ok_or(rusqlite::Error::InvalidColumnType(
            i,
            String::new(),
            rusqlite::types::Type::Null,
        ))
    };
    let subagent_count: i64 = r.get(14)?;
    Ok(SessionRow {
        session_id: required(0)?,
        summary: text(1)?,
        last_modified: r.get(2)?,
        file_size: r.get(3)?,
        custom_title: text(4)?,
        first_prompt: text(5)?,
        git_branch: text(6)?,
        cwd: text(7)?,
        tag: text(8)?,
        created_at: r.get(9)?,
        project: required(10)?,
        listed: r.get(11)?,
        ai_title: text(12)?,
        message_count: r.get(13)?,
        has_subagents: subagent_count > 0,
        subagent_count,
        source_state: required(15)?,
        first_timestamp: text(16)?,
        last_timestamp: text(17)?,
        origin_host: None,
        origin_user: None,
    })
}

const LIST_FILTERS: &str = "
     WHERE (?2 = 1 OR c.listed = 1)
       AND (?3 IS NULL OR p.key = ?3
            OR (length(?3) > 200 AND substr(p.key, 1, length(?3)) = ?3))
       AND (?4 IS NULL OR c.tag = ?4)
       AND (?5 IS NULL OR c.git_branch = ?5)
       AND (?6 IS NULL OR c.last_modified >= ?6)
       AND (?7 IS NULL OR c.last_modified <= ?7)
       AND (?8 IS NULL OR instr(c.name_text, ?8) > 0)
       AND (?9 IS NULL OR instr(lower(p.key), ?9) > 0 OR instr(lower(coalesce(c.cwd, '')), ?9) > 0)";

/// Without a project, a session id stored in several projects is listed once: the newest.
const LIST_ONE_PER_ID: &str = "
       AND (?3 IS NOT NULL OR NOT EXISTS (
             SELECT 1 FROM catalog d WHERE d.session_id = c.session_id
               AND d.session_key <> c.session_key AND (?2 = 1 OR d.listed = 1)
               AND (d.last_modified > c.last_modified
                    OR (d.last_modified = c.last_modified AND d.session_key < c.session_key))))";

const LIST_ORDER: &str = "
     ORDER BY c.last_modified DESC, c.session_id DESC";

/// Up to this many sessions asked for, [`LIST_ONE_PER_ID`]'s seek per row costs less than
/// first looking for a session id stored twice, which reads the whole session id index.
const FEW_ROWS: i64 = 100;

/// Whether some session id is stored in more than one project (rare: a copied project).
fn some_id_stored_twice(conn: &Connection) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM catalog GROUP BY session_id HAVING count(*) > 1)",
        )?
        .query_row([], |r| r.get(0))?)
}

/// Lists sessions from the catalog, newest first (`last_modified`, then session id, both
/// descending), like the SDK's `list_sessions`: without a project, one entry per session
/// id (the newest). Paging follows the SDK: `limit` and `offset` count only when > 0.
///
/// # Errors
/// Fails on a database error.
pub fn list_sessions(conn: &Connection, filter: &SessionFilter) -> Result<Vec<SessionInfo>> {
    let mut out = Vec::new();
    for_each_session(conn, filter, |s| {
        out.push(s.to_info());
        Ok::<(), Error>(())
    })?;
    Ok(out)
}

/// [`list_sessions`] one session at a time, without building the list: `each` gets every
/// session in order, its text borrowed from the row (see [`SessionRow`]).
///
/// # Errors
/// A database error, or the first error `each` returns (which ends the listing).
pub fn for_each_session<E: From<Error>>(
    conn: &Connection,
    filter: &SessionFilter,
    mut each: impl FnMut(&SessionRow<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    if filter.host.is_some() {
        return Err(E::from(Error::Invalid(
            "--host needs a team store (postgres://...): a SQLite store does not record \
             which machine a session came from"
                .to_owned(),
        )));
    }
    let limit = filter.limit.filter(|n| *n > 0).unwrap_or(-1);
    // The one-per-id test holds by itself within a project, and for every row when no id is
    // stored twice: a long listing checks that first instead of seeking once per row.
    let one_per_id = filter.project.is_none()
        && ((1..=FEW_ROWS).contains(&limit) || some_id_stored_twice(conn)?);
    let offset = filter.offset.filter(|n| *n > 0).unwrap_or(0);
    // LIMIT and OFFSET are written into the statement, not bound: SQLite plans with a bound
    // LIMIT's value, so binding one made it compile the statement a second time, the first
    // time it ran (a seventh of a process listing one session).
    let one_per_id_sql = if one_per_id { LIST_ONE_PER_ID } else { "" };
    let sql = format!(
        "{INFO_COLUMNS}{LIST_FILTERS}{one_per_id_sql}{LIST_ORDER} LIMIT {limit} OFFSET {offset}"
    );
    let name = filter
        .name
        .as_deref()
        .map(str::to_lowercase)
        .filter(|n| !n.is_empty());
    let contains = filter
        .project_contains
        .as_deref()
        .map(str::to_lowercase)
        .filter(|n| !n.is_empty());
    let mut stmt = conn.prepare_cached(&sql).map_err(Error::from)?;
    let mut rows = stmt
        .query(params![
            filter.directory,
            filter.include_hidden,
            filter.project,
            filter.tag,
            filter.branch,
            filter.since,
            filter.until,
            name,
            contains
        ])
        .map_err(Error::from)?;
    while let Some(row) = rows.next().map_err(Error::from)? {
        each(&session_row(row).map_err(Error::from)?)?;
    }
    Ok(())
}

/// The catalog entry of one session, listed or not. `directory` is the project path to
/// report as `cwd` when the session names none (the SDK's `directory` argument).
///
/// # Errors
/// [`Error::SessionNotFound`] when the session has no catalog row; database errors.
pub fn get_session_info(
    conn: &Connection,
    session: &SessionRef,
    directory: Option<&str>,
) -> Result<SessionInfo> {
    conn.prepare_cached(&format!("{INFO_COLUMNS} WHERE c.session_key = ?2"))?
        .query_row(params![directory, session.key], session_info)
        .optional()?
        .ok_or_else(|| Error::SessionNotFound(session.session_id.clone()))
}

/// Whether a project folder of this exact name is stored.
///
/// # Errors
/// Fails on a database error.
pub fn project_exists(conn: &Connection, key: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM projects WHERE key = ?1")?
        .query_row([key], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The stored session ids just before and just after `id` in sorted order (other ids than
/// `id` itself): what decides how short a unique prefix of `id` can be.
///
/// # Errors
/// Fails on a database error.
pub fn neighbour_ids(conn: &Connection, id: &str) -> Result<(Option<String>, Option<String>)> {
    Ok(conn
        .prepare_cached(
            "SELECT (SELECT max(session_id) FROM catalog WHERE session_id < ?1),
                    (SELECT min(session_id) FROM catalog WHERE session_id > ?1)",
        )?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

/// Every stored session id, sorted, each once.
///
/// # Errors
/// Fails on a database error.
pub fn all_session_ids(conn: &Connection) -> Result<Vec<String>> {
    Ok(conn
        .prepare_cached("SELECT DISTINCT session_id FROM catalog ORDER BY session_id")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The recorded `timestamp` of each record of a session (main and sub-agent transcripts),
/// by uuid: `messages` shows when each message was written.
///
/// # Errors
/// Fails on a database error.
pub fn record_timestamps(
    conn: &Connection,
    session: &SessionRef,
) -> Result<std::collections::HashMap<String, String>> {
    Ok(conn
        .prepare_cached(
            "SELECT r.uuid, r.timestamp FROM rows r JOIN transcripts t ON t.id = r.transcript_id
             WHERE t.session_id = ?1 AND t.superseded_at IS NULL
               AND r.uuid IS NOT NULL AND r.timestamp IS NOT NULL",
        )?
        .query_map([session.key], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The session with exactly this project folder and session id (no prefix or title
/// matching: for links, which name both).
///
/// # Errors
/// [`Error::SessionNotFound`] when there is none; database errors.
pub fn find_exact_session(
    conn: &Connection,
    project: &str,
    session_id: &str,
) -> Result<SessionRef> {
    conn.prepare_cached(&format!(
        "{SESSION_COLUMNS} WHERE p.key = ?1 AND s.session_id = ?2"
    ))?
    .query_row(params![project, session_id], session_ref)
    .optional()?
    .ok_or_else(|| Error::SessionNotFound(format!("{project}/{session_id}")))
}

/// Every project folder name, sorted (for a listing's project filter).
///
/// # Errors
/// Fails on a database error.
pub fn project_keys(conn: &Connection) -> Result<Vec<String>> {
    let out = conn
        .prepare_cached("SELECT key FROM projects ORDER BY key")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(out)
}

/// Every tag some session has now, sorted (for a listing's tag filter).
///
/// # Errors
/// Fails on a database error.
pub fn tags(conn: &Connection) -> Result<Vec<String>> {
    let out = conn
        .prepare_cached(
            "SELECT DISTINCT tag FROM catalog WHERE tag IS NOT NULL AND tag <> '' ORDER BY tag",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(out)
}

/// A stored line of a transcript: its position in the file and its bytes.
#[derive(Debug, Clone)]
pub struct StoredLine {
    /// The line's position in its file (0-based).
    pub ordinal: i64,
    /// The line as stored, without its line ending.
    pub raw: Vec<u8>,
    /// Whether the line no longer matches the checksum stored with it (damaged in the
    /// database; `sessiondb check --repair` reads it again). Always false on a team store,
    /// which keeps no checksums.
    pub damaged: bool,
}

/// The live lines of one transcript, in file order.
///
/// # Errors
/// Fails on a database error.
pub fn transcript_lines(conn: &Connection, transcript_id: i64) -> Result<Vec<StoredLine>> {
    let out = conn
        .prepare_cached(
            "SELECT ordinal, line(raw, dict) AS raw, checksum FROM rows WHERE transcript_id = ?1 ORDER BY ordinal",
        )?
        .query_map([transcript_id], |r| {
            let raw: Vec<u8> = r.get(1)?;
            let damaged = !crate::integrity::verify(&raw, r.get(2)?);
            Ok(StoredLine {
                ordinal: r.get(0)?,
                raw,
                damaged,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(out)
}

/// Up to `limit` live lines of one transcript after line `after`, in file order (a page of
/// [`transcript_lines`]).
///
/// # Errors
/// Fails on a database error.
pub fn transcript_lines_after(
    conn: &Connection,
    transcript_id: i64,
    after: i64,
    limit: i64,
) -> Result<Vec<StoredLine>> {
    let out = conn
        .prepare_cached(
            "SELECT ordinal, line(raw, dict) AS raw, checksum FROM rows WHERE transcript_id = ?1 AND ordinal > ?2
             ORDER BY ordinal LIMIT ?3",
        )?
        .query_map(params![transcript_id, after, limit], |r| {
            let raw: Vec<u8> = r.get(1)?;
            let damaged = !crate::integrity::verify(&raw, r.get(2)?);
            Ok(StoredLine {
                ordinal: r.get(0)?,
                raw,
                damaged,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(out)
}

/// One line of a transcript by its position, and whether it is damaged (see
/// [`StoredLine::damaged`]).
///
/// # Errors
/// Fails on a database error.
pub fn transcript_line(
    conn: &Connection,
    transcript_id: i64,
    ordinal: i64,
) -> Result<Option<(Vec<u8>, bool)>> {
    Ok(conn
        .prepare_cached("SELECT line(raw, dict) AS raw, checksum FROM rows WHERE transcript_id = ?1 AND ordinal = ?2")?
        .query_row(params![transcript_id, ordinal], |r| {
            let raw: Vec<u8> = r.get(0)?;
            let damaged = !crate::integrity::verify(&raw, r.get(1)?);
            Ok((raw, damaged))
        })
        .optional()?)
}

/// The live transcript of a session: its main one (`agent` `None`) or its sub-agent
/// `agent`'s, if stored.
///
/// # Errors
/// Fails on a database error.
pub fn session_transcript(
    conn: &Connection,
    session: &SessionRef,
    agent: Option<&str>,
) -> Result<Option<i64>> {
    match agent {
        Some(a) => agent_transcript(conn, session, a),
        None => crate::export::main_transcript(conn, session),
    }
}

/// The live transcript of a session's sub-agent (`agent_id`), if stored.
///
/// # Errors
/// Fails on a database error.
pub fn agent_transcript(
    conn: &Connection,
    session: &SessionRef,
    agent_id: &str,
) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM transcripts WHERE session_id = ?1 AND agent_id = ?2
               AND subpath <> '' AND superseded_at IS NULL ORDER BY subpath LIMIT 1",
        )?
        .query_row(params![session.key, agent_id], |r| r.get(0))
        .optional()?)
}
