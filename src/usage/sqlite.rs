//! The usage projection on SQLite: the hook that stores a line's responses in the
//! transaction that stores the line, the rebuild, and the one read the reports need.

use super::record::{self, Fold, Response};
use super::{Scope, UsageRow};
use crate::error::Result;
use crate::jsonl::Envelope;
use rusqlite::{params, Connection, Transaction};

/// Stores `row`'s responses (see [`record::responses`]) under the session of `transcript`,
/// keeping one row per response by [`record::dedupe_key`] and [`record::replaces`]: the
/// `WHERE` clause of [`REPLACE`] below is that rule.
pub(crate) fn store(
    tx: &Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &Envelope<'_>,
) -> Result<()> {
    if !record::may_hold(bytes, env) {
        return Ok(());
    }
    let found = record::responses(bytes, env);
    if found.is_empty() {
        return Ok(());
    }
    let session = tx
        .prepare_cached(
            "SELECT s.id, p.key, s.session_id FROM transcripts t
             JOIN sessions s ON s.id = t.session_id JOIN projects p ON p.id = s.project_id
             WHERE t.id = ?1",
        )?
        .query_row([transcript], |r| {
            Ok(Session {
                key: r.get(0)?,
                project: r.get(1)?,
                id: r.get(2)?,
            })
        })?;
    let mut writer = Writer::new(tx)?;
    for response in &found {
        writer.store(&session, row, response)?;
    }
    Ok(())
}

/// Stores the folded responses of lines of `session` (the import's path: the session
/// looked up once, and one statement per response only where one changes something; see
/// [`record::Fold`]).
pub(crate) fn store_folded(tx: &Transaction<'_>, session: i64, fold: &Fold<'_>) -> Result<()> {
    let session = tx
        .prepare_cached(
            "SELECT s.id, p.key, s.session_id FROM sessions s
             JOIN projects p ON p.id = s.project_id WHERE s.id = ?1",
        )?
        .query_row([session], |r| {
            Ok(Session {
                key: r.get(0)?,
                project: r.get(1)?,
                id: r.get(2)?,
            })
        })?;
    let found = fold.responses();
    let stored = stored(tx, &session, found)?;
    let mut writer = Writer::new(tx)?;
    for ((row, response), stored) in found.iter().zip(stored) {
        match stored {
            // Stored already, as a copy this one does not replace: nothing changes.
            Some(false) => {}
            Some(true) => writer.replace(&session, *row, response)?,
            None => writer.store(&session, *row, response)?,
        }
    }
    Ok(())
}

