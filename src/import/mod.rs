//! Import: Claude Code project trees → rows. Files are written in IMMEDIATE transactions of
//! up to 16 MiB each, a file always wholly inside one.
//!
//! Every line is stored as it is. A ledger per source file (size, mtime, bytes imported and
//! a fingerprint of that prefix, see `Fingerprint`) makes an unchanged file cost one
//! `stat`, a grown file cost only its new lines (and the last [`TAIL_BYTES`] before them),
//! and a rewritten file get re-imported as a new version while the old version's rows stay
//! in the database.

use crate::checkpoint::Checkpointer;
use crate::error::{Error, Result};
use crate::jsonl::{self, Envelope, LineStatus};
use crate::model::{ImportReport, Progress};
use crate::search::PendingTexts;
use crate::store::Store;
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use load::load;
pub(crate) use load::Loaded;
use load::{Ahead, ReadFile};
use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

mod fingerprint;
mod load;
mod sqlite;
mod stream;
mod tally;
pub(crate) mod transcript;
pub use fingerprint::{prefix_hash, TAIL_BYTES};
pub(crate) use fingerprint::{tail_start, FileView, Fingerprint, PrefixHash};
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use load::Parsed;
use sqlite::SqliteTx;
pub(crate) use tally::LineTally;
#[cfg_attr(not(feature = "postgres"), allow(unused_imports))]
pub(crate) use transcript::{FileStamp, Held};

/// What a source file is to its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    /// `<project>/<session>.jsonl`.
    Main,
    /// `<project>/<session>/subagents/[<dir>/]agent-<id>.jsonl`.
    Sidechain {
        /// The path inside the session folder, without `.jsonl`.
        subpath: String,
        /// The agent id from the file name.
        agent_id: String,
    },
    /// Any other file of the session folder (`tool-results/*`, `*.meta.json`, ...).
    File {
        /// The path inside the session folder.
        relpath: String,
    },
}

/// A file found under an import path.
#[derive(Debug, Clone)]
pub struct Source {
    /// Where it is.
    pub path: PathBuf,
    /// Its project folder name.
    pub project: String,
    /// Its session id.
    pub session: String,
    /// What it is.
    pub kind: SourceKind,
}

impl SourceKind {
    /// The transcript subpath: `""` for a main transcript.
    pub(crate) fn subpath(&self) -> &str {
        match self {
            SourceKind::Main => "",
            SourceKind::Sidechain { subpath, .. } => subpath,
            SourceKind::File { relpath } => relpath,
        }
    }
}

/// What a scan of an import path found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The transcripts and session files, in path order.
    pub sources: Vec<Source>,
    /// Symbolic links inside the scanned folders: never followed, so that a link in a
    /// projects tree cannot pull in `/etc` or a tree elsewhere.
    pub skipped_links: Vec<PathBuf>,
    /// Transcripts named by path whose file name is not a session id, given the id their
    /// records carry (see [`discover`]).
    pub named_by_records: Vec<crate::model::NamedByRecords>,
}

/// Finds the transcripts and session files under `path`: a `.jsonl` file, a project folder
/// or a projects root (a folder of project folders). `path` itself is followed when it is a
/// symbolic link (the user named it); links found inside it are skipped and listed.
///
/// # Errors
/// Fails when `path` cannot be read or is a file that is not `.jsonl`.
pub fn discover(path: &Path) -> Result<Discovery> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mut found = Discovery::default();
    if meta.is_file() {
        let mut source = classify_file(path)?;
        // `import copy.jsonl`: Claude Code names a transcript by its session id, and every
        // record carries it; a file renamed by hand keeps its session.
        if source.kind == SourceKind::Main && !crate::names::is_session_id(&source.session) {
            if let Some(id) = recorded_session_id(&source.path)? {
                found.named_by_records.push(crate::model::NamedByRecords {
                    path: source.path.clone(),
                    session_id: id.clone(),
                });
                source.session = id;
            }
        }
        found.sources.push(source);
    } else if is_project_dir(path)? {
        discover_project(path, &mut found)?;
    } else {
        for entry in sorted_entries(path)? {
            let meta = std::fs::symlink_metadata(&entry).map_err(|e| Error::io(&entry, e))?;
            if meta.is_symlink() {
                found.skipped_links.push(entry);
            } else if meta.is_dir() {
                discover_project(&entry, &mut found)?;
            }
        }
    }
    Ok(found)
}

/// Leaves a file named by its records under its own name when another main transcript of
/// the same import is already that session's (two copies of one session named on one
/// command line): one file per session transcript.
pub(crate) fn settle_names(found: &mut Discovery) {
    let mut named: std::collections::HashSet<(String, String)> = found
        .sources
        .iter()
        .filter(|s| s.kind == SourceKind::Main)
        .filter(|s| !found.named_by_records.iter().any(|n| n.path == s.path))
        .map(|s| (s.project.clone(), s.session.clone()))
        .collect();
    let mut kept = Vec::new();
    for source in &mut found.sources {
        let Some(at) = found
            .named_by_records
            .iter()
            .position(|n| n.path == source.path)
        else {
            continue;
        };
        if named.insert((source.project.clone(), source.session.clone())) {
            kept.push(found.named_by_records[at].clone());
        } else {
            source.session = file_stem(&source.path);
        }
    }
    found.named_by_records = kept;
}

