//! Watching projects folders: file-system events (the `notify` crate), debounced, become
//! incremental imports of the sessions they touched. For people who do not install hooks,
//! and for transcripts written by other programs (Agent SDK apps).
//!
//! A thin layer over import: every change is an import of the session a changed path
//! belongs to ([`crate::backend::Db::import_session`]: its main transcript and its session folder,
//! on either store), so a deleted file keeps its rows and is marked vanished, as a folder
//! import does.

use crate::error::{Error, Result};
use crate::model::{ImportReport, NoProgress};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Quiet time after the last event before a batch is imported: Claude Code writes a turn as
/// several appends in a row.
pub const QUIET: Duration = Duration::from_millis(300);

/// The longest a batch waits while events keep coming.
pub const MAX_WAIT: Duration = Duration::from_secs(2);

/// The main transcript of the session a changed path belongs to: the path itself for
/// `<project>/<id>.jsonl`, `<project>/<id>.jsonl` for anything inside `<project>/<id>/`.
/// Another `.jsonl` file is its own transcript; anything else belongs to no session.
pub fn session_transcript(path: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for component in path.components() {
        if let Component::Normal(name) = component {
            let name = name.to_string_lossy();
            let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
            if crate::names::is_session_id(stem) && prefix.parent().is_some() {
                return Some(prefix.join(format!("{stem}.jsonl")));
            }
        }
        prefix.push(component);
    }
    (path.extension().is_some_and(|e| e == "jsonl")).then(|| path.to_path_buf())
}

/// What one imported change did, for the one line `watch` prints about it.
#[derive(Debug, Clone)]
pub struct Change {
    /// The session's main transcript.
    pub transcript: PathBuf,
    /// What the import did.
    pub report: ImportReport,
}

/// A watch over projects folders.
pub struct Watch {
    _watcher: RecommendedWatcher,
    events: Receiver<notify::Result<notify::Event>>,
}

impl Watch {
    /// Starts watching `roots` (recursively).
    ///
    /// # Errors
    /// Fails when a root does not exist or cannot be watched.
    pub fn start(roots: &[PathBuf]) -> Result<Watch> {
        let (tx, events) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(tx)
            .map_err(|e| Error::Invalid(format!("cannot watch files: {e}")))?;
        for root in roots {
            watcher
                .watch(root, RecursiveMode::Recursive)
                .map_err(|e| Error::Invalid(format!("cannot watch {}: {e}", root.display())))?;
        }
        Ok(Watch {
            _watcher: watcher,
            events,
        })
    }

    /// Waits up to `wait` for events, then collects more until [`QUIET`] passes without one
    /// (or [`MAX_WAIT`] in all); returns the session transcripts they touched, in order, and
    /// whether the roots must be scanned whole again. Empty when nothing happened in `wait`.
    ///
    /// Two things send no event for a file, and both are made up for here:
    /// * the kernel's queue overflowed (inotify drops every event past
    ///   `/proc/sys/fs/inotify/max_queued_events` until it is read; notify then sends one
    ///   event flagged `Rescan`): the batch asks for a rescan;
    /// * a folder appeared (created, or moved in whole): files written into it before
    ///   notify added its watch, and everything a moved folder holds, send nothing. The
    ///   folder is walked (links not followed, as import does) once the batch is quiet, and
    ///   the sessions of the files found join the batch.
    ///
    /// # Errors
    /// Fails when the watcher reports an error (for instance too many watches).
    pub fn next_batch(&self, wait: Duration) -> Result<Batch> {
        let mut batch = Batch::default();
        let first = match self.events.recv_timeout(wait) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return Ok(batch),
        };
        let started = Instant::now();
        let mut folders = Vec::new();
        let mut next = Some(first);
        while let Some(event) = next.take() {
            let event = event.map_err(|e| Error::Invalid(format!("watching failed: {e}")))?;
            if event.need_rescan() {
                batch.rescan = true;
            }
            if appears(&event.kind) {
                folders.extend(event.paths.iter().filter(|p| is_real_dir(p)).cloned());
            }
            if !event.kind.is_access() {
                batch
                    .sessions
                    .extend(event.paths.iter().filter_map(|p| session_transcript(p)));
            }
            let left = MAX_WAIT.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            next = self.events.recv_timeout(QUIET.min(left)).ok();
        }
        for folder in folders {
            walk_files(&folder, &mut |file| {
                batch.sessions.extend(session_transcript(file));
            });
        }
        Ok(batch)
    }
}

