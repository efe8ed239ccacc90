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
//! `FOR UPDATE SKIP LOCKED`, writes their vectors and removes them from the queue in one
//! transaction, so two never index the same line and a failed catch-up leaves its lines
//! queued. A search waits for the lines another process is indexing at that moment, so that
//! it finds every line appended before it.

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
    // Nothing queued, nothing to index or wait for: a line another process is indexing
    // stays in the queue (and is seen here) until that process commits its vector. One
    // statement and one round trip, where the two catch-up transactions below take eight
    // even when they find nothing (half of a search's round trips).
    if !anything_queued(store)? {
        return Ok(0);
    }
    let mut indexed = 0;
    loop {
        let n = store.write(|tx| index_queued(tx, Take::Unlocked))?;
        indexed += n;
        if n == 0 {
            break;
        }
    }
    // Lines locked by another catch-up: waited for, then skipped if it indexed them, taken
    // if it failed. One pass: lines queued after it began are not the search's to wait for.
    indexed += store.write(|tx| index_queued(tx, Take::Waiting))?;
    Ok(indexed)
}

/// Whether any line waits in the queue, committed or being indexed by another process.
fn anything_queued(store: &PgStore) -> Result<bool> {
    store.read_single(|c| {
        Ok(
            c.query_typed_one("SELECT EXISTS (SELECT 1 FROM search_queue)", &[])?
                .get(0),
        )
    })
}

/// Which queued lines a catch-up transaction takes.
#[derive(Clone, Copy)]
enum Take {
    /// Up to [`BATCH`] lines no other transaction holds.
    Unlocked,
    /// All lines, waiting for those other transactions hold.
    Waiting,
}

/// Writes the vectors of queued lines and takes them off the queue, in one statement.
fn index_queued(tx: &mut Transaction<'_>, take: Take) -> Result<u64> {
    // The vector is import's own expression (`import::SEARCH_VECTOR`) over the same words.
    const UNLOCKED: &str = concat!(
        "WITH taken AS (
            SELECT row_id, body, tools FROM search_queue ORDER BY row_id
            LIMIT $1 FOR UPDATE SKIP LOCKED
        ), indexed AS (
            UPDATE rows r SET search = (SELECT ",
        super::import::search_vector!(),
        " FROM (SELECT true, t.body, t.tools) AS u(indexed, body, tools))
            FROM taken t WHERE r.id = t.row_id
        )
        DELETE FROM search_queue q USING taken t WHERE q.row_id = t.row_id"
    );
    const WAITING: &str = concat!(
        "WITH taken AS (
            SELECT row_id, body, tools FROM search_queue ORDER BY row_id FOR UPDATE
        ), indexed AS (
            UPDATE rows r SET search = (SELECT ",
        super::import::search_vector!(),
        " FROM (SELECT true, t.body, t.tools) AS u(indexed, body, tools))
            FROM taken t WHERE r.id = t.row_id
        )
        DELETE FROM search_queue q USING taken t WHERE q.row_id = t.row_id"
    );
    Ok(match take {
        Take::Unlocked => {
            let sql = super::prepared(tx, UNLOCKED)?;
            tx.execute(&sql, &[&BATCH])?
        }
        Take::Waiting => {
            let sql = super::prepared(tx, WAITING)?;
            tx.execute(&sql, &[])?
        }
    })
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