/// Keeps a file named by its records in the session an earlier import stored it under
/// (`stored_under` reads the ledger): a file imported before its first message was written
/// kept its name, and must not become a second session as it grows.
pub(crate) fn keep_stored_names(
    found: &mut Discovery,
    stored_under: impl Fn(&str) -> Result<Option<String>>,
) -> Result<()> {
    let mut kept = Vec::new();
    for named in std::mem::take(&mut found.named_by_records) {
        match stored_under(&path_key(&named.path))? {
            Some(before) if before != named.session_id => {
                for source in &mut found.sources {
                    if source.path == named.path {
                        source.session = before.clone();
                    }
                }
            }
            _ => kept.push(named),
        }
    }
    found.named_by_records = kept;
    Ok(())
}

/// Whether `path` is a folder, not following a symbolic link.
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Checks the names a source would be stored under (see [`crate::names`]).
pub(crate) fn check_names(source: &Source) -> Result<()> {
    crate::names::check_session(&source.project, &source.session)?;
    match &source.kind {
        SourceKind::Main => Ok(()),
        SourceKind::Sidechain { subpath, .. } => crate::names::check_subpath(subpath),
        SourceKind::File { relpath } => crate::names::check_subpath(relpath),
    }
}

fn classify_file(path: &Path) -> Result<Source> {
    if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
        return Err(Error::Invalid(format!(
            "{} is not a .jsonl transcript, a project folder or a projects folder",
            path.display()
        )));
    }
    let abs = std::path::absolute(path).map_err(|e| Error::io(path, e))?;
    let parts: Vec<String> = abs
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let stem = file_stem(&abs);
    if let Some(i) = parts.iter().rposition(|p| p == "subagents") {
        if i >= 2 && stem.starts_with("agent-") {
            let subpath = parts[i..].join("/");
            let subpath = subpath.trim_end_matches(".jsonl").to_owned();
            return Ok(Source {
                project: parts[i - 2].clone(),
                session: parts[i - 1].clone(),
                kind: SourceKind::Sidechain {
                    agent_id: stem.trim_start_matches("agent-").to_owned(),
                    subpath,
                },
                path: abs,
            });
        }
    }
    let project = parts
        .len()
        .checked_sub(2)
        .map(|i| parts[i].clone())
        .unwrap_or_default();
    Ok(Source {
        project,
        session: stem,
        kind: SourceKind::Main,
        path: abs,
    })
}