/// Which of `found` are stored already (`Some`), and of those whether `session`'s copy
/// replaces the stored one ([`REPLACE`]'s condition), in one statement for all of them:
/// a copied session (a fork, a resumed copy, a second machine) holds mostly responses seen
/// before, and one look-up each, in SQL, costs less than the two statements each would
/// take otherwise. A response it misses is stored as new, which finds the copy itself.
fn stored(
    tx: &Transaction<'_>,
    session: &Session,
    found: &[(i64, Response<'_>)],
) -> Result<Vec<Option<bool>>> {
    let mut stored = vec![None; found.len()];
    let keys: Vec<(usize, &str, &str, i64)> = found
        .iter()
        .enumerate()
        .filter_map(|(i, (_, r))| r.key().map(|(m, q)| (i, m, q, r.output_tokens)))
        .collect();
    if keys.is_empty() {
        return Ok(stored);
    }
    let keys = serde_json::to_string(&keys)?;
    let mut stmt = tx.prepare_cached(STORED)?;
    let mut rows = stmt.query(params![keys, session.key, session.project, session.id])?;
    while let Some(r) = rows.next()? {
        let (i, replaces): (i64, bool) = (r.get(0)?, r.get(1)?);
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| stored.get_mut(i)) {
            *slot = Some(replaces);
        }
    }
    Ok(stored)
}

/// The responses of `?1` (a JSON array of `[index, message id, request id, output tokens]`)
/// stored already, with whether the storing session (`?2`, its place `?3`, `?4`) replaces
/// each: [`REPLACE`]'s condition, the same expression.
const STORED: &str = "SELECT j.value ->> 0, CASE WHEN u.session_id = ?2
        THEN j.value ->> 3 >= u.output_tokens
        ELSE (?3, ?4) < (SELECT p.key, s.session_id FROM sessions s
                         JOIN projects p ON p.id = s.project_id
                         WHERE s.id = u.session_id) END
    FROM json_each(?1) j
    JOIN usage_responses u ON u.message_id = j.value ->> 1 AND u.request_id = j.value ->> 2";

/// The session responses are stored under: its key, and its place in the order that
/// decides between copies ([`record::Owner`]: project folder name, session id).
struct Session {
    key: i64,
    project: String,
    id: String,
}

/// A response not stored yet: `?1`–`?18` the row's fields. A response seen before is left
/// to [`REPLACE`] (no row changed).
///
/// Two statements rather than one `ON CONFLICT … DO UPDATE`: an upsert whose update may
/// change `session_id` (a foreign key) makes SQLite keep a statement journal, a copy of
/// every 16 KiB page the insert changes, for each response; a plain insert needs none.
/// Most responses are new, so most pay one cheap statement; one seen before pays a second.
const INSERT_NEW: &str = "INSERT INTO usage_responses (row_id, session_id, message_id, request_id,
        agent_id, model, ts, cwd, git_branch, input_tokens, output_tokens, cache_creation_tokens,
        cache_creation_1h_tokens, cache_read_tokens, web_search_requests, service_tier, speed,
        cost_usd)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
    ON CONFLICT (message_id, request_id) DO NOTHING";

/// A response seen before takes the new fields when [`record::replaces`] says so, in SQL:
/// the storing session's place given as `?19`, `?20`; row values compare as Rust's tuples
/// of `&str` do (BINARY collation, byte order). A record without a message id (`?3` NULL)
/// is never seen before: each is counted.
const REPLACE: &str = "UPDATE usage_responses SET row_id = ?1, session_id = ?2,
        agent_id = ?5, model = ?6, ts = ?7, cwd = ?8, git_branch = ?9,
        input_tokens = ?10, output_tokens = ?11, cache_creation_tokens = ?12,
        cache_creation_1h_tokens = ?13, cache_read_tokens = ?14, web_search_requests = ?15,
        service_tier = ?16, speed = ?17, cost_usd = ?18
    WHERE message_id = ?3 AND request_id = ?4
      AND CASE WHEN usage_responses.session_id = ?2
        THEN ?11 >= usage_responses.output_tokens
        ELSE (?19, ?20) < (SELECT p.key, s.session_id FROM sessions s
                           JOIN projects p ON p.id = s.project_id
                           WHERE s.id = usage_responses.session_id) END";

/// The two statements that store a response, taken from the statement cache once for all
/// the responses of a call (not twice per response).
struct Writer<'c> {
    insert: rusqlite::CachedStatement<'c>,
    replace: rusqlite::CachedStatement<'c>,
}

impl<'c> Writer<'c> {
    fn new(tx: &'c Connection) -> Result<Self> {
        Ok(Writer {
            insert: tx.prepare_cached(INSERT_NEW)?,
            replace: tx.prepare_cached(REPLACE)?,
        })
    }

    /// Stores `r`, of the line stored as `row`, under `session`: new, or by the rule.
    fn store(&mut self, session: &Session, row: i64, r: &Response<'_>) -> Result<()> {
        let inserted = with_values(session, row, r, |v| self.insert.execute(&v[..18]))?;
        if inserted == 0 {
            self.replace(session, row, r)?;
        }
        Ok(())
    }

    /// Stores `r` over the stored copy of its response, by the rule.
    fn replace(&mut self, session: &Session, row: i64, r: &Response<'_>) -> Result<()> {
        with_values(session, row, r, |v| self.replace.execute(v))?;
        Ok(())
    }
}

