//! The search queue of the team store: lines an append writes wait here for their search
//! vector, and a search indexes them first (the PostgreSQL counterpart of the SQLite
//! store's `search_pending`, V6).
//!
//! Computing `to_tsvector` inside an append's INSERT was nearly all of the server's time in
//! a SessionStore append (issue 17), and queueing each line with its words (V4) still cost a
//! row, an index entry and a foreign-key check per line. An append now stores its searchable
//! lines with the empty vector (which matches nothing) and queues one *run*: the ordinals of
//! the lines it wrote (`search_queue_runs`, V7). [`catch_up`] reads a run's searchable lines
//! back, cuts their words from the stored bytes with the reader import uses
//! ([`super::rows::search_columns_of`], as `reindex` does) and writes their vectors with
//! import's own expression, so a search finds exactly what it would have found had the
//! append computed them.
//!
//! Many processes may catch up at once: each takes runs with `FOR UPDATE SKIP LOCKED`
//! (after their sessions' rows, the order every writer keeps: see [`take_runs`]),
//! writes their vectors and removes them from the queue in one transaction of at most
//! [`BATCH`] lines (a longer run is taken in parts: its first ordinal moves past what was
//! written), so two never index the same line and a failed catch-up leaves its lines
//! queued. A search waits for the runs another process is indexing at that moment, so that
//! it finds every line appended before it.

use super::decode::RowExt;
use super::PgStore;
use crate::error::Result;
use crate::import::Parsed;
use postgres::Transaction;

/// Lines indexed per transaction of a catch-up: short transactions, so that a failure loses
/// little work and another searcher can take the next lines meanwhile.
const BATCH: i64 = 2000;

/// Runs locked per look at the queue.
const RUNS: i64 = 16;