/// The session a transcript's records say they belong to: the `sessionId` of its first user
/// or assistant record outside sub-agents, when that is a session id. The first, not the
/// last: it stays the same as the file grows (a transcript continued by an old CLI holds
/// the older session's records first, then its own).
fn recorded_session_id(path: &Path) -> Result<Option<String>> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut found = None;
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line.map_err(|e| Error::io(path, e))?;
        if memchr::memmem::find(&line, b"\"sessionId\"").is_none() {
            continue;
        }
        let Ok(record) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let kind = record.get("type").and_then(Value::as_str);
        let sidechain = record.get("isSidechain").and_then(Value::as_bool) == Some(true);
        match record.get("sessionId").and_then(Value::as_str) {
            Some(id) if matches!(kind, Some("user" | "assistant")) && !sidechain => {
                found = Some(id.to_owned());
                break;
            }
            _ => {}
        }
    }
    Ok(found.filter(|id| crate::names::is_session_id(id)))
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A project folder holds transcripts directly, or session folders with subagents/tool results.
fn is_project_dir(dir: &Path) -> Result<bool> {
    for entry in sorted_entries(dir)? {
        let Ok(meta) = std::fs::symlink_metadata(&entry) else {
            continue;
        };
        if entry.extension().is_some_and(|e| e == "jsonl") && meta.is_file() {
            return Ok(true);
        }
        if meta.is_dir()
            && (is_real_dir(&entry.join("subagents")) || is_real_dir(&entry.join("tool-results")))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

fn discover_project(dir: &Path, found: &mut Discovery) -> Result<()> {
    let abs = std::path::absolute(dir).map_err(|e| Error::io(dir, e))?;
    let project = abs
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for entry in sorted_entries(&abs)? {
        let meta = std::fs::symlink_metadata(&entry).map_err(|e| Error::io(&entry, e))?;
        if meta.is_symlink() {
            found.skipped_links.push(entry);
        } else if meta.is_file() && entry.extension().is_some_and(|e| e == "jsonl") {
            found.sources.push(Source {
                session: file_stem(&entry),
                project: project.clone(),
                kind: SourceKind::Main,
                path: entry,
            });
        } else if meta.is_dir() {
            let session = entry
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            discover_session_dir(&entry, &entry, &project, &session, found)?;
        }
    }
    Ok(())
}

fn discover_session_dir(
    root: &Path,
    dir: &Path,
    project: &str,
    session: &str,
    found: &mut Discovery,
) -> Result<()> {
    for entry in sorted_entries(dir)? {
        let meta = std::fs::symlink_metadata(&entry).map_err(|e| Error::io(&entry, e))?;
        if meta.is_symlink() {
            found.skipped_links.push(entry);
            continue;
        }
        if meta.is_dir() {
            discover_session_dir(root, &entry, project, session, found)?;
            continue;
        }
        if !meta.is_file() {
            continue;
        }
        let rel = entry
            .strip_prefix(root)
            .expect("entries are under their root")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let name = file_stem(&entry);
        let kind = if rel.starts_with("subagents/")
            && name.starts_with("agent-")
            && entry.extension().is_some_and(|e| e == "jsonl")
        {
            SourceKind::Sidechain {
                agent_id: name.trim_start_matches("agent-").to_owned(),
                subpath: rel.trim_end_matches(".jsonl").to_owned(),
            }
        } else {
            SourceKind::File { relpath: rel }
        };
        found.sources.push(Source {
            path: entry,
            project: project.to_owned(),
            session: session.to_owned(),
            kind,
        });
    }
    Ok(())
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        out.push(entry.map_err(|e| Error::io(dir, e))?.path());
    }
    out.sort();
    Ok(out)
}

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

/// Bytes of files the writer commits before it waits for the checkpointer to copy them all
/// (see [`Checkpointer::keep_up`]): the WAL grows to about this much, times the pages every
/// transaction rewrites, and then starts over.
/// Measured: 32, 64 and 128 MiB alike; 16 MiB slower.
const KEEP_UP_BYTES: u64 = 64 * 1024 * 1024;

/// Bytes of files written together in one transaction. Every commit rewrites the last
/// pages of each b-tree it touched (tens of pages, whatever the file's size), so small
/// files share one; a file is never split over two, so `kill -9` still leaves whole files
/// only, and the ledger of a file that was not committed makes the next import take it.
/// Measured: the 10,000-session tree (1.15 GB) 19–21 s → 11 s, with 4 and 16 MiB alike
/// and 64 MiB slower (less overlap with the loader).
const GROUP_BYTES: u64 = 16 * 1024 * 1024;

/// Files the loading thread may read and parse ahead of the writer: enough to keep it busy
/// while the writer indexes a search batch.
const LOAD_AHEAD: usize = 16;

/// Buffers the loading thread keeps for reuse.
const SPARE_BUFFERS: usize = 4;

/// Bytes of files read ahead that the loading thread may hold at once.
const LOAD_AHEAD_BYTES: usize = 256 * 1024 * 1024;

/// Imports every transcript and session file under `paths`.
///
/// Soft problems (an unreadable file, malformed lines) go into the report; a database
/// error stops the import, leaving every group of files written before it committed.
///
/// Three threads share the work: a loader reads and parses the next files
/// (`load`), this one writes them in groups of `GROUP_BYTES` (16 MiB), one transaction per
/// group, and a [`Checkpointer`] copies committed pages from the WAL into the database
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

/// SQLite's default limit on one string or blob (`SQLITE_MAX_LENGTH`, 10^9 bytes), less
/// room for the other columns of the line's row, which the same limit bounds.
pub const MAX_VALUE_BYTES: u64 = 1_000_000_000 - 1024 * 1024;

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

/// What the files under `paths` are (see [`discover`]), their names settled, and the
/// folders scanned whole, whose ledger entries of files now gone are marked vanished.
/// `stored_session` is the engine's answer to which session a path's stored copy belongs
/// to (see [`keep_stored_names`]).
///
/// # Errors
/// Fails when a path cannot be scanned or on a database error.
pub(crate) fn discover_paths(
    paths: &[PathBuf],
    stored_session: impl Fn(&str) -> Result<Option<String>>,
) -> Result<(Discovery, Vec<PathBuf>)> {
    let mut found = Discovery::default();
    let mut scanned_dirs = Vec::new();
    for path in paths {
        let more = discover(path)?;
        found.sources.extend(more.sources);
        found.skipped_links.extend(more.skipped_links);
        found.named_by_records.extend(more.named_by_records);
        if path.is_dir() {
            scanned_dirs.push(std::path::absolute(path).map_err(|e| Error::io(path, e))?);
        }
    }
    settle_names(&mut found);
    keep_stored_names(&mut found, stored_session)?;
    Ok((found, scanned_dirs))
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

/// The files of one session: its main transcript (when it exists) and what its session
/// folder holds, with that folder as the one scanned (its files that are gone are marked
/// vanished). What [`import_session`] and the team store's session import read.
///
/// # Errors
/// Fails when the session folder cannot be scanned.
pub fn discover_session(transcript: &Path) -> Result<(Discovery, Vec<PathBuf>)> {
    let transcript = std::path::absolute(transcript).map_err(|e| Error::io(transcript, e))?;
    let mut found = Discovery::default();
    if transcript.is_file() {
        found.sources.push(classify_file(&transcript)?);
    }
    let folder = transcript.with_extension("");
    let mut scanned_dirs = Vec::new();
    if folder.is_dir() && folder != transcript {
        let project_dir = folder.parent().unwrap_or(Path::new("/"));
        let project = project_dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        discover_session_dir(
            &folder,
            &folder,
            &project,
            &file_stem(&transcript),
            &mut found,
        )?;
        scanned_dirs.push(folder);
    }
    Ok((found, scanned_dirs))
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
    let mut run = Run {
        store,
        sources: &sources,
        report: &mut report,
        transcripts: &mut transcripts,
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

/// One import's writer side: the sources, and what it found so far.
struct Run<'a> {
    store: &'a Store,
    sources: &'a [Source],
    report: &'a mut ImportReport,
    transcripts: &'a mut BTreeSet<i64>,
}

impl Run<'_> {
    /// Accounts for one loaded source; a file that was read joins `group`.
    fn take(&mut self, index: usize, loaded: Loaded, group: &mut Group) {
        let source = &self.sources[index];
        let transcripts = &mut *self.transcripts;
        let noted = |target: Option<i64>| {
            if let Some(id) = target {
                note_transcript(source, id, transcripts);
            }
        };
        if let Some(file) = loaded.into_write(self.report, noted) {
            group.push(index, file);
        }
    }

    /// Writes `group` (see [`write_group`]); returns the buffers for reuse.
    fn write(
        &mut self,
        group: &mut Group,
        texts: &mut PendingTexts,
        index_now: bool,
    ) -> Result<Vec<Vec<u8>>> {
        let written = write_group(
            self.store,
            self.sources,
            group,
            texts,
            self.report,
            index_now,
        )?;
        Ok(written
            .into_iter()
            .map(|(index, id, buf)| {
                note_transcript(&self.sources[index], id, self.transcripts);
                buf
            })
            .collect())
    }

    /// A session: loads each file on this thread, and writes what changed in one
    /// transaction (more only past [`GROUP_BYTES`]), indexing its lines for search in the
    /// last one. A session where nothing changed costs no write transaction.
    fn inline(
        &mut self,
        sizes: &[u64],
        progress: &dyn Progress,
        limits: &ImportLimits,
    ) -> Result<()> {
        let mut texts = PendingTexts::new();
        let mut group = Group::default();
        let mut spare = Vec::new();
        let count = self.sources.len();
        for (index, size) in sizes.iter().enumerate() {
            let source = &self.sources[index];
            let loaded = load_here(self.store, source, spare.pop().unwrap_or_default(), limits)?;
            self.take(index, loaded, &mut group);
            progress.advance(*size, &source.path.to_string_lossy());
            let last = index + 1 == count;
            if group.bytes < GROUP_BYTES && !last {
                continue;
            }
            spare = self.write(&mut group, &mut texts, last)?;
            spare.truncate(1);
        }
        if !texts.is_empty() {
            // An earlier group's lines, when the last group had nothing to write.
            crate::search::catch_up_with(self.store, &mut texts)?;
        }
        Ok(())
    }

    /// A tree: three threads share the work: a loader reads and parses the next files
    /// (`load`), this one writes them in groups of [`GROUP_BYTES`], one transaction per
    /// group, and a [`Checkpointer`] copies committed pages from the WAL into the
    /// database file.
    fn threaded(
        &mut self,
        sizes: &[u64],
        progress: &dyn Progress,
        limits: &ImportLimits,
    ) -> Result<()> {
        let store = self.store;
        let checkpointer = Checkpointer::start(store, None)?;
        let imported = std::thread::scope(|scope| {
            let (ready, loaded) = mpsc::sync_channel::<Result<Loaded>>(LOAD_AHEAD);
            // Buffers come back from the writer: fresh memory is slow to fault in.
            let (give_back, returned) = mpsc::channel::<Vec<u8>>();
            let sources = self.sources;
            scope.spawn(move || {
                let mut spare = Vec::new();
                let mut in_flight = 0usize;
                for source in sources {
                    // Stay within the memory budget: wait for the writer to give buffers back.
                    loop {
                        let back = if in_flight > LOAD_AHEAD_BYTES {
                            returned.recv().ok()
                        } else {
                            returned.try_recv().ok()
                        };
                        let Some(buf) = back else { break };
                        // A buffer the writer grew (a file read again whole) counts as
                        // what it holds now.
                        in_flight = in_flight.saturating_sub(buf.len());
                        if spare.len() < SPARE_BUFFERS {
                            spare.push(buf);
                        }
                    }
                    let loaded = load_here(store, source, spare.pop().unwrap_or_default(), limits);
                    if let Ok(Loaded::Read(file)) = &loaded {
                        in_flight += file.bytes.len();
                    }
                    if ready.send(loaded).is_err() {
                        break;
                    }
                }
            });
            let mut texts = PendingTexts::new();
            let mut unindexed = 0u64;
            let mut group = Group::default();
            let mut loaded = loaded.into_iter();
            for (index, (source, size)) in sources.iter().zip(sizes).enumerate() {
                let Some(next) = loaded.next() else { break };
                self.take(index, next?, &mut group);
                progress.advance(*size, &source.path.to_string_lossy());
                if group.bytes < GROUP_BYTES && index + 1 < sources.len() {
                    continue;
                }
                let read_before = self.report.bytes_read;
                for buf in self.write(&mut group, &mut texts, false)? {
                    let _ = give_back.send(buf);
                }
                let read = self.report.bytes_read - read_before;
                checkpointer.committed(read);
                checkpointer.keep_up(KEEP_UP_BYTES);
                // New lines wait in the search queue; index them in large batches.
                unindexed += read;
                if unindexed >= crate::search::CATCH_UP_BYTES {
                    crate::search::catch_up_with(store, &mut texts)?;
                    checkpointer.request();
                    unindexed = 0;
                }
            }
            crate::search::catch_up_with(store, &mut texts).map(drop)
        });
        let stopped = checkpointer.stop(store);
        imported?;
        stopped
    }
}

/// Files read and waiting to be written together, in file order.
#[derive(Default)]
struct Group {
    /// Each file's index in the source list, with what the loader read.
    files: Vec<(usize, ReadFile)>,
    bytes: u64,
}

impl Group {
    fn push(&mut self, index: usize, file: ReadFile) {
        self.bytes += file.pieces.map_or(file.bytes.len() as u64, |p| p.size);
        self.files.push((index, file));
    }
}

/// Remembers a transcript the import touched (for the row count of the summary).
fn note_transcript(source: &Source, id: i64, transcripts: &mut BTreeSet<i64>) {
    if !matches!(source.kind, SourceKind::File { .. }) {
        transcripts.insert(id);
    }
}

/// Writes a group of files that were read, in one transaction: each file is wholly in it,
/// so a file is never half imported. With `index_now`, the lines queued for the full-text
/// index are indexed in the same transaction. Empties the group and returns, for each
/// file, its index, its transcript or file id, and its buffer for reuse.
fn write_group(
    store: &Store,
    sources: &[Source],
    group: &mut Group,
    texts: &mut PendingTexts,
    report: &mut ImportReport,
    index_now: bool,
) -> Result<Vec<(usize, i64, Vec<u8>)>> {
    let files = std::mem::take(&mut group.files);
    group.bytes = 0;
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let mut written = Vec::with_capacity(files.len());
    store.write(|tx| {
        // A session's catalog row is refreshed once, after all its files of the group.
        let mut touched = BTreeSet::new();
        for (index, file) in files {
            let mut sink = SqliteTx::new(tx, texts);
            let file = match transcript::write_file(&mut sink, &sources[index], file, report)? {
                Ok(file) => file,
                Err(why) => unreachable!("a store of one machine refused a version: {why}"),
            };
            touched.insert(file.session);
            written.push((index, file.id, file.buf));
        }
        for session in touched {
            crate::catalog::refresh_session(tx, session)?;
        }
        if index_now {
            crate::search::index_pending_with(tx, texts)?;
            texts.clear();
        }
        Ok(())
    })?;
    Ok(written)
}

/// [`load::load`] with the ledger read on a reader connection: a guess the writer checks in
/// its transaction (see [`load`]).
fn load_here(
    store: &Store,
    source: &Source,
    bytes: Vec<u8>,
    limits: &ImportLimits,
) -> Result<Loaded> {
    load::load(
        source,
        |key| read_ledger(&*store.reader()?, key),
        bytes,
        limits,
    )
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

fn create_transcript(
    tx: &Transaction<'_>,
    session: i64,
    subpath: &str,
    agent_id: Option<&str>,
) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO transcripts (session_id, subpath, agent_id) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![session, subpath, agent_id])?;
    Ok(tx.last_insert_rowid())
}

fn set_project_cwd(tx: &Transaction<'_>, session: i64, cwd: &str) -> Result<()> {
    tx.prepare_cached(
        "UPDATE projects SET cwd = ?2
         WHERE id = (SELECT project_id FROM sessions WHERE id = ?1) AND cwd IS NULL",
    )?
    .execute(params![session, cwd])?;
    Ok(())
}

/// One line written by sessiondb itself (`local = 1`, see migration V8).
const INSERT_ROW: &str = "INSERT INTO rows (transcript_id, ordinal, raw, terminated, status, type, uuid,
    parent_uuid, logical_parent_uuid, is_sidechain, entry_session_id, agent_id, timestamp, subtype,
    message_id, role, is_meta, is_compact_summary, is_api_error, source_tool_assistant_uuid,
    unknown_type, unknown_fields, local, checksum)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, 1, ?23)";

