//! The usage projection on a team store (PostgreSQL): the same hook, rebuild and read as
//! [`crate::usage::sqlite`], with the same rule (`ON CONFLICT … WHERE` is [`record::replaces`]).

use super::decode::RowExt;
use super::pool::prepared;
use crate::error::{Error, Result};
use crate::jsonl::Envelope;
use crate::usage::record::{self, Fold, Response};
use crate::usage::{Scope, UsageRow};
use postgres::Transaction;

/// Stores `row`'s responses under the session of `transcript`.
pub(crate) fn store(
    tx: &mut Transaction<'_>,
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
    let stmt = prepared(
        tx,
        "SELECT s.id, p.key, s.session_id FROM transcripts t
         JOIN sessions s ON s.id = t.session_id JOIN projects p ON p.id = s.project_id
         WHERE t.id = $1",
    )?;
    let session = Session::try_from(&tx.query_one(&stmt, &[&transcript])?)?;
    for response in &found {
        insert(tx, &session, row, response)?;
    }
    Ok(())
}

/// The columns both statements fill, in order.
macro_rules! columns {
    () => {
        "INSERT INTO usage_responses (row_id, session_id, message_id, request_id, agent_id, model,
            ts, cwd, git_branch, input_tokens, output_tokens, cache_creation_tokens,
            cache_creation_1h_tokens, cache_read_tokens, web_search_requests, service_tier,
            speed, cost_usd) "
    };
}

