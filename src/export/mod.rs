//! Export: rows → files, byte for byte as they were imported.

mod sqlite;

use crate::error::{Error, Result};
use crate::integrity::DamagedLine;
use crate::model::SessionRef;
use crate::store::Store;
use serde::Serialize;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

pub use sqlite::{
    main_transcript, recorded_mtime_ns, write_transcript, write_transcript_checked,
    write_transcript_mapped,
};

/// What a tree export wrote.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct ExportReport {
    /// Sessions exported.
    pub sessions: u64,
    /// Files written (transcripts, sidechains, session files).
    pub files: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Stored files not written, each with the reason naming it: a stored name that is not
    /// a safe path (from a database older than the checks of [`crate::names`]), a second
    /// stored file mapping to a path already written, a file with a damaged line (see
    /// [`crate::integrity`]; unless `force`), or a file that could not be written.
    pub skipped: Vec<String>,
    /// Lines written although they no longer match their checksum (with `force` only).
    pub damaged: Vec<DamagedLine>,
}

/// What an export does with a line whose bytes no longer match their checksum (see
/// [`crate::integrity`]).
#[derive(Debug)]
pub enum OnDamage<'a> {
    /// Stop with [`Error::Damaged`] naming it (the default).
    Fail,
    /// Write it as stored and list it here (`export --force`).
    Keep(&'a mut Vec<DamagedLine>),
}

/// Writes a session's main transcript exactly as imported.
///
/// # Errors
/// Fails when the session has no main transcript, on a damaged line ([`Error::Damaged`],
/// after the lines before it were written), or on a database or write error.
pub fn export_session(store: &Store, session: &SessionRef, out: &mut dyn Write) -> Result<u64> {
    export_session_checked(store, session, out, OnDamage::Fail)
}

/// [`export_session`] with a choice of what to do with a damaged line.
///
/// # Errors
/// As [`export_session`]; with [`OnDamage::Keep`], damaged lines are no error.
pub fn export_session_checked(
    store: &Store,
    session: &SessionRef,
    out: &mut dyn Write,
    on_damage: OnDamage<'_>,
) -> Result<u64> {
    let conn = store.reader()?;
    let _unmapped = sqlite::Unmapped::new(&conn)?;
    session_over(&mut sqlite::SqliteExport(&conn), session, out, on_damage)
}

/// [`export_tree_with`] without `force`.
///
/// # Errors
/// As [`export_tree_with`].
pub fn export_tree(store: &Store, dir: &Path, project: Option<&str>) -> Result<ExportReport> {
    export_tree_with(store, dir, project, false)
}

/// Rebuilds the projects tree under `dir`: every main transcript, sidechain, sidecar and
/// session file at its original relative path. Each file is written to a temporary name
/// and renamed, so a reader never sees half a file.
///
/// It never stops half-way over one file, and never overwrites a file it wrote: a stored
/// name that is not a safe path, a second stored file mapping to a path already written,
/// and a file that cannot be written are each skipped and listed in
/// [`ExportReport::skipped`]; everything else is exported.
///
/// A file with a line that no longer matches its checksum is skipped too, unless `force`:
/// then it is written as stored and the line listed in [`ExportReport::damaged`].
///
/// # Errors
/// Fails on a database error, or when `dir` itself cannot be created.
pub fn export_tree_with(
    store: &Store,
    dir: &Path,
    project: Option<&str>,
    force: bool,
) -> Result<ExportReport> {
    create_private_dir(dir)?;
    let conn = store.reader()?;
    let _unmapped = sqlite::Unmapped::new(&conn)?;
    tree_over(&mut sqlite::SqliteExport(&conn), dir, project, force)
}

/// What an engine answers for an export, in one read transaction.
pub(crate) trait ExportSource {
    /// Every session (of `project` only, when given): key, project folder, session id, in
    /// that order.
    fn sessions(&mut self, project: Option<&str>) -> Result<Vec<(i64, String, String)>>;
    /// The session's live main transcript.
    fn main_transcript(&mut self, session: i64) -> Result<Option<i64>>;
    /// The session's live transcripts (id, subpath), by subpath.
    fn transcripts(&mut self, session: i64) -> Result<Vec<(i64, String)>>;
    /// The session's files (id, relpath), by relpath.
    fn files(&mut self, session: i64) -> Result<Vec<(i64, String)>>;
    /// A session file's bytes.
    fn file_content(&mut self, file: i64) -> Result<Vec<u8>>;
    /// The mtime import recorded for a stored file's source ([`Recorded`]).
    fn recorded_mtime(&mut self, what: Recorded) -> Result<Option<i64>>;
    /// Writes a transcript's lines to `out` in file order; the bytes written. An engine
    /// that keeps per-line checksums checks each line and treats a damaged one as
    /// `on_damage` says.
    fn write_transcript(
        &mut self,
        transcript: i64,
        out: &mut dyn Write,
        on_damage: OnDamage<'_>,
    ) -> Result<u64>;
}