/// Lines per multi-row `INSERT` of import. Every statement that inserts into `rows` opens
/// a statement journal (the table has triggers), which copies each page it touches first:
/// one statement per line made that a large share of import time.
const ROW_BATCH: usize = 64;

/// Import's prepared statements: the multi-row inserts of every power of two up to
/// [`ROW_BATCH`] beside the per-file and per-record ones.
const STATEMENT_CACHE: usize = 64;

/// The columns [`insert_rows`] binds per line.
const ROW_PARAMS: usize = 25;

/// Where the lines [`insert_rows`] stores come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Read from a source file.
    Imported,
    /// Written by sessiondb (append, tag, rename, fork, a SessionStore append): carried over
    /// when a re-import replaces the transcript (see [`carry_local_rows`]).
    Local,
}

/// Stores `lines` with their projected columns under ids `first..`, in statements of
/// [`ROW_BATCH`] or fewer lines (powers of two, so that few distinct statements are cached).
/// A line's `sessionId` is projected only when it differs from its session's own id (see
/// [`line_session_id`]).
pub(crate) fn insert_rows(
    tx: &Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    first: i64,
    lines: &[(jsonl::Line<'_>, LineStatus, Envelope<'_>)],
    origin: Origin,
) -> Result<()> {
    let own = own_session_id(tx, transcript)?;
    insert_rows_of(
        tx,
        transcript,
        ordinal,
        first,
        lines,
        origin,
        own.as_deref(),
    )
}

