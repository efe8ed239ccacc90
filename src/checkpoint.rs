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
//! committed a given amount since it last waited.

use crate::error::Result;
use crate::schema;
use crate::store::Store;
use rusqlite::{Connection, OpenFlags};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Committed bytes between checkpoints of a bulk writer.
pub const BATCH_BYTES: u64 = 16 * 1024 * 1024;

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
        let conn = Connection::open_with_flags(
            store.path(),
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        schema::configure(&conn)?;
        store.set_wal_autocheckpoint(0)?;
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = shared.clone();
            std::thread::spawn(move || run(&conn, &shared, period))
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

/// The thread: checkpoints whenever asked (or every `period`) until stopped.
fn run(conn: &Connection, shared: &Shared, period: Option<Duration>) {
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
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        state = shared.lock();
        state.finished = target;
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `rounds` transactions of ~20 KB each, telling `checkpointer` (if any) about
    /// each and keeping up with it; returns the size the WAL file grew to.
    fn wal_size_after(rounds: usize, keep_up: bool) -> u64 {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.db");
        let store = Store::open(&path).expect("open");
        let checkpointer = Checkpointer::start(&store, None).expect("start");
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
            if keep_up {
                checkpointer.committed(BATCH_BYTES);
                checkpointer.keep_up(0);
            }
        }
        let size = std::fs::metadata(dir.path().join("s.db-wal"))
            .expect("the WAL")
            .len();
        checkpointer.stop(&store).expect("stop");
        size
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
