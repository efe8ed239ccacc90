//! Discovery: which files under a path are transcripts, sub-agent transcripts or session
//! files, and which session and project each belongs to. Reads the file tree only (and the
//! first record of a file whose name is not its session id), never the store.

use super::path_key;
use crate::error::{Error, Result};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

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
