//! Import: Claude Code project trees → rows. Files are written in IMMEDIATE transactions of
//! up to 16 MiB each, a file always wholly inside one.
//!
//! Every line is stored as it is. A ledger per source file (size, mtime, bytes imported and
//! a fingerprint of that prefix, see `Fingerprint`) makes an unchanged file cost one
//! `stat`, a grown file cost only its new lines (and the last [`TAIL_BYTES`] before them),
//! and a rewritten file get re-imported as a new version while the old version's rows stay
//! in the database.
//!
//! The modules: `discover` (which files, which sessions), `load` (the ledger's decision and
//! the reading, parsing ahead), `transcript` (one file's import over `TranscriptTx`,
//! for every engine), `sqlite` and `rows` (SQLite's answers and row writer), `writer`
//! (SQLite's loop of threads and transactions), `sides` (what records put in side tables).

use crate::error::{Error, Result};
use crate::model::{ImportReport, Progress};
use crate::store::Store;
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use load::load;
use load::Ahead;
use rusqlite::{params, OptionalExtension, Transaction};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod discover;
mod fingerprint;
mod load;
mod pack;
mod rows;
mod sides;
mod sqlite;
mod stream;
mod tally;
mod writer;
use writer::Run;
pub(crate) mod transcript;
pub use discover::discover_session;
pub(crate) use discover::{check_names, discover_paths};
pub use discover::{discover, Discovery, Source, SourceKind};
pub use fingerprint::{prefix_hash, TAIL_BYTES};
pub(crate) use fingerprint::{tail_start, FileView, Fingerprint, PrefixHash};
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use load::Parsed;
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use rows::line_session_id;
pub(crate) use rows::{insert_rows, insert_rows_of, project_record, project_sides, Origin};
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use sides::{side_of, Side};
pub(crate) use tally::LineTally;
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use transcript::{FileStamp, Held};

/// A ledger entry: what was imported from a source path.
#[derive(Debug, Clone)]
pub(crate) struct Ledger {
    /// The transcript or session file it was imported into.
    pub target: Option<i64>,
    pub size: i64,
    pub mtime_ns: i64,
    pub vanished: bool,
    pub imported_bytes: usize,
    pub fingerprint: Fingerprint,
}

const SELECT_LEDGER: &str = "SELECT transcript_id, session_file_id, size, mtime_ns, vanished,
        imported_bytes, prefix_hash, tail_hash
     FROM source_files WHERE path = ?1";

fn read_ledger(conn: &rusqlite::Connection, path: &str) -> Result<Option<Ledger>> {
    Ok(conn
        .prepare_cached(SELECT_LEDGER)?
        .query_row([path], |r| {
            let transcript: Option<i64> = r.get(0)?;
            let file: Option<i64> = r.get(1)?;
            Ok(Ledger {
                target: transcript.or(file),
                size: r.get(2)?,
                mtime_ns: r.get(3)?,
                vanished: r.get(4)?,
                imported_bytes: r.get::<_, i64>(5)?.max(0) as usize,
                fingerprint: Fingerprint::read(r.get(6)?, r.get(7)?),
            })
        })
        .optional()?)
}

pub(crate) fn path_key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Imports every transcript and session file under `paths`.
///
/// Soft problems (an unreadable file, malformed lines) go into the report; a database
/// error stops the import, leaving every group of files written before it committed.
///
/// Three threads share the work: a loader reads and parses the next files
/// (`load`), this one writes them in groups of `GROUP_BYTES` (16 MiB), one transaction per
/// group, and a [`crate::checkpoint::Checkpointer`] copies committed pages from the WAL into the database
/// file.
///
/// # Errors
/// Fails when a path cannot be scanned or the database cannot be written.
pub fn import_paths(
    store: &Store,
    paths: &[PathBuf],
    progress: &dyn Progress,
) -> Result<ImportReport> {
    import_paths_with(store, paths, progress, &ImportLimits::default())
}

/// Limits of what one import stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportLimits {
    /// The largest line (or session-folder file) stored, in bytes. A file with a larger one
    /// is refused whole, named in the report, and the import goes on with the others.
    pub max_value_bytes: u64,
    /// A transcript whose bytes to read are more than this is read in pieces of
    /// `piece_bytes` while it is written (inside its one transaction), not into memory
    /// whole: import's memory then follows the piece, not the file.
    pub stream_above: u64,
    /// The size of those pieces (a piece holds whole lines: more when one line is longer).
    pub piece_bytes: usize,
}