/// A line as [`insert_rows_of`] stores it: its bytes, status and projection.
pub(crate) trait RowLine {
    /// The line, its status and its projection.
    fn parts(&self) -> (&jsonl::Line<'_>, LineStatus, &Envelope<'_>);
}

impl RowLine for (jsonl::Line<'_>, LineStatus, Envelope<'_>) {
    fn parts(&self) -> (&jsonl::Line<'_>, LineStatus, &Envelope<'_>) {
        (&self.0, self.1, &self.2)
    }
}

impl RowLine for Parsed<'_> {
    fn parts(&self) -> (&jsonl::Line<'_>, LineStatus, &Envelope<'_>) {
        (&self.0, self.1, &self.2)
    }
}

/// [`insert_rows`] for a transcript of the session whose id is `own`.
pub(crate) fn insert_rows_of(
    tx: &Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    first: i64,
    lines: &[impl RowLine],
    origin: Origin,
    own: Option<&str>,
) -> Result<()> {
    let mut done = 0;
    while done < lines.len() {
        let n = (lines.len() - done).min(ROW_BATCH);
        let n = 1 << n.ilog2();
        let one = format!("({})", vec!["?"; ROW_PARAMS].join(", "));
        let sql = format!(
            "INSERT INTO rows (id, transcript_id, ordinal, raw, terminated, status, type, uuid,
                parent_uuid, logical_parent_uuid, is_sidechain, entry_session_id, agent_id,
                timestamp, subtype, message_id, role, is_meta, is_compact_summary, is_api_error,
                source_tool_assistant_uuid, unknown_type, unknown_fields, local, checksum)
                VALUES {}",
            vec![one; n].join(", ")
        );
        let mut stmt = tx.prepare_cached(&sql)?;
        for (k, row_line) in lines[done..done + n].iter().enumerate() {
            let (line, status, env) = row_line.parts();
            let i = done + k;
            let at = k * ROW_PARAMS;
            let unknown_type = status == LineStatus::Record && !env.has_known_type();
            stmt.raw_bind_parameter(at + 1, first + i as i64)?;
            stmt.raw_bind_parameter(at + 2, transcript)?;
            stmt.raw_bind_parameter(at + 3, ordinal + i as i64)?;
            stmt.raw_bind_parameter(at + 4, line.bytes)?;
            stmt.raw_bind_parameter(at + 5, line.terminated)?;
            stmt.raw_bind_parameter(at + 6, status as i64)?;
            stmt.raw_bind_parameter(at + 7, env.kind.as_deref())?;
            stmt.raw_bind_parameter(at + 8, env.uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 9, env.parent_uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 10, env.logical_parent_uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 11, env.is_sidechain)?;
            stmt.raw_bind_parameter(at + 12, line_session_id(env, own))?;
            stmt.raw_bind_parameter(at + 13, env.agent_id.as_deref())?;
            stmt.raw_bind_parameter(at + 14, env.timestamp.as_deref())?;
            stmt.raw_bind_parameter(at + 15, env.subtype.as_deref())?;
            stmt.raw_bind_parameter(at + 16, env.message_id.as_deref())?;
            stmt.raw_bind_parameter(at + 17, env.role.as_deref())?;
            stmt.raw_bind_parameter(at + 18, env.is_meta)?;
            stmt.raw_bind_parameter(at + 19, env.is_compact_summary)?;
            stmt.raw_bind_parameter(at + 20, env.is_api_error)?;
            stmt.raw_bind_parameter(at + 21, env.source_tool_assistant_uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 22, unknown_type)?;
            stmt.raw_bind_parameter(at + 23, env.unknown_fields)?;
            stmt.raw_bind_parameter(at + 24, origin == Origin::Local)?;
            stmt.raw_bind_parameter(at + 25, crate::integrity::line_checksum(line.bytes))?;
        }
        stmt.raw_execute()?;
        done += n;
    }
    Ok(())
}

