//! `sessiondb backup DEST`: a consistent copy of the database while writers go on.
//!
//! SQLite's online backup copies every page of the database as one read transaction sees it
//! (all pages in one step: a step that saw a write by another connection would start over),
//! so the copy holds exactly the transactions committed before it began. In WAL mode writers
//! are not held up. The copy is written to a temporary file (mode 0600: transcripts hold
//! secrets) beside DEST, synced, and renamed over DEST, so DEST is never half a database.

use crate::error::{Error, Result};
use crate::store::Store;
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a backup wrote.
#[derive(Debug, Clone, Serialize)]
pub struct BackupReport {
    /// The database copied.
    pub source: PathBuf,
    /// The copy.
    pub destination: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Database pages copied.
    pub pages: i64,
}

/// Copies the database to `dest` (replacing a file there), atomically and with mode 0600.
///
/// # Errors
/// [`Error::Invalid`] when `dest` is the database itself; [`Error::Io`] when the folder
/// cannot be written; a database error when the copy fails (nothing is left at `dest`).
pub fn backup(store: &Store, dest: &Path) -> Result<BackupReport> {
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    if same_file(store.path(), dest) {
        return Err(Error::Invalid(format!(
            "{} is the database itself; back it up to another file",
            dest.display()
        )));
    }
    // tempfile creates the file with mode 0600 and removes it if anything below fails.
    let tmp = tempfile::Builder::new()
        .prefix(".sessiondb-backup-")
        .tempfile_in(&parent)
        .map_err(|e| Error::io(&parent, e))?;
    let pages = {
        let source = store.reader()?;
        let mut target = Connection::open_with_flags(
            tmp.path(),
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // The copy needs no journal of its own: it is renamed into place only when complete.
        target.pragma_update(None, "journal_mode", "OFF")?;
        copy_all(&source, &mut target)?;
        let pages: i64 = target.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        // The copy keeps the source's WAL flag in its header; a reader opens it as any database.
        target.close().map_err(|(_, e)| Error::from(e))?;
        pages
    };
    let file = tmp.as_file();
    file.sync_all().map_err(|e| Error::io(tmp.path(), e))?;
    let bytes = file.metadata().map_err(|e| Error::io(tmp.path(), e))?.len();
    tmp.persist(dest).map_err(|e| Error::io(dest, e.error))?;
    // The rename itself survives a crash once the folder is synced.
    if let Ok(dir) = std::fs::File::open(&parent) {
        let _ = dir.sync_all();
    }
    Ok(BackupReport {
        source: store.path().to_owned(),
        destination: dest.to_owned(),
        bytes,
        pages,
    })
}

/// Copies every page in one step, retrying while another connection holds a lock that the
/// copy must wait for.
fn copy_all(source: &Connection, target: &mut Connection) -> Result<()> {
    let backup = Backup::new(source, target)?;
    let deadline = std::time::Instant::now() + crate::schema::BUSY_TIMEOUT;
    loop {
        match backup.step(-1)? {
            StepResult::Done => return Ok(()),
            StepResult::More => {}
            StepResult::Busy | StepResult::Locked if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                return Err(Error::Invalid(
                    "the database stayed locked for the whole busy timeout; backup not written"
                        .to_owned(),
                ))
            }
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