/// Transcripts larger than this are read in pieces ([`ImportLimits::stream_above`]).
/// Smaller ones are read and parsed ahead by the loading thread, which is faster.
pub const STREAM_ABOVE: u64 = 64 * 1024 * 1024;

/// The pieces a large transcript is read in ([`ImportLimits::piece_bytes`]).
pub const PIECE_BYTES: usize = 8 * 1024 * 1024;

/// The largest line a store keeps (see [`crate::codec::MAX_VALUE_BYTES`]).
pub use crate::codec::MAX_VALUE_BYTES;

impl Default for ImportLimits {
    fn default() -> Self {
        ImportLimits {
            max_value_bytes: MAX_VALUE_BYTES,
            stream_above: STREAM_ABOVE,
            piece_bytes: PIECE_BYTES,
        }
    }
}

/// [`import_paths`] with explicit [`ImportLimits`].
///
/// # Errors
/// As [`import_paths`].
pub fn import_paths_with(
    store: &Store,
    paths: &[PathBuf],
    progress: &dyn Progress,
    limits: &ImportLimits,
) -> Result<ImportReport> {
    let started = Instant::now();
    let (found, scanned_dirs) = discover_paths(paths, |path| {
        Ok(store
            .reader()?
            .prepare_cached(
                "SELECT s.session_id FROM source_files f
                 JOIN transcripts t ON t.id = f.transcript_id
                 JOIN sessions s ON s.id = t.session_id
                 WHERE f.path = ?1 ORDER BY f.rowid DESC LIMIT 1",
            )?
            .query_row([path], |r| r.get(0))
            .optional()?)
    })?;
    let how = How {
        limits,
        inline: false,
    };
    import_sources(store, found, &scanned_dirs, progress, &how, started)
}

/// The sources of `found` whose names can be stored, with their sizes, and the report's
/// first counts (files, sessions, links skipped, names refused); starts `progress`.
pub(crate) fn checked_sources(
    found: Discovery,
    progress: &dyn Progress,
) -> (ImportReport, Vec<Source>, Vec<u64>) {
    let mut report = ImportReport {
        files: found.sources.len() as u64,
        symlinks_skipped: found.skipped_links.len() as u64,
        named_by_records: found.named_by_records,
        ..ImportReport::default()
    };
    let mut sources = Vec::with_capacity(found.sources.len());
    for source in found.sources {
        match check_names(&source) {
            Ok(()) => sources.push(source),
            Err(e) => {
                report.files_failed += 1;
                report.bad_names += 1;
                report
                    .errors
                    .push(format!("{}: {e}; not imported", source.path.display()));
            }
        }
    }
    let sessions: BTreeSet<(&str, &str)> = sources
        .iter()
        .map(|s| (s.project.as_str(), s.session.as_str()))
        .collect();
    report.sessions = sessions.len() as u64;
    let sizes: Vec<u64> = sources
        .iter()
        .map(|s| std::fs::metadata(&s.path).map(|m| m.len()).unwrap_or(0))
        .collect();
    progress.start(sizes.iter().sum());
    (report, sources, sizes)
}

/// `report` with its time and rate; the progress bar closed.
pub(crate) fn finished(
    mut report: ImportReport,
    started: Instant,
    progress: &dyn Progress,
) -> ImportReport {
    report.seconds = started.elapsed().as_secs_f64();
    report.mb_per_s = if report.seconds > 0.0 {
        report.bytes_read as f64 / 1e6 / report.seconds
    } else {
        0.0
    };
    progress.finish();
    report
}

/// The ledger's paths under `dirs` whose files are gone. `paths_between(from, to)` is the
/// engine's answer: the paths not yet marked vanished from `from` up to `to`, a range of
/// the ledger's key that holds exactly one folder's entries (`dir/` up to `dir0`: '0'
/// follows '/').
///
/// # Errors
/// Fails on a database error.
pub(crate) fn gone_under(
    dirs: &[PathBuf],
    mut paths_between: impl FnMut(&str, &str) -> Result<Vec<String>>,
) -> Result<Vec<String>> {
    let mut gone = Vec::new();
    for dir in dirs {
        let dir = dir.to_string_lossy();
        let dir = dir.trim_end_matches('/');
        for path in paths_between(&format!("{dir}/"), &format!("{dir}0"))? {
            if !Path::new(&path).exists() {
                gone.push(path);
            }
        }
    }
    Ok(gone)
}

