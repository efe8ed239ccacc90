//! Write-back: a change made in sessiondb (rename, tag, append, fork) also written to
//! Claude Code's file, so that its picker shows the new title or tag and the fork.
//!
//! Only when that file still holds exactly what the database holds for it; otherwise
//! nothing is changed and the error says why. The lines written are the database's own
//! (export), appended to the file (Claude Code's files are append-only, and it may append
//! itself: a rename over the file would lose its writes); then the import ledger records the
//! file as imported, so the next import does not take those lines a second time.

use crate::error::{Error, Result};
use crate::export;
use crate::model::SessionRef;
use crate::store::Store;
use rusqlite::OptionalExtension;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A Claude Code file checked to hold exactly a session's stored main transcript.
#[derive(Debug, Clone)]
pub struct Target {
    /// The file.
    pub path: PathBuf,
    transcript: i64,
    len: usize,
}

/// The file a session's main transcript was imported from, and the stored transcript.
fn source_of(store: &Store, session: &SessionRef) -> Result<(PathBuf, i64)> {
    let conn = store.reader()?;
    let transcript = export::main_transcript(&conn, session)?.ok_or_else(|| {
        Error::Invalid(format!(
            "session {} has no main transcript to write back",
            session.session_id
        ))
    })?;
    let ledger: Option<(String, bool)> = conn
        .prepare_cached(
            "SELECT path, vanished FROM source_files WHERE transcript_id = ?1
             ORDER BY rowid DESC LIMIT 1",
        )?
        .query_row([transcript], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    match ledger {
        None => Err(Error::Invalid(format!(
            "session {} was not imported from a Claude Code file: there is none to write back \
             to (sessiondb restore writes one)",
            session.session_id
        ))),
        Some((path, true)) => Err(Error::Invalid(format!(
            "{path} was deleted since it was imported: nothing was written back \
             (sessiondb restore writes it again)"
        ))),
        Some((path, false)) => Ok((PathBuf::from(path), transcript)),
    }
}

/// Whether the session has a Claude Code file on this machine to write back to: it was
/// imported from (or restored to) a file that is there now.
///
/// # Errors
/// On a database error.
pub fn file_present(store: &Store, session: &SessionRef) -> Result<bool> {
    match source_of(store, session) {
        Ok((path, _)) => Ok(path.is_file()),
        Err(Error::Invalid(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

fn stored_bytes(store: &Store, transcript: i64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    export::write_transcript(&*store.reader()?, transcript, &mut bytes)?;
    Ok(bytes)
}

/// Checks, before a change, that Claude Code's file for `session` holds exactly the stored
/// main transcript.
///
/// # Errors
/// [`Error::Invalid`] saying why not: never imported from a file, the file deleted, Claude
/// Code wrote to it since the last import, or the database holds lines the file lacks.
pub fn check(store: &Store, session: &SessionRef) -> Result<Target> {
    let (path, transcript) = source_of(store, session)?;
    let stored = stored_bytes(store, transcript)?;
    let file = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Invalid(format!(
                "{} was deleted since it was imported: nothing was written back \
                 (sessiondb restore writes it again)",
                path.display()
            )))
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    if file == stored {
        return Ok(Target {
            path,
            transcript,
            len: stored.len(),
        });
    }
    let why = if file.starts_with(&stored) {
        format!(
            "Claude Code wrote {} bytes to {} after the last import; run `sessiondb import` \
             (or let capture run) first",
            file.len() - stored.len(),
            path.display()
        )
    } else if stored.starts_with(&file) {
        format!(
            "the database holds {} bytes that {} lacks (written by sessiondb without \
             --write-back)",
            stored.len() - file.len(),
            path.display()
        )
    } else {
        format!(
            "{} no longer holds what was imported (Claude Code rewrote it); run `sessiondb \
             import` first",
            path.display()
        )
    };
    Err(Error::Invalid(format!(
        "not written back: {why}; nothing was changed"
    )))
}

/// After the change: appends the lines the database gained to the checked file, and records
/// the file as imported. Returns the bytes appended.
///
/// # Errors
/// [`Error::Invalid`] when the file changed between [`check`] and now (the database has the
/// change, the file does not); file-system and database errors.
pub fn apply(store: &Store, target: &Target) -> Result<u64> {
    let stored = stored_bytes(store, target.transcript)?;
    let path = &target.path;
    let now = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    if now != target.len as u64 || stored.len() < target.len {
        return Err(Error::Invalid(format!(
            "{} changed while sessiondb wrote to the database; the change is stored but not \
             written back",
            path.display()
        )));
    }
    let tail = &stored[target.len..];
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    file.write_all(tail).map_err(|e| Error::io(path, e))?;
    file.sync_data().map_err(|e| Error::io(path, e))?;
    drop(file);
    crate::import::adopt_file(store, target.transcript, path)?;
    Ok(tail.len() as u64)
}

/// Writes a new session (a fork) as a file beside the Claude Code file of `source`, and
/// records it as imported. Returns its path.
///
/// # Errors
/// [`Error::Invalid`] when `source` has no Claude Code file or a file is already at the
/// fork's path; file-system and database errors.
pub fn write_new(store: &Store, source: &SessionRef, new: &SessionRef) -> Result<PathBuf> {
    let (source_path, _) = source_of(store, source)?;
    let dir = source_path.parent().unwrap_or(Path::new("."));
    let path = dir.join(export::safe_relative(&format!("{}.jsonl", new.session_id))?);
    if path.exists() {
        return Err(Error::Invalid(format!(
            "{} already exists; the fork was not written there",
            path.display()
        )));
    }
    let conn = store.reader()?;
    let transcript = export::main_transcript(&conn, new)?
        .ok_or_else(|| Error::NotFound(format!("session {} has no transcript", new.session_id)))?;
    export::write_atomically(&path, |out| {
        export::write_transcript(&conn, transcript, out)
    })?;
    drop(conn);
    crate::import::adopt_file(store, transcript, &path)?;
    Ok(path)
}
