//! The search queue of the team store: lines an append writes wait here for their search
//! vector, and a search indexes them first (the PostgreSQL counterpart of the SQLite
//! store's `search_pending`, V6).
//!
//! Computing `to_tsvector` inside an append's INSERT was nearly all of the server's time in
//! a SessionStore append (issue 17). An append now stores its searchable lines with the
//! empty vector (which matches nothing) and queues their words, cut exactly as import cuts
//! them; [`catch_up`] writes the vectors later, from the queued words, with the same
//! expression import uses, so a search finds exactly what it would have found.
//!
//! Many processes may catch up at once: each takes queued lines with
//! `FOR NO KEY UPDATE … SKIP LOCKED`, writes their vectors and removes them from the queue
//! in one transaction, so two never index the same line and a failed catch-up leaves its
//! lines queued. A search waits for the lines another process is indexing at that moment,
//! so that it finds every line appended before it.
//!
//! Lock order: every writer locks a line's row before its queue entry. `delete` and
//! `sync`/`import` deleting rows do (the queue entry goes by the cascade of the row's
//! deletion), `reindex` does (it locks the rows before it drops their entries), and a
//! catch-up does: it locks the row (and the entry) without waiting, and waits only in its
//! last pass, one line at a time, holding nothing else meanwhile. So a catch-up never
//! holds what a writer waits for while waiting for what that writer holds, and PostgreSQL
//! never has to abort one of them as a deadlock.

use super::PgStore;
use crate::error::Result;
use crate::import::Parsed;
use crate::jsonl::SearchText;
use postgres::Transaction;

/// Lines indexed per transaction of a catch-up: short transactions, so that a failure loses
/// little work and another searcher can take the next lines meanwhile.
const BATCH: i64 = 2000;

/// Stores lines written by sessiondb itself (appends) from `ordinal` on, as
/// [`super::import::insert_lines`] stores them but with their search vectors left to
/// [`catch_up`]: each searchable line is queued with its words. Takes each line's search
/// text out of `lines` (ahead or not, as import reads it). Returns the row ids in line order.
///
/// # Errors
/// On a database error.
pub(crate) fn insert_local_lines(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    lines: &mut [Parsed<'_>],
    own_session: &str,
) -> Result<Vec<i64>> {
    let mut queued = Vec::new();
    let mut bodies = Vec::new();
    let mut tools = Vec::new();
    for (i, (line, status, env, search)) in lines.iter_mut().enumerate() {
        let (indexed, body, tool) =
            super::import::search_columns(*status, env, line.bytes, search.as_ref());
        if !indexed {
            continue;
        }
        queued.push(i);
        bodies.push(body);
        tools.push(tool);
        // Still a searchable line to the INSERT, with no words: the empty vector.
        *search = Some(SearchText::default());
    }
    let ids = super::import::insert_lines(tx, transcript, ordinal, lines, own_session, true)?;
    if !queued.is_empty() {
        let rows: Vec<i64> = queued.iter().map(|&i| ids[i]).collect();
        let sql = super::prepared(
            tx,
            "INSERT INTO search_queue (row_id, body, tools)
             SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])",
        )?;
        tx.execute(&sql, &[&rows, &bodies, &tools])?;
    }
    Ok(ids)
}