/// How [`import_sources`] runs.
struct How<'a> {
    limits: &'a ImportLimits,
    /// Everything on the calling thread, and the changed files of the session written and
    /// indexed in one transaction (see [`import_session`]); otherwise a loading thread and
    /// a [`Checkpointer`] beside the writer, for a tree.
    inline: bool,
}

/// Imports the files of one session: its main transcript `transcript`
/// (`<project>/<session>.jsonl`) and whatever its session folder holds (sub-agents, their
/// sidecars, tool results). What hook capture calls: one transcript changed, so nothing
/// else is scanned. A main transcript that does not exist is skipped (a session folder can
/// exist without one); files that vanished are marked, as a folder import does.
///
/// Everything runs on the calling thread, and the session's changed files are written,
/// indexed for search and refreshed in the catalog in one transaction: for the few new
/// lines of a turn, starting threads and a second connection cost more than the work, and
/// each further commit rewrites the same b-tree pages into the WAL again. The report's
/// `rows` is not counted (a count over the whole session).
///
/// # Errors
/// Fails when the session folder cannot be scanned or the database cannot be written.
pub fn import_session(
    store: &Store,
    transcript: &Path,
    progress: &dyn Progress,
) -> Result<ImportReport> {
    let started = Instant::now();
    let (found, scanned_dirs) = discover_session(transcript)?;
    let transcript = std::path::absolute(transcript).map_err(|e| Error::io(transcript, e))?;
    let main_gone = !transcript.exists();
    let how = How {
        limits: &ImportLimits::default(),
        inline: true,
    };
    let mut report = import_sources(store, found, &scanned_dirs, progress, &how, started)?;
    if main_gone {
        report.vanished_files += mark_gone(store, &[path_key(&transcript)])?;
    }
    Ok(report)
}

/// Records in the ledger that the file at `path` now holds exactly the stored rows of
/// `transcript`, as an import of it would have: sessiondb wrote the file itself (write-back,
/// a fork written for Claude Code), so the next import finds it unchanged instead of taking
/// the lines it already has a second time. The caller guarantees the bytes match.
///
/// # Errors
/// Fails when the file cannot be read or the database cannot be written.
pub fn adopt_file(store: &Store, transcript: i64, path: &Path) -> Result<()> {
    let path = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    let key = path_key(&path);
    let stamp = FileStamp {
        key: &key,
        size: bytes.len() as i64,
        mtime_ns,
    };
    store.write(|tx| {
        let file = FileView::whole(&bytes);
        write_ledger(tx, &stamp, Some(transcript), None, &file, bytes.len())?;
        crate::catalog::refresh_transcript(tx, transcript)
    })
}

/// What a file sessiondb wrote holds: a stored transcript or a stored session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adopted {
    /// A transcript's id.
    Transcript(i64),
    /// A session file's id.
    File(i64),
}

/// Records in the ledger, in one transaction, that each file at `path` starts with `known`,
/// the bytes sessiondb wrote there (a restore): a file that holds exactly them is then
/// unchanged to the next import, one that grew since has only its new lines imported, into
/// the stored session (see `located_session`), wherever the file is.
///
/// # Errors
/// Fails when a file cannot be read or the database cannot be written.
pub fn adopt_written(store: &Store, files: &[(Adopted, PathBuf, &[u8])]) -> Result<()> {
    let mut stamps = Vec::with_capacity(files.len());
    for (target, path, known) in files {
        let path = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
        let meta = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
        // A file that grew is stamped with no mtime, so that the next import reads it.
        let mtime_ns = if meta.len() == known.len() as u64 {
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64)
        } else {
            -1
        };
        stamps.push((*target, path_key(&path), mtime_ns, *known));
    }
    store.write(|tx| {
        for (target, key, mtime_ns, known) in &stamps {
            let stamp = FileStamp {
                key,
                size: known.len() as i64,
                mtime_ns: *mtime_ns,
            };
            let file = FileView::whole(known);
            match target {
                Adopted::Transcript(id) => {
                    write_ledger(tx, &stamp, Some(*id), None, &file, known.len())?;
                    crate::catalog::refresh_transcript(tx, *id)?;
                }
                Adopted::File(id) => write_ledger(tx, &stamp, None, Some(*id), &file, known.len())?,
            }
        }
        Ok(())
    })
}