/// Whether the storing session, whose (project folder, session id) are the parameters `$p`
/// and `$s`, is before the session with key `$old` in that order: the across-sessions half
/// of [`record::replaces`] (byte order, as Rust compares `&str`).
macro_rules! precedes {
    ($p:literal, $s:literal, $old:literal) => {
        concat!(
            "ROW(",
            $p,
            "::text COLLATE \"C\", ",
            $s,
            "::text COLLATE \"C\")
             < (SELECT p.key COLLATE \"C\", s.session_id COLLATE \"C\" FROM sessions s
                JOIN projects p ON p.id = s.project_id WHERE s.id = ",
            $old,
            ")"
        )
    };
}

/// The session responses are stored under: its key and its place in the order that
/// decides between copies ([`record::Owner`]).
struct Session {
    key: i64,
    project: String,
    id: String,
}

impl TryFrom<&postgres::Row> for Session {
    type Error = Error;

    fn try_from(r: &postgres::Row) -> Result<Self> {
        Ok(Session {
            key: r.col(0)?,
            project: r.col(1)?,
            id: r.col(2)?,
        })
    }
}

/// [`record::replaces`] in SQL: which of two records of one response is kept.
macro_rules! on_conflict {
    () => {
        concat!(
            r#" ON CONFLICT (message_id, request_id) DO UPDATE SET row_id = excluded.row_id,
        session_id = excluded.session_id,
        agent_id = excluded.agent_id, model = excluded.model, ts = excluded.ts,
        cwd = excluded.cwd, git_branch = excluded.git_branch,
        input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
        cache_creation_tokens = excluded.cache_creation_tokens,
        cache_creation_1h_tokens = excluded.cache_creation_1h_tokens,
        cache_read_tokens = excluded.cache_read_tokens,
        web_search_requests = excluded.web_search_requests,
        service_tier = excluded.service_tier, speed = excluded.speed, cost_usd = excluded.cost_usd
    WHERE CASE WHEN usage_responses.session_id = excluded.session_id
        THEN excluded.output_tokens >= usage_responses.output_tokens
        ELSE "#,
            precedes!("$19", "$20", "usage_responses.session_id"),
            " END"
        )
    };
}

/// One record's response.
const UPSERT: &str = concat!(
    columns!(),
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
    on_conflict!()
);

/// A folded set of one session's responses, in one statement (their keys are distinct, so
/// no row is touched twice).
const UPSERT_MANY: &str = concat!(
    columns!(),
    "SELECT r, $1, m, q, a, mo, t, c, g, i, o, cc, c1, cr, w, st, sp, cu
     FROM unnest($2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int8[],
                 $8::text[], $9::text[], $10::int8[], $11::int8[], $12::int8[], $13::int8[],
                 $14::int8[], $15::int8[], $16::text[], $17::text[], $18::float8[])
       AS u(r, m, q, a, mo, t, c, g, i, o, cc, c1, cr, w, st, sp, cu)",
    on_conflict!()
);

/// PostgreSQL's text refuses NUL; the store writes U+FFFD for it, as elsewhere.
fn text(s: &Option<std::borrow::Cow<'_, str>>) -> Option<String> {
    s.as_ref().map(|s| s.replace('\0', "\u{fffd}"))
}

/// The key columns of a response: `message_id` (NULL without a key) and `request_id`.
fn key(r: &Response<'_>) -> (Option<String>, String) {
    match r.key() {
        Some((m, q)) => (
            Some(m.replace('\0', "\u{fffd}")),
            q.replace('\0', "\u{fffd}"),
        ),
        None => (
            None,
            r.request_id
                .as_deref()
                .unwrap_or_default()
                .replace('\0', "\u{fffd}"),
        ),
    }
}

/// Stores the folded responses of lines of `session` (the import's path; see
/// [`record::Fold`]): in one statement, then again one by one those it left with a copy it
/// could not see to be later.
pub(crate) fn store_folded(tx: &mut Transaction<'_>, session: i64, fold: &Fold<'_>) -> Result<()> {
    let found = fold.responses();
    if found.is_empty() {
        return Ok(());
    }
    let stmt = prepared(
        tx,
        "SELECT s.id, p.key, s.session_id FROM sessions s
         JOIN projects p ON p.id = s.project_id WHERE s.id = $1",
    )?;
    let session = Session::try_from(&tx.query_one(&stmt, &[&session])?)?;
    let rows: Vec<i64> = found.iter().map(|(row, _)| *row).collect();
    let (messages, requests): (Vec<Option<String>>, Vec<String>) =
        found.iter().map(|(_, r)| key(r)).unzip();
    type Field = for<'r, 's> fn(&'r Response<'s>) -> &'r Option<std::borrow::Cow<'s, str>>;
    let texts =
        |f: Field| -> Vec<Option<String>> { found.iter().map(|(_, r)| text(f(r))).collect() };
    let ints = |f: fn(&Response) -> i64| -> Vec<i64> { found.iter().map(|(_, r)| f(r)).collect() };
    let costs: Vec<Option<f64>> = found.iter().map(|(_, r)| r.cost_usd).collect();
    let stmt = prepared(tx, UPSERT_MANY)?;
    tx.execute(
        &stmt,
        &[
            &session.key,
            &rows,
            &messages,
            &requests,
            &texts(|r| &r.agent_id),
            &texts(|r| &r.model),
            &ints(|r| r.timestamp_ms),
            &texts(|r| &r.cwd),
            &texts(|r| &r.git_branch),
            &ints(|r| r.input_tokens),
            &ints(|r| r.output_tokens),
            &ints(|r| r.cache_creation_tokens),
            &ints(|r| r.cache_creation_1h_tokens),
            &ints(|r| r.cache_read_tokens),
            &ints(|r| r.web_search_requests),
            &texts(|r| &r.service_tier),
            &texts(|r| &r.speed),
            &costs,
            &session.project,
            &session.id,
        ],
    )?;
    // The rule's look-ups see the snapshot their statement started with (READ COMMITTED):
    // a copy of a response that another machine's import committed meanwhile (the
    // statement waited for it, or met it later) has an owner session this statement could
    // not see, so it kept that copy whatever the order. The statement locked every row it
    // met, so a new statement now sees those owners: the responses this session should
    // have taken are stored again, one statement each.
    let stmt = prepared(tx, MISPLACED)?;
    let misplaced: Vec<i64> = tx
        .query(
            &stmt,
            &[
                &session.key,
                &messages,
                &requests,
                &session.project,
                &session.id,
            ],
        )?
        .iter()
        .map(|r| r.col(0))
        .collect::<Result<_>>()?;
    for i in misplaced {
        let (row, response) = &found[i as usize - 1];
        insert(tx, &session, *row, response)?;
    }
    Ok(())
}

/// The responses (1-based, in `$2`/`$3` order) whose stored copy belongs to another session
/// than `$1`, which (`$4`, `$5`) precedes: those a [`UPSERT_MANY`] left with the wrong copy.
const MISPLACED: &str = concat!(
    "SELECT f.i FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS f(m, q, i)
     JOIN usage_responses u ON u.message_id = f.m AND u.request_id = f.q
     WHERE u.session_id <> $1 AND ",
    precedes!("$4", "$5", "u.session_id")
);

fn insert(tx: &mut Transaction<'_>, session: &Session, row: i64, r: &Response<'_>) -> Result<()> {
    let (message, request) = key(r);
    let stmt = prepared(tx, UPSERT)?;
    tx.execute(
        &stmt,
        &[
            &row,
            &session.key,
            &message,
            &request,
            &text(&r.agent_id),
            &text(&r.model),
            &r.timestamp_ms,
            &text(&r.cwd),
            &text(&r.git_branch),
            &r.input_tokens,
            &r.output_tokens,
            &r.cache_creation_tokens,
            &r.cache_creation_1h_tokens,
            &r.cache_read_tokens,
            &r.web_search_requests,
            &text(&r.service_tier),
            &text(&r.speed),
            &r.cost_usd,
            &session.project,
            &session.id,
        ],
    )?;
    Ok(())
}

/// Empties the projection and fills it again from every stored line in row order (see
/// [`crate::usage::sqlite::rebuild`]); returns how many responses it holds.
pub(crate) fn rebuild(tx: &mut Transaction<'_>) -> Result<i64> {
    tx.execute("DELETE FROM usage_responses", &[])?;
    let lines: Vec<(i64, i64, Vec<u8>)> = tx
        .query(
            "SELECT id, transcript_id, raw FROM rows
             WHERE status = 0 AND type IN ('assistant', 'progress') ORDER BY id",
            &[],
        )?
        .iter()
        .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
        .collect::<Result<_>>()?;
    for (id, transcript, raw) in &lines {
        let (_, env) = Envelope::parse(raw);
        store(tx, *transcript, *id, raw, &env)?;
    }
    tx.query_one("SELECT count(*) FROM usage_responses", &[])?
        .col(0)
}

/// Rebuilds the responses of one session (`key`, the `sessions.id`) from its stored lines:
/// the rows it owns are deleted, then its lines are stored again in row order by the same
/// upsert as at import, so that each response ends with the session first in (project,
/// session id) order among those holding it, and within it the final counts — what a
/// store-wide rebuild gives, when every session has been rebuilt. Responses another copy
/// held and lost with that copy's deletion come back here too.
///
/// The caller holds the store's write lock exclusively ([`crate::pg::PgStore::write_alone`])
/// and the session's row lock: the upserts take the rows of other sessions' copies, which
/// no writer may hold in another order meanwhile.
pub(crate) fn rebuild_session(tx: &mut Transaction<'_>, key: i64) -> Result<()> {
    tx.execute("DELETE FROM usage_responses WHERE session_id = $1", &[&key])?;
    let lines: Vec<(i64, i64, Vec<u8>)> = tx
        .query(
            "SELECT r.id, r.transcript_id, r.raw FROM rows r
             JOIN transcripts t ON t.id = r.transcript_id
             WHERE t.session_id = $1 AND r.status = 0 AND r.type IN ('assistant', 'progress')
             ORDER BY r.id",
            &[&key],
        )?
        .iter()
        .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
        .collect::<Result<_>>()?;
    for (id, transcript, raw) in &lines {
        let (_, env) = Envelope::parse(raw);
        store(tx, *transcript, *id, raw, &env)?;
    }
    Ok(())
}

/// The stored responses in `scope` with their session, project, tag and machine, oldest
/// first.
pub(crate) fn read(tx: &mut Transaction<'_>, scope: &Scope) -> Result<Vec<UsageRow>> {
    let sql = format!(
        "SELECT s.session_id, p.key, c.tag, s.origin_host, u.agent_id, u.model, u.ts,
                u.git_branch, u.input_tokens, u.output_tokens, u.cache_creation_tokens,
                u.cache_creation_1h_tokens, u.cache_read_tokens, u.web_search_requests,
                u.cost_usd, c.cwd
         FROM usage_responses u JOIN sessions s ON s.id = u.session_id
         JOIN projects p ON p.id = s.project_id
         LEFT JOIN catalog c ON c.session_key = u.session_id
         {}
         ORDER BY u.ts, u.id",
        match scope {
            Scope::All => "",
            Scope::Since(_) => "WHERE u.ts >= $1",
            Scope::Session(_) => "WHERE s.session_id = $1",
        }
    );
    let rows = match scope {
        Scope::All => tx.query(&sql, &[])?,
        Scope::Since(ms) => tx.query(&sql, &[ms])?,
        Scope::Session(id) => tx.query(&sql, &[id])?,
    };
    rows.iter()
        .map(|r| {
            Ok(UsageRow {
                session: r.col(0)?,
                project: r.col(1)?,
                tag: r.col(2)?,
                host: r.col(3)?,
                agent: r.col(4)?,
                model: r.col::<Option<String>>(5)?.unwrap_or_default(),
                timestamp_ms: r.col(6)?,
                branch: r.col(7)?,
                tokens: crate::usage::pricing::Tokens {
                    input: r.col(8)?,
                    output: r.col(9)?,
                    cache_creation: r.col(10)?,
                    cache_creation_1h: r.col(11)?,
                    cache_read: r.col(12)?,
                    web_search: r.col(13)?,
                },
                recorded_cost_usd: r.col(14)?,
                project_cwd: r.col(15)?,
            })
        })
        .collect()
}
