//! WAL checkpoints on a thread of their own, off the writer's path.
//!
//! The writer's automatic checkpoint runs inside the commit that crosses the threshold: it
//! copies every page of the WAL into the database file before the writer may go on. While
//! a server runs, that held up every append queued behind it (one in ~20 paid tens of
//! milliseconds); during an import it was a third of the time, most of it the kernel
//! allocating page cache for a growing file. A [`Checkpointer`] turns the writer's
//! automatic checkpoint off and checkpoints PASSIVE on its own connection, on the other
//! core: it copies committed pages while the writer goes on and never takes the write lock.
//!
//! A WAL is only rewound to its start when a write transaction begins after every frame
//! was copied. A bulk writer that never pauses outruns the copying and grows the WAL
//! without end (measured: a checkpoint with its fsyncs lasted 30 small transactions), so
//! [`Checkpointer::keep_up`] makes it wait for the copy of its last commit once it has
//! committed a given amount since it last waited. A writer that does not (the server's
//! appends) is caught up by the thread itself: once the WAL has grown past
//! [`RESTART_ABOVE_BYTES`], a passive pass is followed by a RESTART one, which holds new
//! write transactions back for the few frames the passive pass left, so the next one starts
//! the WAL over.

use crate::error::Result;
use crate::schema;
use crate::store::Store;
use rusqlite::{Connection, OpenFlags};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Committed bytes between checkpoints of a bulk writer.
pub const BATCH_BYTES: u64 = 16 * 1024 * 1024;

/// WAL size past which the thread makes writers wait for a full copy (a RESTART checkpoint):
/// well above what a writer that keeps up lets it reach, so import never pays for it.
pub const RESTART_ABOVE_BYTES: u64 = 4 * schema::WAL_SIZE_LIMIT as u64;

/// The checkpoint thread; [`Checkpointer::stop`] ends it and gives the writer its automatic
/// checkpoint back.
pub struct Checkpointer {
    shared: Arc<Shared>,
    thread: JoinHandle<()>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Checkpoints asked for ([`Checkpointer::request`], enough
    /// [`Checkpointer::committed`] bytes, or a period tick).
    requested: u64,
    /// Bytes committed since the last request.
    unrequested: u64,
    /// The last request that a finished checkpoint covered.
    finished: u64,
    /// Bytes committed since the writer last waited in [`Checkpointer::keep_up`].
    since_wait: u64,
    stop: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Checkpointer {
    /// Turns the writer's automatic checkpoint off and starts the thread. It checkpoints
    /// when asked (see [`committed`](Checkpointer::committed)) and, with a `period`, at
    /// least that often.
    ///
    /// # Errors
    /// Fails when the checkpoint connection cannot be opened.
    pub fn start(store: &Store, period: Option<Duration>) -> Result<Checkpointer> {
        Checkpointer::start_with_limit(store, period, RESTART_ABOVE_BYTES)
    }

    /// [`start`](Checkpointer::start) with the WAL size that calls for a RESTART checkpoint.
    fn start_with_limit(
        store: &Store,
        period: Option<Duration>,
        restart_above: u64,
    ) -> Result<Checkpointer> {
        let conn = Connection::open_with_flags(
            store.path(),
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        schema::configure(&conn)?;
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let page_size = u64::try_from(page_size).unwrap_or(1).max(1);
        store.set_wal_autocheckpoint(0)?;
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = shared.clone();
            let restart_frames = restart_above / page_size;
            std::thread::spawn(move || run(&conn, &shared, period, restart_frames))
        };
        Ok(Checkpointer { shared, thread })
    }

    /// Asks for a checkpoint as soon as the thread is free.
    pub fn request(&self) {
        let mut state = self.shared.lock();
        state.requested += 1;
        state.unrequested = 0;
        self.shared.changed.notify_all();
    }

    /// Tells the thread that a transaction committed about `bytes`: it checkpoints once
    /// [`BATCH_BYTES`] have added up. Each checkpoint copies the pages that every
    /// transaction touches (b-tree tails, the catalog) again, so one per commit would
    /// copy those a thousand times over an import.
    pub fn committed(&self, bytes: u64) {
        let mut state = self.shared.lock();
        state.unrequested += bytes;
        state.since_wait += bytes;
        if state.unrequested >= BATCH_BYTES {
            state.requested += 1;
            state.unrequested = 0;
            self.shared.changed.notify_all();
        }
    }

    /// Once more than `max_bytes` were [`committed`](Checkpointer::committed) since the last
    /// wait, waits until a checkpoint of everything committed so far has finished, so that
    /// the next write transaction starts the WAL over instead of growing it. (A checkpoint
    /// that runs while the writer goes on never catches up with it: SQLite starts the WAL
    /// over only when a transaction begins after every frame was copied.)
    pub fn keep_up(&self, max_bytes: u64) {
        let mut state = self.shared.lock();
        if state.since_wait <= max_bytes {
            return;
        }
        if state.unrequested > 0 {
            state.requested += 1;
            state.unrequested = 0;
            self.shared.changed.notify_all();
        }
        let target = state.requested;
        while state.finished < target && !state.stop {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        state.since_wait = 0;
    }

    /// Stops the thread (after a last checkpoint if one was asked for) and restores the
    /// writer's automatic checkpoint.
    ///
    /// # Errors
    /// Fails when SQLite rejects the pragma.
    pub fn stop(self, store: &Store) -> Result<()> {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        let _ = self.thread.join();
        store.set_wal_autocheckpoint(schema::WAL_AUTOCHECKPOINT)
    }
}

/// The thread: checkpoints whenever asked (or every `period`) until stopped; a WAL of more
/// than `restart_frames` frames also gets a RESTART checkpoint.
fn run(conn: &Connection, shared: &Shared, period: Option<Duration>, restart_frames: u64) {
    let mut state = shared.lock();
    loop {
        while state.requested == state.finished && !state.stop {
            state = match period {
                Some(period) => {
                    let (mut state, waited) = shared
                        .changed
                        .wait_timeout(state, period)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    if waited.timed_out() {
                        state.requested += 1;
                    }
                    state
                }
                None => shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            };
        }
        if state.requested == state.finished {
            break;
        }
        let target = state.requested;
        drop(state);
        // A failed checkpoint (busy, or an error the writer will meet too) is retried at
        // the next request; the writer's own close checkpoints whatever is left.
        let frames = conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(1))
            .unwrap_or(0);
        if u64::try_from(frames).unwrap_or(0) > restart_frames {
            let _ = conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()));
        }
        state = shared.lock();
        state.finished = target;
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a run of commits did to the WAL.
    struct WalRun {
        /// The largest size the WAL file reached.
        largest: u64,
        /// How many times it was started over (the WAL header's checkpoint sequence).
        restarts: u32,
    }

    /// Writes `rounds` transactions of ~20 KB each with `checkpointer` running, calling
    /// `after_each` after every commit.
    fn run_commits(
        rounds: usize,
        start: impl FnOnce(&Store) -> Checkpointer,
        after_each: impl Fn(&Checkpointer),
    ) -> WalRun {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path().join("s.db")).expect("open");
        let wal = dir.path().join("s.db-wal");
        let checkpointer = start(&store);
        let mut largest = 0;
        for round in 0..rounds {
            store
                .write(|tx| {
                    tx.execute(
                        "INSERT INTO projects (key) VALUES (?1)",
                        [format!("p{round}{}", "x".repeat(20_000))],
                    )?;
                    Ok(())
                })
                .expect("write");
            after_each(&checkpointer);
            largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
        }
        let header = std::fs::read(&wal).expect("the WAL");
        let restarts = u32::from_be_bytes(header[12..16].try_into().expect("a WAL header"));
        checkpointer.stop(&store).expect("stop");
        WalRun { largest, restarts }
    }