/// Imports `sources` (found by [`discover`] or [`import_session`]); ledger entries under
/// `scanned_dirs` whose file is gone are marked vanished.
fn import_sources(
    store: &Store,
    found: Discovery,
    scanned_dirs: &[PathBuf],
    progress: &dyn Progress,
    how: &How<'_>,
    started: Instant,
) -> Result<ImportReport> {
    let (mut report, sources, sizes) = checked_sources(found, progress);
    let mut transcripts = BTreeSet::new();
    let packer = pack::packer(store, &sources, &sizes, &crate::codec::Tuning::default())?;
    let mut run = Run {
        store,
        sources: &sources,
        report: &mut report,
        transcripts: &mut transcripts,
        packer: packer.as_ref(),
    };
    if how.inline {
        run.inline(&sizes, progress, how.limits)?;
    } else {
        run.threaded(&sizes, progress, how.limits)?;
        let reader = store.reader()?;
        for id in &transcripts {
            let n: i64 = reader
                .prepare_cached("SELECT count(*) FROM rows WHERE transcript_id = ?1")?
                .query_row([id], |r| r.get(0))?;
            report.rows += n as u64;
        }
    }
    report.vanished_files = mark_vanished(store, scanned_dirs)?;
    Ok(finished(report, started, progress))
}

/// The main transcript path of the session a source belongs to: the source itself, or
/// `<project>/<session>.jsonl` beside the session folder holding it.
pub(crate) fn main_transcript_path(source: &Source) -> PathBuf {
    if source.kind == SourceKind::Main {
        return source.path.clone();
    }
    let mut dir = source.path.parent();
    while let Some(d) = dir {
        let named = |p: &Path, name: &str| p.file_name().is_some_and(|n| n == name);
        if named(d, &source.session) && d.parent().is_some_and(|p| named(p, &source.project)) {
            return d.with_file_name(format!("{}.jsonl", source.session));
        }
        dir = d.parent();
    }
    source.path.clone()
}

/// The stored session a source's file is a location of, when it is not the session of its
/// own project folder: a restore (or `launch`) into another folder records the files it
/// wrote in the ledger under the session they came from, so that importing them later
/// keeps one session with two locations instead of making a second one.
pub(super) fn located_session(tx: &Transaction<'_>, source: &Source) -> Result<Option<i64>> {
    let main = path_key(&main_transcript_path(source));
    Ok(tx
        .prepare_cached(
            "SELECT s.id FROM source_files f
             JOIN transcripts t ON t.id = f.transcript_id
             JOIN sessions s ON s.id = t.session_id
             WHERE f.path = ?1 AND s.session_id = ?2
             ORDER BY f.rowid DESC LIMIT 1",
        )?
        .query_row(params![main, source.session], |r| r.get(0))
        .optional()?)
}

/// The session row for a project folder and session id, created (with its project) when new.
pub(crate) fn upsert_session(tx: &Transaction<'_>, project: &str, session: &str) -> Result<i64> {
    tx.prepare_cached("INSERT INTO projects (key) VALUES (?1) ON CONFLICT (key) DO NOTHING")?
        .execute([project])?;
    let project_id: i64 = tx
        .prepare_cached("SELECT id FROM projects WHERE key = ?1")?
        .query_row([project], |r| r.get(0))?;
    tx.prepare_cached(
        "INSERT INTO sessions (project_id, session_id) VALUES (?1, ?2)
         ON CONFLICT (project_id, session_id) DO NOTHING",
    )?
    .execute(params![project_id, session])?;
    Ok(tx
        .prepare_cached("SELECT id FROM sessions WHERE project_id = ?1 AND session_id = ?2")?
        .query_row(params![project_id, session], |r| r.get(0))?)
}

/// Records in the ledger that the file of `stamp` was imported up to `imported` bytes,
/// which `file` must hold the last [`TAIL_BYTES`] of.
fn write_ledger(
    tx: &Transaction<'_>,
    stamp: &FileStamp<'_>,
    transcript: Option<i64>,
    session_file: Option<i64>,
    file: &FileView<'_>,
    imported: usize,
) -> Result<()> {
    let fingerprint = Fingerprint::of(file, imported).ok_or_else(|| {
        Error::Invalid(format!(
            "{}: the end of what was imported was not read (a bug)",
            stamp.key
        ))
    })?;
    let (prefix_column, tail_column) = fingerprint.columns();
    tx.prepare_cached(
        "INSERT INTO source_files (path, transcript_id, session_file_id, size, mtime_ns,
            imported_bytes, prefix_hash, tail_hash, vanished)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)
         ON CONFLICT (path) DO UPDATE SET
            transcript_id = excluded.transcript_id, session_file_id = excluded.session_file_id,
            size = excluded.size, mtime_ns = excluded.mtime_ns,
            imported_bytes = excluded.imported_bytes, prefix_hash = excluded.prefix_hash,
            tail_hash = excluded.tail_hash, vanished = 0",
    )?
    .execute(params![
        stamp.key,
        transcript,
        session_file,
        stamp.size,
        stamp.mtime_ns,
        imported as i64,
        prefix_column,
        tail_column
    ])?;
    Ok(())
}

