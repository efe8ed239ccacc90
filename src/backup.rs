//! `sessiondb backup DEST`: a consistent copy of the database while writers go on.
//!
//! SQLite's online backup copies every page of the database as one read transaction sees it
//! (all pages in one step: a step that saw a write by another connection would start over),
//! so the copy holds exactly the transactions committed before it began. In WAL mode writers
//! are not held up. The copy is written to a temporary file (mode 0600: transcripts hold
//! secrets) beside DEST, synced, and renamed over DEST, so DEST is never half a database;
//! the temporaries that killed backups left beside DEST are removed by the next one.

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
    /// Temporary files of earlier backups that were killed before their rename, removed
    /// from DEST's folder (see `remove_stale_temporaries`).
    pub stale_temporaries_removed: u64,
}

/// The start of a backup's temporary file's name, beside DEST.
const TEMP_PREFIX: &str = ".sessiondb-backup-";

/// The end of it: the file is a backup not finished yet. Older sessiondb versions made
/// temporaries without it.
const TEMP_SUFFIX: &str = ".partial";

/// How long a temporary of an older sessiondb (which held no lock on it) must have gone
/// unmodified before it is taken as stale.
const OLD_STYLE_STALE_AFTER: Duration = Duration::from_secs(3600);

/// Creates a backup's temporary file in `parent` (mode 0600, removed if dropped before
/// its rename) and holds an exclusive lock on it while the backup runs, so that another
/// backup can tell it from one left by a killed process (issue 28, item 16).
///
/// # Errors
/// When the folder cannot be written.
pub(crate) fn temporary(parent: &Path) -> Result<tempfile::NamedTempFile> {
    let tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(parent)
        .map_err(|e| Error::io(parent, e))?;
    tmp.as_file().lock().map_err(|e| Error::io(tmp.path(), e))?;
    Ok(tmp)
}

/// Removes the temporary files that killed backups left in `parent` (a `kill -9` leaves
/// one every time, as large as the database): those whose lock nobody holds, and
/// temporaries of older sessiondb versions (which took no lock) not modified for an hour.
/// A backup running meanwhile holds its file's lock and keeps it. Returns how many were
/// removed; one that cannot be removed is left for the next run.
pub(crate) fn remove_stale_temporaries(parent: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !name.starts_with(TEMP_PREFIX) || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let stale = if name.ends_with(TEMP_SUFFIX) {
            // Holding the lock while removing: a backup cannot take the file meanwhile.
            match std::fs::File::open(&path) {
                Ok(file) => match file.try_lock() {
                    Ok(()) => std::fs::remove_file(&path).is_ok(),
                    Err(_) => false,
                },
                Err(_) => false,
            }
        } else {
            let old = std::fs::symlink_metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= OLD_STYLE_STALE_AFTER);
            old && std::fs::remove_file(&path).is_ok()
        };
        removed += u64::from(stale);
    }
    removed
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
    let stale_temporaries_removed = remove_stale_temporaries(&parent);
    // tempfile creates the file with mode 0600 and removes it if anything below fails.
    let tmp = temporary(&parent)?;
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
        stale_temporaries_removed,
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
