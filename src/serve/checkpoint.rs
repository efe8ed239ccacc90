//! WAL checkpoints off the request path while serving.
//!
//! The writer's automatic checkpoint runs inside the commit that crosses the threshold, so
//! one append in ~20 (of 500 entries) paid tens of milliseconds and held up every writer
//! queued behind it. While the server runs, the writer's automatic checkpoint is off and a
//! thread checkpoints PASSIVE once a second on its own connection: it copies committed pages
//! while appends go on and never waits for the write lock.

use crate::error::Result;
use crate::schema;
use crate::store::Store;
use rusqlite::{Connection, OpenFlags};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the WAL is checkpointed while serving.
const PERIOD: Duration = Duration::from_secs(1);

/// The checkpoint thread; [`Checkpointer::stop`] ends it and gives the writer its automatic
/// checkpoint back.
pub struct Checkpointer {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Checkpointer {
    /// Turns the writer's automatic checkpoint off and starts the thread.
    ///
    /// # Errors
    /// Fails when the checkpoint connection cannot be opened.
    pub fn start(store: &Store) -> Result<Checkpointer> {
        let conn = Connection::open_with_flags(
            store.path(),
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        schema::configure(&conn)?;
        store.set_wal_autocheckpoint(0)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(PERIOD) {
                // A failed checkpoint (busy) is retried at the next tick.
                let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            }
        });
        Ok(Checkpointer { stop, thread })
    }

    /// Stops the thread and restores the writer's automatic checkpoint.
    ///
    /// # Errors
    /// Fails when SQLite rejects the pragma.
    pub fn stop(self, store: &Store) -> Result<()> {
        let _ = self.stop.send(());
        let _ = self.thread.join();
        store.set_wal_autocheckpoint(schema::WAL_AUTOCHECKPOINT)
    }
}