/// Writes a session's main transcript exactly as imported, from any engine.
///
/// # Errors
/// As [`export_session`].
pub(crate) fn session_over(
    src: &mut impl ExportSource,
    session: &SessionRef,
    out: &mut dyn Write,
    on_damage: OnDamage<'_>,
) -> Result<u64> {
    let transcript = src.main_transcript(session.key)?.ok_or_else(|| {
        Error::NotFound(format!(
            "session {} has no main transcript (only subagent files)",
            session.session_id
        ))
    })?;
    src.write_transcript(transcript, out, on_damage)
}

/// Rebuilds the projects tree under `dir` from any engine (the rules:
/// [`export_tree_with`]); `dir` exists.
///
/// # Errors
/// As [`export_tree_with`].
pub(crate) fn tree_over(
    src: &mut impl ExportSource,
    dir: &Path,
    project: Option<&str>,
    force: bool,
) -> Result<ExportReport> {
    let mut report = ExportReport::default();
    let mut written = HashSet::new();
    for (key, project, session) in src.sessions(project)? {
        report.sessions += 1;
        let names = crate::names::check_session(&project, &session);
        let transcripts = src.transcripts(key)?;
        let files = src.files(key)?;
        if let Err(e) = names {
            let n = transcripts.len() + files.len();
            report.skipped.push(format!(
                "session {project:?}/{session:?} ({n} files) not exported: {e}"
            ));
            continue;
        }
        for (id, subpath) in transcripts {
            let relative = if subpath.is_empty() {
                format!("{project}/{session}.jsonl")
            } else {
                format!("{project}/{session}/{subpath}.jsonl")
            };
            let outcome = claim(dir, &relative, &mut written).and_then(|path| {
                let bytes = write_transcript_file(&path, |out| {
                    let on_damage = if force {
                        OnDamage::Keep(&mut report.damaged)
                    } else {
                        OnDamage::Fail
                    };
                    src.write_transcript(id, out, on_damage)
                })?;
                set_recorded_mtime(&path, src.recorded_mtime(Recorded::Transcript(id))?)?;
                Ok(bytes)
            });
            tally(&mut report, &relative, outcome)?;
        }
        for (file_id, relpath) in files {
            let relative = format!("{project}/{session}/{relpath}");
            let outcome = claim(dir, &relative, &mut written).and_then(|path| {
                let content = src.file_content(file_id)?;
                let bytes = write_atomically(&path, |out| {
                    out.write_all(&content)
                        .map_err(|e| Error::io("<output>", e))?;
                    Ok(content.len() as u64)
                })?;
                set_recorded_mtime(&path, src.recorded_mtime(Recorded::File(file_id))?)?;
                Ok(bytes)
            });
            tally(&mut report, &relative, outcome)?;
        }
    }
    Ok(report)
}

/// The path under `dir` for a stored relative path, reserved for this export: refused when
/// the name is not a safe relative path or when another stored file already took the path.
pub(crate) fn claim(dir: &Path, relative: &str, written: &mut HashSet<PathBuf>) -> Result<PathBuf> {
    let path = dir.join(safe_relative(relative)?);
    if !written.insert(path.clone()) {
        return Err(Error::Invalid(format!(
            "another stored file was already exported to {relative:?}; not overwritten"
        )));
    }
    Ok(path)
}

/// Counts a written file, or lists a skipped one; a database error still stops the export.
pub(crate) fn tally(report: &mut ExportReport, relative: &str, outcome: Result<u64>) -> Result<()> {
    match outcome {
        Ok(bytes) => {
            report.bytes += bytes;
            report.files += 1;
            Ok(())
        }
        Err(e @ Error::Database(_)) => Err(e),
        Err(e) => {
            report
                .skipped
                .push(format!("{relative:?} not exported: {e}"));
            Ok(())
        }
    }
}

/// A stored file whose source's mtime the import ledger recorded.
#[derive(Debug, Clone, Copy)]
pub enum Recorded {
    /// A transcript (main or sub-agent).
    Transcript(i64),
    /// A session-folder file.
    File(i64),
}

/// Gives `path` the recorded mtime, when there is one: Claude Code's `--continue` and its
/// picker order sessions by mtime, so an export must not make every file the newest.
///
/// # Errors
/// Fails when the file's times cannot be set.
pub fn set_recorded_mtime(path: &Path, mtime_ns: Option<i64>) -> Result<()> {
    // Import records 0 when the file system gave no time.
    let Some(ns) = mtime_ns.filter(|&ns| ns > 0) else {
        return Ok(());
    };
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.unsigned_abs());
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    file.set_modified(time).map_err(|e| Error::io(path, e))
}