/// Calls `f` with the parameters of [`INSERT_NEW`] (the first 18) and [`REPLACE`] (all 20).
fn with_values<T>(
    session: &Session,
    row: i64,
    r: &Response<'_>,
    f: impl FnOnce(&[&dyn rusqlite::ToSql]) -> T,
) -> T {
    let (message, request) = match r.key() {
        Some((m, q)) => (Some(m), q),
        None => (None, r.request_id.as_deref().unwrap_or("")),
    };
    f(params![
        row,
        session.key,
        message,
        request,
        r.agent_id,
        r.model,
        r.timestamp_ms,
        r.cwd,
        r.git_branch,
        r.input_tokens,
        r.output_tokens,
        r.cache_creation_tokens,
        r.cache_creation_1h_tokens,
        r.cache_read_tokens,
        r.web_search_requests,
        r.service_tier,
        r.speed,
        r.cost_usd,
        session.project,
        session.id,
    ])
}

/// Empties the projection and fills it again from every stored line, in row order (the
/// order import stored them in, so the same copy of each response keeps it). Run by the
/// step after migration V12 and by `reindex`; returns how many responses it holds.
pub(crate) fn rebuild(tx: &Transaction<'_>) -> Result<i64> {
    tx.execute("DELETE FROM usage_responses", [])?;
    let mut stmt = tx.prepare(
        "SELECT r.id, r.transcript_id, line(r.raw, r.dict) AS raw FROM rows r
         WHERE r.status = 0 AND r.type IN ('assistant', 'progress') ORDER BY r.id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (id, transcript): (i64, i64) = (r.get(0)?, r.get(1)?);
        let raw = r.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
        let (_, env) = Envelope::parse(raw);
        store(tx, transcript, id, raw, &env)?;
    }
    Ok(tx.query_row("SELECT count(*) FROM usage_responses", [], |r| r.get(0))?)
}

/// The stored responses in `scope` with their session, project and tag, oldest first.
pub(crate) fn read(conn: &Connection, scope: &Scope) -> Result<Vec<UsageRow>> {
    let sql = format!(
        "SELECT s.session_id, p.key, c.tag, u.agent_id, u.model, u.ts, u.git_branch,
                u.input_tokens, u.output_tokens, u.cache_creation_tokens,
                u.cache_creation_1h_tokens, u.cache_read_tokens, u.web_search_requests,
                u.cost_usd, c.cwd
         FROM usage_responses u JOIN sessions s ON s.id = u.session_id
         JOIN projects p ON p.id = s.project_id
         LEFT JOIN catalog c ON c.session_key = u.session_id
         {}
         ORDER BY u.ts, u.id",
        match scope {
            Scope::All => "",
            Scope::Since(_) => "WHERE u.ts >= ?1",
            Scope::Session(_) => "WHERE s.session_id = ?1",
        }
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let bound: Vec<Box<dyn rusqlite::ToSql>> = match scope {
        Scope::All => vec![],
        Scope::Since(ms) => vec![Box::new(*ms)],
        Scope::Session(id) => vec![Box::new(id.clone())],
    };
    let rows = stmt.query_map(rusqlite::params_from_iter(bound), |r| {
        Ok(UsageRow {
            session: r.get(0)?,
            project: r.get(1)?,
            tag: r.get(2)?,
            host: None,
            agent: r.get(3)?,
            model: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
            timestamp_ms: r.get(5)?,
            branch: r.get(6)?,
            tokens: super::pricing::Tokens {
                input: r.get(7)?,
                output: r.get(8)?,
                cache_creation: r.get(9)?,
                cache_creation_1h: r.get(10)?,
                cache_read: r.get(11)?,
                web_search: r.get(12)?,
            },
            recorded_cost_usd: r.get(13)?,
            project_cwd: r.get(14)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