/// The session id of the session a transcript belongs to.
fn own_session_id(tx: &Transaction<'_>, transcript: i64) -> Result<Option<String>> {
    Ok(tx
        .prepare_cached(
            "SELECT s.session_id FROM transcripts t JOIN sessions s ON s.id = t.session_id
             WHERE t.id = ?1",
        )?
        .query_row([transcript], |r| r.get(0))
        .optional()?)
}

/// What `rows.entry_session_id` holds for a line: its `sessionId` when that differs from
/// `own`, the id of the session the line is stored under, and NULL when it is the same or
/// absent. Nearly every line repeats its session's id; storing it once per line was 1 % of
/// the database, and no query needs it (the line itself keeps it, byte for byte).
pub(crate) fn line_session_id<'e>(env: &'e Envelope<'_>, own: Option<&str>) -> Option<&'e str> {
    env.session_id.as_deref().filter(|id| Some(*id) != own)
}

/// Stores one line with its projected columns; returns the row id.
pub(crate) fn insert_row(
    tx: &Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    line: jsonl::Line<'_>,
    status: LineStatus,
    env: &Envelope<'_>,
) -> Result<i64> {
    let unknown_type = status == LineStatus::Record && !env.has_known_type();
    let own = own_session_id(tx, transcript)?;
    tx.prepare_cached(INSERT_ROW)?.execute(params![
        transcript,
        ordinal,
        line.bytes,
        line.terminated,
        status as i64,
        env.kind.as_deref(),
        env.uuid.as_deref(),
        env.parent_uuid.as_deref(),
        env.logical_parent_uuid.as_deref(),
        env.is_sidechain,
        line_session_id(env, own.as_deref()),
        env.agent_id.as_deref(),
        env.timestamp.as_deref(),
        env.subtype.as_deref(),
        env.message_id.as_deref(),
        env.role.as_deref(),
        env.is_meta,
        env.is_compact_summary,
        env.is_api_error,
        env.source_tool_assistant_uuid.as_deref(),
        unknown_type,
        env.unknown_fields,
        crate::integrity::line_checksum(line.bytes),
    ])?;
    Ok(tx.last_insert_rowid())
}