/// What one wait for events found.
#[derive(Debug, Default)]
pub struct Batch {
    /// The session transcripts the events (and the folders that appeared) touched.
    pub sessions: BTreeSet<PathBuf>,
    /// Events were lost: the roots must be imported whole again.
    pub rescan: bool,
}

impl Batch {
    /// Whether nothing happened.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty() && !self.rescan
    }
}

/// How often `watch` imports its roots whole even when no event asks for it: the last net
/// for anything events missed (an unchanged file costs a `stat`).
pub const RESCAN_EVERY: Duration = Duration::from_secs(300);

/// Whether an event says a path appeared: created, or moved in.
fn appears(kind: &notify::EventKind) -> bool {
    use notify::event::{ModifyKind, RenameMode};
    match kind {
        notify::EventKind::Create(_) => true,
        notify::EventKind::Modify(ModifyKind::Name(mode)) => {
            matches!(mode, RenameMode::To | RenameMode::Both | RenameMode::Any)
        }
        _ => false,
    }
}

/// Whether a path is a folder itself (not a link to one).
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Calls `found` with every regular file under `folder`, never following a link. Folders
/// that cannot be read are passed over: the periodic rescan reports them.
fn walk_files(folder: &Path, found: &mut dyn FnMut(&Path)) {
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                found(&entry.path());
            }
        }
    }
}

/// Imports the sessions of a batch, one by one, into either store
/// ([`crate::backend::Db::import_session`]); returns those where something changed (new or
/// rewritten lines, files that vanished).
///
/// # Errors
/// Fails when the database cannot be written; a session folder that cannot be read is
/// reported in its change's `errors`.
pub fn import_batch(db: &crate::backend::Db, batch: &BTreeSet<PathBuf>) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    for transcript in batch {
        let report = match db.import_session(transcript, &NoProgress) {
            Ok(report) => report,
            Err(e @ Error::Io { .. }) => ImportReport {
                errors: vec![e.to_string()],
                files_failed: 1,
                ..ImportReport::default()
            },
            Err(e) => return Err(e),
        };
        let changed = report.new_rows > 0
            || report.files_rewritten > 0
            || report.vanished_files > 0
            || report.files_imported > 0
            || report.files_failed > 0;
        if changed {
            changes.push(Change {
                transcript: transcript.clone(),
                report,
            });
        }
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "5992899e-5e2b-4509-8109-e2acee6ef1ef";

    #[test]
    fn changed_paths_map_to_their_session() {
        let main = PathBuf::from(format!("/c/projects/-w/{ID}.jsonl"));
        assert_eq!(session_transcript(&main), Some(main.clone()));
        for inner in [
            format!("/c/projects/-w/{ID}/subagents/agent-a1.jsonl"),
            format!("/c/projects/-w/{ID}/subagents/agent-a1.meta.json"),
            format!("/c/projects/-w/{ID}/tool-results/toolu_1.txt"),
            format!("/c/projects/-w/{ID}"),
        ] {
            assert_eq!(
                session_transcript(Path::new(&inner)),
                Some(main.clone()),
                "{inner}"
            );
        }
        assert_eq!(
            session_transcript(Path::new("/c/projects/-w/memory/x.md")),
            None
        );
        let other = Path::new("/c/projects/-w/notes.jsonl");
        assert_eq!(session_transcript(other), Some(other.to_path_buf()));
        assert!(!crate::names::is_session_id(
            "5992899e-5e2b-4509-8109-e2acee6ef1eg"
        ));
    }
}
