//! The store: one SQLite file, a pool of readers and one writer.

use crate::error::{Error, Result};
use crate::schema;
use r2d2::{Pool, PooledConnection};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A pooled read connection.
pub type Reader = PooledConnection<SqliteConnectionManager>;

/// An open sessiondb database.
pub struct Store {
    path: PathBuf,
    pool: Pool<SqliteConnectionManager>,
    writer: Mutex<Connection>,
}

impl Store {
    /// Opens (creating if needed) the database at `path`: parent folders are created, a new
    /// file gets mode 0600 (transcripts hold secrets), the journal is WAL and the embedded
    /// migrations are applied.
    ///
    /// # Errors
    /// Fails when the file cannot be created or opened, when it was written by a newer
    /// sessiondb ([`Error::SchemaTooNew`], the file is left untouched), or when a
    /// migration fails.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_owned();
        create_private_file(&path)?;
        let mut conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(schema::BUSY_TIMEOUT)?;
        schema::check_version(&conn, &path)?;
        let fresh: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        if fresh == 0 {
            // Measured faster than 4 KiB for transcript-sized rows; settable only while empty.
            conn.pragma_update(None, "page_size", 16384)?;
        }
        conn.pragma_update(None, "journal_mode", "WAL")?;
        schema::configure(&conn)?;
        schema::configure_writer(&conn)?;
        schema::migrate(&mut conn)?;
        // A database from before the catalog existed gets its rows once.
        crate::catalog::backfill(&mut conn)?;
        let manager = SqliteConnectionManager::file(&path)
            .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(|c| schema::configure_reader(c));
        let pool = Pool::builder()
            .max_size(8)
            .min_idle(Some(0))
            .build(manager)?;
        Ok(Store {
            path,
            pool,
            writer: Mutex::new(conn),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A read connection from the pool.
    ///
    /// # Errors
    /// Fails when no connection can be opened.
    pub fn reader(&self) -> Result<Reader> {
        Ok(self.pool.get()?)
    }

    /// Sets how long a write waits for another process's write to finish before it fails
    /// (Store::open sets 10 s). Hook capture waits less: it must not hold Claude Code up,
    /// and the next capture catches up.
    ///
    /// # Errors
    /// Fails when SQLite rejects the setting.
    pub fn set_busy_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        let conn = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        conn.busy_timeout(timeout)?;
        Ok(())
    }

    /// Whether closing the store copies the WAL into the database file (SQLite does when
    /// the last connection closes, with two fsyncs, and deletes the WAL, which the next
    /// writer creates again with two more). A short-lived process that writes little (hook
    /// capture) skips it while the WAL is small: the next process goes on appending to it,
    /// and the checkpoint happens once the WAL has grown.
    ///
    /// # Errors
    /// Fails when SQLite rejects the setting.
    pub fn set_checkpoint_on_close(&self, checkpoint: bool) -> Result<()> {
        let conn = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            !checkpoint,
        )?;
        Ok(())
    }

    /// Sets how many WAL pages the writer lets accumulate before it checkpoints.
    ///
    /// # Errors
    /// Fails when SQLite rejects the pragma.
    pub(crate) fn set_wal_autocheckpoint(&self, pages: i64) -> Result<()> {
        let conn = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        conn.pragma_update(None, "wal_autocheckpoint", pages)?;
        Ok(())
    }

    /// Runs `f` in one IMMEDIATE transaction on the writer: it takes the write lock up front,
    /// so it never fails half-way on a lock upgrade, and it commits only when `f` succeeds.
    ///
    /// # Errors
    /// Whatever `f` returns, or a database error; the transaction is rolled back.
    pub fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

/// Creates the database file with mode 0600 (and its folders) unless it exists.
fn create_private_file(path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}
