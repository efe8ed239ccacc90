//! `reindex` on a team store, and the rebuilds `check --repair` makes: each line's search
//! vector computed again from its stored bytes (by the reader import uses) and each catalog
//! row recomputed from all its session's lines; `reindex` also rebuilds the usage projection,
//! session by session, while no other write runs (see [`super::PgStore::write_alone`]).
//!
//! One transaction per session, holding the session's row lock as every writer does: a
//! concurrent import or `append` of that session waits for it, other sessions go on, and a
//! reindex killed part-way leaves every session either rebuilt or as it was. Only derived
//! columns are written (`rows.search`, the `catalog` row); the stored lines are only read.

use super::decode::RowExt;
use super::rows::{search_columns_of, SEARCH_VECTOR};
use super::PgStore;
use crate::error::Result;
use crate::search::ReindexReport;
use postgres::Transaction;

/// Lines read and compared per round trip.
const BATCH: i32 = 500;

// The statements below name their rows twice, by the join and by `r.id = ANY($1)`: the
// second lets the planner reach them through the primary key (a join with an `unnest` alone
// was planned as a scan of the whole table per batch).

/// Rebuilds every line's search vector and every catalog row (see the module docs).
///
/// # Errors
/// Fails on a database error; the sessions rebuilt before it stay rebuilt.
pub fn reindex(store: &PgStore) -> Result<ReindexReport> {
    let keys = session_keys(store)?;
    for key in &keys {
        store.write(|tx| {
            if lock_session(tx, *key)? {
                rebuild_search(tx, *key)?;
                super::catalog::rebuild_session(tx, *key)?;
            }
            Ok(())
        })?;
    }
    // The usage projection, session by session, each alone (see `PgStore::write_alone`):
    // its upserts take other sessions' rows, which running writers take in other orders.
    for key in &usage_order(store)? {
        store.write_alone(|tx| {
            if lock_session(tx, *key)? {
                crate::pg::usage::rebuild_session(tx, *key)?;
            }
            Ok(())
        })?;
    }
    let indexed: i64 = store.read(|tx| {
        tx.query_one("SELECT count(*) FROM rows WHERE search IS NOT NULL", &[])?
            .col(0)
    })?;
    Ok(ReindexReport {
        indexed,
        sessions: keys.len() as i64,
    })
}

/// Every session's key, in order.
pub(crate) fn session_keys(store: &PgStore) -> Result<Vec<i64>> {
    store.read(|tx| {
        tx.query("SELECT id FROM sessions ORDER BY id", &[])?
            .iter()
            .map(|r| r.col(0))
            .collect()
    })
}

/// Every session's key in (project, session id) order: the order in which the usage
/// projection is rebuilt, so that a response several sessions hold goes to the first of them
/// (see [`crate::usage::record::replaces`]) however often it changes hands on the way.
fn usage_order(store: &PgStore) -> Result<Vec<i64>> {
    store.read(|tx| {
        tx.query(
            "SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
             ORDER BY p.key COLLATE \"C\", s.session_id COLLATE \"C\"",
            &[],
        )?
        .iter()
        .map(|r| r.col(0))
        .collect()
    })
}

/// Takes the session's row lock for the transaction; `false` when it was deleted meanwhile.
pub(crate) fn lock_session(tx: &mut Transaction<'_>, key: i64) -> Result<bool> {
    Ok(tx
        .query_opt("SELECT id FROM sessions WHERE id = $1 FOR UPDATE", &[&key])?
        .is_some())
}

/// Writes the search vector of each of the session's lines whose stored vector differs
/// from a fresh computation; returns how many were written.
pub(crate) fn rebuild_search(tx: &mut Transaction<'_>, key: i64) -> Result<u64> {
    let update = format!(
        "UPDATE rows r SET search = f.v
         FROM (SELECT u.id, {SEARCH_VECTOR} AS v
               FROM unnest($1::bigint[], $2::boolean[], $3::text[], $4::text[])
                 AS u(id, indexed, body, tools)) f
         WHERE r.id = ANY($1) AND r.id = f.id AND r.search IS DISTINCT FROM f.v"
    );
    let mut written = 0;
    for_each_batch(tx, key, &mut |tx, batch| {
        written += tx.execute(
            &update,
            &[&batch.ids, &batch.indexed, &batch.bodies, &batch.tools],
        )?;
        Ok(())
    })?;
    // Every vector of the session is written: its queued runs need no catch-up any more
    // (none can be queued meanwhile: appends wait for the session's row lock).
    tx.execute(
        "DELETE FROM search_queue_runs
         WHERE transcript_id IN (SELECT id FROM transcripts WHERE session_id = $1)",
        &[&key],
    )?;
    Ok(written)
}

/// The ids of the session's lines whose stored search vector differs from a fresh
/// computation, and how many lines were compared (`check`). Lines still queued for their
/// vector ([`super::search_queue`]) are not stale: the next search indexes them.
pub(crate) fn stale_search(tx: &mut Transaction<'_>, key: i64) -> Result<(Vec<i64>, u64)> {
    let compare = format!(
        "SELECT r.id FROM rows r
         JOIN (SELECT u.id, {SEARCH_VECTOR} AS v
               FROM unnest($1::bigint[], $2::boolean[], $3::text[], $4::text[])
                 AS u(id, indexed, body, tools)) f ON f.id = r.id
         WHERE r.id = ANY($1) AND r.search IS DISTINCT FROM f.v
           AND NOT EXISTS (SELECT 1 FROM search_queue_runs q
                           WHERE q.transcript_id = r.transcript_id
                             AND r.ordinal BETWEEN q.first_ordinal AND q.last_ordinal)
         ORDER BY r.id"
    );
    let mut stale = Vec::new();
    let mut compared = 0;
    for_each_batch(tx, key, &mut |tx, batch| {
        compared += batch.ids.len() as u64;
        for row in tx.query(
            &compare,
            &[&batch.ids, &batch.indexed, &batch.bodies, &batch.tools],
        )? {
            stale.push(row.col(0)?);
        }
        Ok(())
    })?;
    Ok((stale, compared))
}

/// Fresh search columns of a run of lines.
#[derive(Default)]
struct Batch {
    ids: Vec<i64>,
    indexed: Vec<bool>,
    bodies: Vec<Option<String>>,
    tools: Vec<Option<String>>,
}

/// Reads the session's lines (every transcript, superseded versions too) in batches and
/// hands each batch's fresh search columns to `f`.
fn for_each_batch(
    tx: &mut Transaction<'_>,
    key: i64,
    f: &mut dyn FnMut(&mut Transaction<'_>, &Batch) -> Result<()>,
) -> Result<()> {
    let portal = tx.bind(
        "SELECT r.id, r.raw FROM rows r JOIN transcripts t ON t.id = r.transcript_id
         WHERE t.session_id = $1 ORDER BY r.id",
        &[&key],
    )?;
    loop {
        let rows = tx.query_portal(&portal, BATCH)?;
        if rows.is_empty() {
            return Ok(());
        }
        let mut batch = Batch::default();
        for row in &rows {
            let (indexed, body, tools) = search_columns_of(row.col::<&[u8]>(1)?);
            batch.ids.push(row.col(0)?);
            batch.indexed.push(indexed);
            batch.bodies.push(body);
            batch.tools.push(tools);
        }
        f(tx, &batch)?;
    }
}