/// Metadata record types and the field that holds each one's value (spec §3).
const METADATA_FIELDS: &[(&str, &str)] = &[
    ("custom-title", "customTitle"),
    ("ai-title", "aiTitle"),
    ("tag", "tag"),
    ("agent-name", "agentName"),
    ("agent-color", "agentColor"),
    ("agent-setting", "agentSetting"),
    ("mode", "mode"),
    ("permission-mode", "permissionMode"),
    ("worktree-state", "worktreeSession"),
    ("last-prompt", "lastPrompt"),
    ("summary", "summary"),
    ("task-summary", "summary"),
    ("cost-state", "costState"),
];

/// What a record puts in a side table, beside its row: the one reading of these records,
/// shared by both backends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Side {
    /// A compact boundary: `compactMetadata`'s trigger, token count and preserved segment.
    Compaction {
        trigger: Option<String>,
        pre_tokens: Option<i64>,
        head_uuid: Option<String>,
        anchor_uuid: Option<String>,
        tail_uuid: Option<String>,
    },
    /// A content-replacement record: (kind, toolUseId, replacement) per replacement.
    Replacements(Vec<(Option<String>, Option<String>, Option<String>)>),
    /// A file-history snapshot or delta.
    FileHistory {
        message_id: Option<String>,
        is_snapshot_update: bool,
    },
    /// A metadata entry of kind `env.kind`.
    Metadata {
        leaf_uuid: Option<String>,
        value: Option<String>,
    },
}