/// Indexes every queued line: what no other process is indexing, in batches, then what
/// others were indexing and did not finish (waiting for them). Returns the lines indexed
/// here.
///
/// # Errors
/// On a database error; the lines of the failed batch stay queued.
pub fn catch_up(store: &PgStore) -> Result<u64> {
    let mut indexed = 0;
    // Batches of what no one holds, until none is left; the transaction that finds none
    // also lists what others hold (in one round trip), for the waiting pass below.
    let mut pending = loop {
        let (n, held) = store.write(|tx| {
            let n = index_unlocked(tx, None)?;
            let held = if n == 0 { all_queued(tx)? } else { Vec::new() };
            Ok((n, held))
        })?;
        indexed += n;
        if n == 0 {
            break held;
        }
    };
    // Lines locked by another transaction: waited for, then skipped if it indexed or deleted
    // them, taken if it failed. One pass over what was queued then: lines queued after it
    // began are not the search's to wait for.
    while let Some((&first, rest)) = pending.split_first() {
        // Waits for this one line only, in a transaction that holds nothing else.
        indexed += store.write(|tx| index_one_waiting(tx, first))?;
        if rest.is_empty() {
            break;
        }
        // The others that are free by now, without waiting; what is still held is waited
        // for in turn.
        let rest = rest.to_vec();
        let (n, left) = store.write(|tx| {
            let n = index_unlocked(tx, Some(&rest))?;
            let left: Vec<i64> = tx
                .query(
                    "SELECT row_id FROM search_queue WHERE row_id = ANY($1) ORDER BY row_id",
                    &[&rest],
                )?
                .iter()
                .map(|r| r.get(0))
                .collect();
            Ok((n, left))
        })?;
        indexed += n;
        pending = left;
    }
    Ok(indexed)
}

/// The row ids of every queued line, in order (the simple protocol: one round trip).
fn all_queued(tx: &mut Transaction<'_>) -> Result<Vec<i64>> {
    let mut ids = Vec::new();
    for message in tx.simple_query("SELECT row_id FROM search_queue ORDER BY row_id")? {
        if let postgres::SimpleQueryMessage::Row(row) = message {
            if let Some(id) = row.get(0).and_then(|v| v.parse().ok()) {
                ids.push(id);
            }
        }
    }
    Ok(ids)
}

/// The statement that writes the vectors of the queued lines `taken` selects and takes them
/// off the queue. The vector is import's own expression (`import::SEARCH_VECTOR`) over the
/// same words.
macro_rules! index_taken {
    ($taken:expr) => {
        concat!(
            "WITH taken AS (",
            $taken,
            "), indexed AS (
                UPDATE rows r SET search = (SELECT ",
            super::import::search_vector!(),
            " FROM (SELECT true, t.body, t.tools) AS u(indexed, body, tools))
                FROM taken t WHERE r.id = t.row_id
            )
            DELETE FROM search_queue q USING taken t WHERE q.row_id = t.row_id"
        )
    };
}

/// Indexes up to [`BATCH`] queued lines (of `only`, when given) that no other transaction
/// holds: their rows and queue entries are locked without waiting, so this never waits.
fn index_unlocked(tx: &mut Transaction<'_>, only: Option<&[i64]>) -> Result<u64> {
    const SQL: &str = index_taken!(
        "SELECT q.row_id, q.body, q.tools FROM rows r JOIN search_queue q ON q.row_id = r.id
         WHERE $2::bigint[] IS NULL OR q.row_id = ANY($2)
         ORDER BY q.row_id LIMIT $1 FOR NO KEY UPDATE OF r, q SKIP LOCKED"
    );
    let sql = super::prepared(tx, SQL)?;
    Ok(tx.execute(&sql, &[&BATCH, &only])?)
}

/// Indexes one queued line, waiting for whoever holds its row. Only the row is locked
/// before the wait (the queue entry is taken by the `DELETE`, after it): a writer locks a
/// row before its entry, so the entry of a row this transaction holds is not a writer's.
fn index_one_waiting(tx: &mut Transaction<'_>, row_id: i64) -> Result<u64> {
    const SQL: &str = index_taken!(
        "SELECT q.row_id, q.body, q.tools FROM rows r JOIN search_queue q ON q.row_id = r.id
         WHERE q.row_id = $1 FOR NO KEY UPDATE OF r"
    );
    let sql = super::prepared(tx, SQL)?;
    Ok(tx.execute(&sql, &[&row_id])?)
}

/// Lines waiting for their search vector (for `serve`'s idle pass and for tests).
///
/// # Errors
/// On a database error.
pub fn queued(store: &PgStore) -> Result<i64> {
    store.read(|tx| {
        Ok(tx
            .query_one("SELECT count(*) FROM search_queue", &[])?
            .get(0))
    })
}