/// Stores lines written by sessiondb itself (appends) from `ordinal` on, as
/// [`super::rows::insert_lines`] stores them but with their search vectors left to
/// [`catch_up`]: the run of lines is queued when one of them is searchable. Each line's
/// search text (the fourth member) is not read: the catch-up cuts it from the stored bytes.
/// Returns the row ids in line order.
///
/// # Errors
/// On a database error.
pub(crate) fn insert_local_lines(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    lines: &[Parsed<'_>],
    own_session: &str,
) -> Result<Vec<i64>> {
    let ids = super::rows::insert_rows(tx, transcript, ordinal, lines, own_session, true, true)?;
    if lines
        .iter()
        .any(|(_, status, env, _, _)| crate::search::is_indexed(*status, env))
    {
        let last = ordinal + lines.len() as i64 - 1;
        let sql = super::prepared(
            tx,
            "INSERT INTO search_queue_runs (transcript_id, first_ordinal, last_ordinal)
             VALUES ($1, $2, $3)
             ON CONFLICT (transcript_id, first_ordinal) DO UPDATE
                SET last_ordinal = greatest(search_queue_runs.last_ordinal, excluded.last_ordinal)",
        )?;
        tx.execute(&sql, &[&transcript, &ordinal, &last])?;
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
    // Nothing queued, nothing to index or wait for: a run another process is indexing
    // stays in the queue (and is seen here) until that process commits its vector. One
    // statement and one round trip, where the two catch-up transactions below take eight
    // even when they find nothing (half of a search's round trips).
    if !anything_queued(store)? {
        return Ok(0);
    }
    let mut indexed = 0;
    while let Some(n) = index_some(store)? {
        indexed += n;
    }
    // Runs locked by another catch-up: waited for, then skipped if it indexed them, taken
    // if it failed. One pass: runs queued after it began are not the search's to wait for.
    indexed += store
        .write(|tx| index_queued(tx, Take::Waiting))?
        .unwrap_or(0);
    Ok(indexed)
}

/// Indexes one batch of the queued lines no other process holds, in one transaction (what
/// `serve` does when idle): the lines indexed, or `None` when no run was free.
///
/// # Errors
/// On a database error; the batch's lines stay queued.
pub fn index_some(store: &PgStore) -> Result<Option<u64>> {
    store.write(|tx| index_queued(tx, Take::Unlocked))
}

/// Whether any run waits in the queue, committed or being indexed by another process.
fn anything_queued(store: &PgStore) -> Result<bool> {
    store.read_single(|c| {
        c.query_typed_one("SELECT EXISTS (SELECT 1 FROM search_queue_runs)", &[])?
            .col(0)
    })
}

/// Which queued runs a catch-up transaction takes.
#[derive(Clone, Copy)]
enum Take {
    /// Runs no other transaction holds, up to [`BATCH`] lines.
    Unlocked,
    /// All runs, waiting for those other transactions hold.
    Waiting,
}

/// A queued run as a catch-up took it.
struct Run {
    transcript: i64,
    first: i64,
    last: i64,
}

/// Writes the vectors of queued lines and takes their runs off the queue; `None` when no run
/// was taken.
fn index_queued(tx: &mut Transaction<'_>, take: Take) -> Result<Option<u64>> {
    let budget = match take {
        Take::Unlocked => BATCH,
        Take::Waiting => i64::MAX,
    };
    let mut lines = Lines::default();
    let mut took = false;
    while lines.taken < budget {
        let runs = take_runs(tx, take)?;
        if runs.is_empty() {
            break;
        }
        took = true;
        for run in runs {
            if lines.taken >= budget {
                // Left queued (and unlocked at commit) for the next batch.
                break;
            }
            index_run(tx, &run, budget - lines.taken, &mut lines)?;
        }
        if matches!(take, Take::Waiting) {
            // Every run was taken at once.
            break;
        }
    }
    lines.write(tx)?;
    Ok(took.then_some(lines.taken as u64))
}

/// Locks queued runs, oldest transcript first, each after its session's row.
///
/// Lock order: every writer of a session's lines or runs (`delete`, `import`, `sync`,
/// `reindex`, an append) first locks the session's row `FOR UPDATE`; a catch-up first takes
/// it `FOR KEY SHARE`, which conflicts with that, then the run, then writes the lines. So a
/// catch-up never holds a run or a line that a writer of its session waits for while it
/// waits for that writer, and PostgreSQL never has to abort one of them as a deadlock.
fn take_runs(tx: &mut Transaction<'_>, take: Take) -> Result<Vec<Run>> {
    let rows = match take {
        Take::Unlocked => {
            // Never waits: a run whose session or run row another transaction holds is
            // left for later.
            let sql = super::prepared(
                tx,
                "SELECT q.transcript_id, q.first_ordinal, q.last_ordinal
                 FROM search_queue_runs q
                 JOIN transcripts t ON t.id = q.transcript_id
                 JOIN sessions s ON s.id = t.session_id
                 ORDER BY q.transcript_id, q.first_ordinal LIMIT $1
                 FOR KEY SHARE OF s SKIP LOCKED FOR UPDATE OF q SKIP LOCKED",
            )?;
            tx.query(&sql, &[&RUNS])?
        }
        Take::Waiting => {
            // The sessions first (waiting for their writers, which may delete them), then
            // their runs (waiting for other catch-ups, which hold no session lock a writer
            // of these sessions could take).
            let sql = super::prepared(
                tx,
                "SELECT s.id FROM sessions s
                 WHERE s.id IN (SELECT t.session_id FROM search_queue_runs q
                                JOIN transcripts t ON t.id = q.transcript_id)
                 ORDER BY s.id FOR KEY SHARE",
            )?;
            let sessions: Vec<i64> = tx
                .query(&sql, &[])?
                .iter()
                .map(|r| r.col(0))
                .collect::<Result<_>>()?;
            let sql = super::prepared(
                tx,
                "SELECT q.transcript_id, q.first_ordinal, q.last_ordinal
                 FROM search_queue_runs q JOIN transcripts t ON t.id = q.transcript_id
                 WHERE t.session_id = ANY($1)
                 ORDER BY q.transcript_id, q.first_ordinal FOR UPDATE OF q",
            )?;
            tx.query(&sql, &[&sessions])?
        }
    };
    rows.iter()
        .map(|r| {
            Ok(Run {
                transcript: r.col(0)?,
                first: r.col(1)?,
                last: r.col(2)?,
            })
        })
        .collect()
}

/// Reads the searchable lines of `run`, at most `budget` of them, into `lines`, and removes
/// the run from the queue, or moves its start past the lines read when it holds more.
fn index_run(tx: &mut Transaction<'_>, run: &Run, budget: i64, lines: &mut Lines) -> Result<()> {
    let mut first = run.first;
    let mut left = budget;
    loop {
        // Read in parts of at most `BATCH` lines, written as they come.
        let part = left.min(BATCH);
        let sql = super::prepared(
            tx,
            "SELECT id, ordinal, raw FROM rows
             WHERE transcript_id = $1 AND ordinal BETWEEN $2 AND $3 AND search IS NOT NULL
             ORDER BY ordinal LIMIT $4",
        )?;
        let rows = tx.query(&sql, &[&run.transcript, &first, &run.last, &part])?;
        let read = rows.len() as i64;
        let mut next = run.last + 1;
        for row in &rows {
            lines.add(row.col(0)?, row.col::<&[u8]>(2)?);
            next = row.col::<i64>(1)? + 1;
        }
        lines.taken += read;
        left -= read;
        if lines.pending() >= BATCH {
            lines.write(tx)?;
        }
        if read < part || next > run.last {
            // The whole run is read.
            let sql = super::prepared(
                tx,
                "DELETE FROM search_queue_runs WHERE transcript_id = $1 AND first_ordinal = $2",
            )?;
            tx.execute(&sql, &[&run.transcript, &run.first])?;
            return Ok(());
        }
        first = next;
        if left == 0 {
            let sql = super::prepared(
                tx,
                "UPDATE search_queue_runs SET first_ordinal = $3
                 WHERE transcript_id = $1 AND first_ordinal = $2",
            )?;
            tx.execute(&sql, &[&run.transcript, &run.first, &first])?;
            return Ok(());
        }
    }
}

/// Lines read for their vectors, not yet written.
#[derive(Default)]
struct Lines {
    ids: Vec<i64>,
    indexed: Vec<bool>,
    bodies: Vec<Option<String>>,
    tools: Vec<Option<String>>,
    /// Lines taken by this transaction, written or not.
    taken: i64,
}

impl Lines {
    fn add(&mut self, id: i64, raw: &[u8]) {
        let (indexed, body, tools) = super::rows::search_columns_of(raw);
        self.ids.push(id);
        self.indexed.push(indexed);
        self.bodies.push(body);
        self.tools.push(tools);
    }

    fn pending(&self) -> i64 {
        self.ids.len() as i64
    }

    /// Writes the vectors of the lines read, with import's own expression.
    fn write(&mut self, tx: &mut Transaction<'_>) -> Result<()> {
        if self.ids.is_empty() {
            return Ok(());
        }
        // `r.id = ANY($1)` lets the planner reach the rows by the primary key.
        let sql = super::prepared(
            tx,
            concat!(
                "UPDATE rows r SET search = f.v
                 FROM (SELECT u.id, ",
                super::rows::search_vector!(),
                " AS v FROM unnest($1::bigint[], $2::boolean[], $3::text[], $4::text[])
                       AS u(id, indexed, body, tools)) f
                 WHERE r.id = ANY($1) AND r.id = f.id"
            ),
        )?;
        tx.execute(&sql, &[&self.ids, &self.indexed, &self.bodies, &self.tools])?;
        self.ids.clear();
        self.indexed.clear();
        self.bodies.clear();
        self.tools.clear();
        Ok(())
    }
}

/// Lines waiting for their search vector (for tests).
///
/// # Errors
/// On a database error.
pub fn queued(store: &PgStore) -> Result<i64> {
    store.read(|tx| {
        tx.query_one(
            "SELECT count(*) FROM search_queue_runs q JOIN rows r
               ON r.transcript_id = q.transcript_id
              AND r.ordinal BETWEEN q.first_ordinal AND q.last_ordinal
             WHERE r.search IS NOT NULL",
            &[],
        )?
        .col(0)
    })
}