/// A stored name turned into a relative path, refusing anything that could escape `dir`.
pub(crate) fn safe_relative(name: &str) -> Result<PathBuf> {
    let path = PathBuf::from(name);
    let ok = !name.is_empty()
        && !name.contains('\0')
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(path)
    } else {
        Err(Error::Invalid(format!(
            "stored path {name:?} is not a safe relative path; refusing to export it"
        )))
    }
}

/// Writes `path` through a temporary file in the same folder and a rename, so a reader
/// never sees half a file.
///
/// # Errors
/// Fails when the folder or file cannot be written, or when `fill` fails.
pub fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<u64>,
) -> Result<u64> {
    write_atomically_unless(path, fill, |_| Ok(()))
}

/// Writes an exported transcript to `path` as [`write_atomically`] does, unless the file
/// already there holds something the export does not (issue 28, item 13): only a file
/// that is the same or a beginning of the export (an earlier export of a session that grew
/// since) is replaced. A file with more lines (Claude Code wrote to it after the last
/// import), or one that differs, is left alone and the write fails saying how, as
/// `restore` does; the temporary file is removed.
///
/// # Errors
/// As [`write_atomically`], and when a file in the way holds more or other lines.
pub fn write_transcript_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<u64>,
) -> Result<u64> {
    write_atomically_unless(path, fill, |written| refuse_newer(path, written))
}

/// [`write_atomically`] with a last look at the written temporary file before the rename.
fn write_atomically_unless(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<u64>,
    check: impl FnOnce(&std::fs::File) -> Result<()>,
) -> Result<u64> {
    let parent = path.parent().unwrap_or(Path::new("."));
    create_private_dir(parent)?;
    let mut tmp = tempfile::NamedTempFile::new_in(parent).map_err(|e| Error::io(parent, e))?;
    let written = {
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        let n = fill(&mut out)?;
        out.flush().map_err(|e| Error::io(path, e))?;
        n
    };
    check(&tmp.reopen().map_err(|e| Error::io(tmp.path(), e))?)?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(written)
}

/// Fails when the file at `path` is not the same as, or a beginning of, `export` (read
/// from its start), naming how it differs; both are compared in blocks, never held whole.
fn refuse_newer(path: &Path, export: &std::fs::File) -> Result<()> {
    use std::io::BufRead;
    let existing = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(path, e)),
    };
    if !existing
        .metadata()
        .map_err(|e| Error::io(path, e))?
        .is_file()
    {
        return Ok(()); // the rename says what is wrong with a folder in the way
    }
    let mut there = std::io::BufReader::with_capacity(1 << 16, existing);
    let mut ours = std::io::BufReader::with_capacity(1 << 16, export);
    let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
    let mut line = 1u64;
    loop {
        let a = there.fill_buf().map_err(|e| Error::io(path, e))?;
        if a.is_empty() {
            return Ok(()); // the file there is a beginning of the export
        }
        let b = ours.fill_buf().map_err(|e| Error::io(path, e))?;
        if b.is_empty() {
            let (mut extra_bytes, mut extra_lines) = (0u64, 0u64);
            loop {
                let rest = there.fill_buf().map_err(|e| Error::io(path, e))?;
                if rest.is_empty() {
                    break;
                }
                let n = rest.len();
                extra_bytes += n as u64;
                extra_lines += newlines(rest);
                there.consume(n);
            }
            return Err(Error::Invalid(format!(
                "{} has {extra_bytes} more bytes ({extra_lines} more lines) than the stored \
                 session: Claude Code wrote to it after the last import (run `sessiondb \
                 import` first); not overwritten",
                path.display()
            )));
        }
        let n = a.len().min(b.len());
        if let Some(at) = a[..n].iter().zip(&b[..n]).position(|(x, y)| x != y) {
            line += newlines(&a[..at]);
            return Err(Error::Invalid(format!(
                "{} differs from the stored session from line {line} on; not overwritten \
                 (move it away to export there)",
                path.display()
            )));
        }
        line += newlines(&a[..n]);
        there.consume(n);
        ours.consume(n);
    }
}

/// Creates folders with mode 0700, as Claude Code does for its projects tree.
pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escaping_paths() {
        assert!(safe_relative("a/b.txt").is_ok());
        assert!(safe_relative("../x").is_err());
        assert!(safe_relative("/etc/passwd").is_err());
        assert!(safe_relative("a/./b").is_ok());
        assert!(safe_relative("").is_err());
        assert!(safe_relative("a\0b").is_err());
    }
}