/// The side-table entry of a record, if its kind has one. Only these records are parsed
/// whole.
pub(crate) fn side_of(bytes: &[u8], env: &Envelope<'_>) -> Option<Side> {
    let kind = env.kind.as_deref()?;
    let is_boundary = kind == "system" && env.subtype.as_deref() == Some("compact_boundary");
    let is_side = is_boundary
        || matches!(
            kind,
            "content-replacement" | "file-history-snapshot" | "file-history-delta" | "pr-link"
        )
        || METADATA_FIELDS.iter().any(|(k, _)| *k == kind);
    if !is_side {
        return None;
    }
    let record = jsonl::parse_record(bytes)?;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    if is_boundary {
        let meta = record
            .get("compactMetadata")
            .cloned()
            .unwrap_or(Value::Null);
        let seg = meta.get("preservedSegment").cloned().unwrap_or(Value::Null);
        return Some(Side::Compaction {
            trigger: text(&meta, "trigger"),
            pre_tokens: meta.get("preTokens").and_then(Value::as_i64),
            head_uuid: text(&seg, "headUuid"),
            anchor_uuid: text(&seg, "anchorUuid"),
            tail_uuid: text(&seg, "tailUuid"),
        });
    }
    Some(match kind {
        "content-replacement" => {
            let replacements = record.get("replacements").and_then(Value::as_array);
            Side::Replacements(
                replacements
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let replacement = r.get("replacement").map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        });
                        (text(r, "kind"), text(r, "toolUseId"), replacement)
                    })
                    .collect(),
            )
        }
        "file-history-snapshot" | "file-history-delta" => Side::FileHistory {
            message_id: text(&record, "messageId"),
            is_snapshot_update: record
                .get("isSnapshotUpdate")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        _ => {
            let value = if kind == "pr-link" {
                let mut link = serde_json::Map::new();
                for key in ["prNumber", "prUrl", "prRepository"] {
                    if let Some(v) = record.get(key) {
                        link.insert(key.to_owned(), v.clone());
                    }
                }
                Some(Value::Object(link).to_string())
            } else {
                let field = METADATA_FIELDS
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map(|(_, f)| *f)
                    .expect("is_side checked the kind");
                match record.get(field) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Null) | None => None,
                    Some(other) => Some(other.to_string()),
                }
            };
            Side::Metadata {
                leaf_uuid: text(&record, "leafUuid"),
                value,
            }
        }
    })
}

/// Stores a record's usage (line by line: import folds a file's first, see
/// [`transcript::TranscriptTx::store_usage`]) and fills its side tables.
pub(crate) fn project_record(
    tx: &Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &Envelope<'_>,
) -> Result<()> {
    crate::usage::sqlite::store(tx, transcript, row, bytes, env)?;
    project_sides(tx, transcript, row, bytes, env)
}

/// Fills the side tables for the records that have one: metadata, compactions, content
/// replacements and file history (see [`side_of`]).
pub(crate) fn project_sides(
    tx: &Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &Envelope<'_>,
) -> Result<()> {
    let Some(kind) = env.kind.as_deref() else {
        return Ok(());
    };
    if kind == "user" && env.is_compact_summary {
        tx.prepare_cached(
            "UPDATE compactions SET summary_uuid = ?3 WHERE transcript_id = ?1 AND boundary_uuid = ?2",
        )?
        .execute(params![transcript, env.parent_uuid.as_deref(), env.uuid.as_deref()])?;
    }
    let Some(side) = side_of(bytes, env) else {
        return Ok(());
    };
    match side {
        Side::Compaction {
            trigger,
            pre_tokens,
            head_uuid,
            anchor_uuid,
            tail_uuid,
        } => {
            tx.prepare_cached(
                "INSERT INTO compactions (row_id, transcript_id, boundary_uuid, logical_parent_uuid,
                    trigger, pre_tokens, head_uuid, anchor_uuid, tail_uuid)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                row,
                transcript,
                env.uuid.as_deref(),
                env.logical_parent_uuid.as_deref(),
                trigger,
                pre_tokens,
                head_uuid,
                anchor_uuid,
                tail_uuid,
            ])?;
        }
        Side::Replacements(replacements) => {
            for (kind, tool_use_id, replacement) in replacements {
                tx.prepare_cached(
                    "INSERT INTO content_replacements
                        (row_id, transcript_id, entry_session_id, agent_id, kind, tool_use_id, replacement)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?
                .execute(params![
                    row,
                    transcript,
                    env.session_id.as_deref(),
                    env.agent_id.as_deref(),
                    kind,
                    tool_use_id,
                    replacement,
                ])?;
            }
        }
        Side::FileHistory {
            message_id,
            is_snapshot_update,
        } => {
            tx.prepare_cached(
                "INSERT INTO file_history (row_id, transcript_id, kind, message_id, is_snapshot_update)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![row, transcript, kind, message_id, is_snapshot_update])?;
        }
        Side::Metadata { leaf_uuid, value } => {
            tx.prepare_cached(
                "INSERT INTO metadata (row_id, transcript_id, kind, entry_session_id, leaf_uuid, value)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                row,
                transcript,
                kind,
                env.session_id.as_deref(),
                leaf_uuid,
                value,
            ])?;
        }
    }
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