    /// A bulk writer, with no period: it tells the checkpointer about each commit and
    /// keeps up with it, or does neither.
    fn wal_size_after(rounds: usize, keep_up: bool) -> u64 {
        let run = run_commits(
            rounds,
            |store| Checkpointer::start(store, None).expect("start"),
            |checkpointer| {
                if keep_up {
                    checkpointer.committed(BATCH_BYTES);
                    checkpointer.keep_up(0);
                }
            },
        );
        run.largest
    }

    /// Like the server: short pauses between commits, never waiting for the checkpointer,
    /// which runs every few milliseconds.
    fn server_commits(rounds: usize, restart_above: u64) -> WalRun {
        let period = Some(Duration::from_millis(2));
        run_commits(
            rounds,
            |store| Checkpointer::start_with_limit(store, period, restart_above).expect("start"),
            |_| std::thread::sleep(Duration::from_micros(200)),
        )
    }

    #[test]
    fn a_growing_wal_is_started_over_even_when_the_writer_never_waits() {
        // The 1,000 commits add ~48 MB to the WAL. Without the RESTART pass it was started
        // over 0 times on a quiet machine (it grew to 128 MB), and only when the writer
        // happened to pause long enough on a loaded one (0-22 times); with it, 69-87 times
        // either way. How large the WAL gets in between depends on how long the thread
        // waits for a core and for its fsync: not something a test can bound.
        let run = server_commits(1000, 1024 * 1024);
        assert!(
            run.restarts >= 10,
            "the WAL was started over {} times (it reached {} bytes)",
            run.restarts,
            run.largest
        );
    }

    #[test]
    fn a_writer_that_keeps_up_reuses_the_start_of_the_wal() {
        let grown = wal_size_after(40, false);
        let kept = wal_size_after(40, true);
        // Nothing copies the WAL while the writer's own checkpoint is off, so it grows with
        // every transaction; keeping up lets it start over.
        assert!(
            kept * 4 < grown,
            "WAL kept at {kept} bytes, grown to {grown}"
        );
    }
}