/// How many `\n` are in `bytes`.
pub(crate) fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// How many `\n` the file holds before byte `at`: those `file` holds, and those before it
/// read from the file at `path` (only for the line number of a malformed line).
pub(crate) fn newlines_before(path: &Path, file: &FileView<'_>, at: usize) -> Result<u64> {
    let mut count = newlines(file.range(file.base, at).unwrap_or_default());
    if file.base > 0 {
        use std::io::Read;
        let mut head = std::fs::File::open(path)
            .map_err(|e| Error::io(path, e))?
            .take(file.base as u64);
        let mut block = vec![0u8; 1 << 16];
        loop {
            let n = head.read(&mut block).map_err(|e| Error::io(path, e))?;
            if n == 0 {
                break;
            }
            count += newlines(&block[..n]);
        }
    }
    Ok(count)
}

/// Reads the whole file at `path` into `buf`.
pub(crate) fn read_whole(path: &Path, buf: &mut Vec<u8>) -> Result<()> {
    use std::io::Read;
    buf.clear();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(buf))
        .map_err(|e| Error::io(path, e))?;
    Ok(())
}

/// Marks ledger entries under the scanned folders whose file is gone. Rows are kept.
fn mark_vanished(store: &Store, dirs: &[PathBuf]) -> Result<u64> {
    if dirs.is_empty() {
        return Ok(0);
    }
    let gone = {
        let reader = store.reader()?;
        let mut stmt = reader.prepare_cached(
            "SELECT path FROM source_files WHERE path >= ?1 AND path < ?2 AND vanished = 0",
        )?;
        gone_under(dirs, |from, to| {
            Ok(stmt
                .query_map([from, to], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?)
        })?
    };
    mark_gone(store, &gone)
}

/// Marks the ledger entries of `gone` (source paths) vanished, keeping their rows; paths
/// without an entry, or already marked, are skipped. Returns how many were marked.
fn mark_gone(store: &Store, gone: &[String]) -> Result<u64> {
    let gone: Vec<&String> = {
        let reader = store.reader()?;
        let mut stmt =
            reader.prepare_cached("SELECT 1 FROM source_files WHERE path = ?1 AND vanished = 0")?;
        let mut known = Vec::new();
        for path in gone {
            if stmt.exists([path])? {
                known.push(path);
            }
        }
        known
    };
    if gone.is_empty() {
        return Ok(0);
    }
    store.write(|tx| {
        for path in &gone {
            tx.prepare_cached("UPDATE source_files SET vanished = 1 WHERE path = ?1")?
                .execute([path])?;
            let transcript: Option<i64> = tx
                .prepare_cached("SELECT transcript_id FROM source_files WHERE path = ?1")?
                .query_row([path], |r| r.get(0))?;
            if let Some(id) = transcript {
                crate::catalog::refresh_transcript(tx, id)?;
            }
        }
        Ok(())
    })?;
    Ok(gone.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::prefix_hash;

    #[test]
    fn prefix_hash_sees_every_byte() {
        let base: Vec<u8> = (0..100u8).collect();
        for len in 0..base.len() {
            let h = prefix_hash(&base[..len]);
            for at in 0..len {
                let mut changed = base[..len].to_vec();
                changed[at] ^= 1;
                assert_ne!(prefix_hash(&changed), h, "len {len}, byte {at}");
            }
            if len > 0 {
                assert_ne!(prefix_hash(&base[..len - 1]), h, "len {len}");
            }
        }
    }

    #[test]
    fn prefix_hash_is_stable() {
        // Stored in the ledger: a change here makes every imported file look rewritten.
        assert_eq!(prefix_hash(b"{\"type\":\"user\"}\n"), PINNED);
    }

    const PINNED: i64 = 7_786_698_329_606_925_249;
}
