//! Hand-back: a stored session written into Claude Code's tree, so that `claude --resume`
//! finds it (also after Claude Code's cleanup deleted it, or on another machine).
//!
//! A thin layer over export: the same bytes, at the paths import found them under, with the
//! mtimes import recorded, plus one change on the way out when the session moves to another
//! folder: each record's top-level `cwd` (see [`CwdRewrite`]). The database is only read.
//!
//! The rules (what is written where, what is left alone, what stops a restore) are here
//! once; each backend only gathers the session's files ([`RestoreSource`]): the SQLite
//! store below, the team store in [`crate::pg::restore`].

use crate::error::{Error, Result};
use crate::export::{self, Recorded};
use crate::fork::ForkOptions;
use crate::import::Adopted;
use crate::model::SessionRef;
use crate::store::Store;
use rusqlite::Connection;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where and how to restore.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    /// Claude Code's config folder (the one holding `projects/`).
    pub config_dir: PathBuf,
    /// Move the session to this folder: its project folder, and the rewritten `cwd`s.
    pub cwd: Option<PathBuf>,
    /// When a different file is in the way, restore a fork under a new session id instead
    /// of failing.
    pub as_new: bool,
    /// When a file in the way holds what would be written and more (Claude Code wrote to
    /// it since), import those lines first and leave the file as it is (`launch`).
    pub import_newer: bool,
}

/// What a restore wrote.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RestoreReport {
    /// The session restored (a new id with `as_new` when something was in the way).
    pub session_id: String,
    /// The session it came from, when it was restored as a new one.
    pub forked_from: Option<String>,
    /// The project folder it was written to.
    pub project_dir: PathBuf,
    /// The main transcript's path.
    pub transcript: PathBuf,
    /// Files written.
    pub written: u64,
    /// Files already there with the same bytes, left alone.
    pub unchanged: u64,
    /// The recorded cwd, when the session records one.
    pub recorded_cwd: Option<String>,
    /// The cwd it was rewritten to (`--cwd`).
    pub cwd: Option<String>,
    /// Records whose `cwd` was rewritten.
    pub rewritten_records: u64,
    /// Files Claude Code had written to since the last import, imported first
    /// (`import_newer`).
    pub imported_first: u64,
}

/// The `cwd` change applied on the way out: a record's top-level `cwd` that equals `from`
/// becomes `to`, one under `from/` becomes the same relative path under `to`. Nothing else
/// in a record changes: paths inside messages, tool inputs and outputs stay as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CwdRewrite {
    /// The recorded cwd.
    pub from: String,
    /// The new one.
    pub to: String,
}

impl CwdRewrite {
    /// The rewritten cwd, or `None` when `cwd` is neither `from` nor under it.
    pub fn apply(&self, cwd: &str) -> Option<String> {
        if cwd == self.from {
            return Some(self.to.clone());
        }
        let rest = cwd.strip_prefix(self.from.trim_end_matches('/'))?;
        rest.starts_with('/')
            .then(|| format!("{}{rest}", self.to.trim_end_matches('/')))
    }

    /// The line with its top-level `cwd` rewritten, or `None` when it stays as it is. The
    /// line's other bytes are kept exactly; only the string value is replaced.
    pub fn rewrite_line(&self, line: &[u8]) -> Option<Vec<u8>> {
        let [Some(value)] = crate::jsonl::fields::pick(line, [b"cwd".as_slice()])? else {
            return None;
        };
        let cwd: String = serde_json::from_slice(value).ok()?;
        let new = self.apply(&cwd)?;
        let start = value.as_ptr() as usize - line.as_ptr() as usize;
        let end = start + value.len();
        let mut out = Vec::with_capacity(line.len() + new.len());
        out.extend_from_slice(&line[..start]);
        out.extend_from_slice(serde_json::to_string(&new).ok()?.as_bytes());
        out.extend_from_slice(&line[end..]);
        Some(out)
    }
}

/// One file about to be written: its path under the project folder, bytes and mtime.
pub(crate) struct Planned {
    /// What it holds, for the ledger.
    pub(crate) holds: Adopted,
    pub(crate) relpath: PathBuf,
    pub(crate) bytes: Vec<u8>,
    pub(crate) mtime_ns: Option<i64>,
}

/// What a restore reads from a store, once per backend.
pub(crate) trait RestoreSource {
    /// The session's recorded cwd (see [`recorded_cwd`]).
    fn recorded_cwd(&self, session: &SessionRef) -> Result<Option<String>>;
    /// The session's files, main transcript last, each line passed through `rewrite`;
    /// returns them and how many records were rewritten.
    fn plan(
        &self,
        session: &SessionRef,
        rewrite: Option<&CwdRewrite>,
    ) -> Result<(Vec<Planned>, u64)>;
    /// A fork of the session under a new id, for `as_new`.
    fn fork(&self, session: &SessionRef) -> Result<SessionRef>;
    /// Records each file written as a location of what it holds (see
    /// [`crate::import::adopt_written`]).
    fn adopt(&self, files: &[(Adopted, PathBuf, &[u8])]) -> Result<()>;
    /// Imports a session's changed files (see [`crate::import::import_session`]).
    fn import_session(&self, transcript: &Path) -> Result<()>;
}

impl RestoreSource for Store {
    fn recorded_cwd(&self, session: &SessionRef) -> Result<Option<String>> {
        recorded_cwd(&*self.reader()?, session)
    }

    fn plan(
        &self,
        session: &SessionRef,
        rewrite: Option<&CwdRewrite>,
    ) -> Result<(Vec<Planned>, u64)> {
        plan(&*self.reader()?, session, rewrite)
    }

    fn fork(&self, session: &SessionRef) -> Result<SessionRef> {
        Ok(Store::fork(self, session, &ForkOptions::default())?.session)
    }

    fn adopt(&self, files: &[(Adopted, PathBuf, &[u8])]) -> Result<()> {
        crate::import::adopt_written(self, files)
    }

    fn import_session(&self, transcript: &Path) -> Result<()> {
        crate::import::import_session(self, transcript, &crate::model::NoProgress).map(drop)
    }
}

/// Writes a stored session into `options.config_dir/projects/<project>/`: the main
/// transcript, sub-agent transcripts with their `.meta.json`, tool results and the other
/// session files, mode 0600, each with the mtime import recorded. A file already there with
/// the same bytes is left alone. A different one is never overwritten: without `as_new` the
/// restore fails naming it and how it differs, having written nothing; with `as_new` the
/// session is forked (as [`Store::fork`] does) and the fork is restored instead.
///
/// # Errors
/// [`Error::Invalid`] when a different file is in the way (without `as_new`) or `cwd` is
/// not an existing folder; database and file-system errors.
pub fn restore(
    store: &Store,
    session: &SessionRef,
    options: &RestoreOptions,
) -> Result<RestoreReport> {
    restore_from(store, session, options)
}

/// [`restore`] from either backend.
pub(crate) fn restore_from(
    store: &dyn RestoreSource,
    session: &SessionRef,
    options: &RestoreOptions,
) -> Result<RestoreReport> {
    let recorded_cwd = store.recorded_cwd(session)?;
    let (project, rewrite) = match &options.cwd {
        Some(dir) => {
            let real = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
            if !real.is_dir() {
                return Err(Error::Invalid(format!("{} is not a folder", dir.display())));
            }
            let to = real.to_string_lossy().into_owned();
            let rewrite = recorded_cwd.clone().map(|from| CwdRewrite {
                from,
                to: to.clone(),
            });
            (crate::paths::project_folder_for(&to), rewrite)
        }
        // Claude Code with CLAUDE_CODE_PROJECT_DIR_NAME reads every session from that folder.
        None => (
            crate::paths::project_dir_name_override().unwrap_or_else(|| session.project.clone()),
            None,
        ),
    };
    let project_dir = options
        .config_dir
        .join("projects")
        .join(export::safe_relative(&project)?);
    let (files, rewritten) = store.plan(session, rewrite.as_ref())?;
    let mut differences = Vec::new();
    let mut grown = 0u64;
    let mut unchanged = 0u64;
    for file in &files {
        let path = project_dir.join(&file.relpath);
        match std::fs::read(&path) {
            Ok(existing) if existing == file.bytes => unchanged += 1,
            Ok(existing) => {
                grown += u64::from(existing.starts_with(&file.bytes));
                differences.push(describe_difference(&path, &existing, &file.bytes));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    if options.import_newer && grown > 0 && grown == differences.len() as u64 {
        // Claude Code went on writing there: what it wrote is imported into this session
        // (the files recorded as its location first), and the files stay as they are.
        let present: Vec<(Adopted, PathBuf, &[u8])> = files
            .iter()
            .map(|f| (f.holds, project_dir.join(&f.relpath), f.bytes.as_slice()))
            .filter(|(_, path, _)| path.exists())
            .collect();
        store.adopt(&present)?;
        let main = project_dir.join(format!("{}.jsonl", session.session_id));
        store.import_session(&main)?;
        let mut report = restore_from(
            store,
            session,
            &RestoreOptions {
                import_newer: false,
                ..options.clone()
            },
        )?;
        report.imported_first = grown;
        return Ok(report);
    }
    if !differences.is_empty() {
        if !options.as_new {
            return Err(Error::Invalid(format!(
                "not restored: {}; nothing was written (--as-new restores it under a new session id)",
                differences.join("; ")
            )));
        }
        let forked = store.fork(session)?;
        let mut report = restore_from(
            store,
            &forked,
            &RestoreOptions {
                as_new: false,
                ..options.clone()
            },
        )?;
        report.forked_from = Some(session.session_id.clone());
        return Ok(report);
    }
    let mut written = 0u64;
    for file in &files {
        let path = project_dir.join(&file.relpath);
        if path.exists() {
            continue;
        }
        export::write_atomically(&path, |out| {
            out.write_all(&file.bytes)
                .map_err(|e| Error::io(&path, e))?;
            Ok(file.bytes.len() as u64)
        })?;
        export::set_recorded_mtime(&path, file.mtime_ns)?;
        written += 1;
    }
    // Every file there is now a location of the session: importing it later adds to this
    // session, whatever project folder it is in.
    let located: Vec<(Adopted, PathBuf, &[u8])> = files
        .iter()
        .map(|f| (f.holds, project_dir.join(&f.relpath), f.bytes.as_slice()))
        .collect();
    store.adopt(&located)?;
    Ok(RestoreReport {
        session_id: session.session_id.clone(),
        forked_from: None,
        transcript: project_dir.join(format!("{}.jsonl", session.session_id)),
        project_dir,
        written,
        unchanged,
        recorded_cwd,
        cwd: rewrite.map(|r| r.to),
        rewritten_records: rewritten,
        imported_first: 0,
    })
}

/// The session's recorded cwd: the first `cwd` of its main transcript, else its project's.
///
/// # Errors
/// Fails on a database error.
pub fn recorded_cwd(conn: &Connection, session: &SessionRef) -> Result<Option<String>> {
    if let Some(transcript) = export::main_transcript(conn, session)? {
        let mut stmt = conn.prepare_cached(
            "SELECT line(raw, dict) AS raw FROM rows WHERE transcript_id = ?1 AND status = 0 ORDER BY ordinal",
        )?;
        let mut rows = stmt.query([transcript])?;
        while let Some(row) = rows.next()? {
            let raw = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
            if let Some([Some(value)]) = crate::jsonl::fields::pick(raw, [b"cwd".as_slice()]) {
                if let Ok(cwd) = serde_json::from_slice::<String>(value) {
                    return Ok(Some(cwd));
                }
            }
        }
    }
    Ok(conn
        .prepare_cached(
            "SELECT p.cwd FROM sessions s JOIN projects p ON p.id = s.project_id WHERE s.id = ?1",
        )?
        .query_row([session.key], |r| r.get(0))?)
}

/// A place a session's main transcript was imported from or restored to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file.
    pub path: String,
    /// The machine whose file it is (a team store keys its ledger by machine).
    pub host: Option<String>,
    /// Whether the file was gone at the last import.
    pub vanished: bool,
}

/// The places a session lives in Claude Code's trees, oldest first: where it was imported
/// from, and every folder it was restored or launched into.
///
/// # Errors
/// Fails on a database error.
pub fn locations(conn: &Connection, session: &SessionRef) -> Result<Vec<Location>> {
    let mut stmt = conn.prepare_cached(
        "SELECT f.path, f.vanished FROM transcripts t
         JOIN source_files f ON f.transcript_id = t.id
         WHERE t.session_id = ?1 AND t.subpath = ''
         ORDER BY f.rowid",
    )?;
    let found = stmt
        .query_map([session.key], |r| {
            Ok(Location {
                path: r.get(0)?,
                host: None,
                vanished: r.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(found)
}

/// The session's files, main transcript last (Claude Code may look as soon as it appears).
fn plan(
    conn: &Connection,
    session: &SessionRef,
    rewrite: Option<&CwdRewrite>,
) -> Result<(Vec<Planned>, u64)> {
    let sid = &session.session_id;
    let mut rewritten = 0u64;
    let mut map = |line: &[u8]| {
        let out = rewrite.and_then(|r| r.rewrite_line(line));
        rewritten += u64::from(out.is_some());
        out
    };
    let mut files = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, relpath, content FROM session_files WHERE session_id = ?1 ORDER BY relpath",
    )?;
    let stored: Vec<(i64, String, Vec<u8>)> = stmt
        .query_map([session.key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, relpath, bytes) in stored {
        files.push(Planned {
            holds: Adopted::File(id),
            relpath: export::safe_relative(sid)?.join(export::safe_relative(&relpath)?),
            bytes,
            mtime_ns: export::recorded_mtime_ns(conn, Recorded::File(id))?,
        });
    }
    let mut stmt = conn.prepare_cached(
        "SELECT id, subpath FROM transcripts WHERE session_id = ?1 AND superseded_at IS NULL
         ORDER BY subpath = '', subpath",
    )?;
    let transcripts: Vec<(i64, String)> = stmt
        .query_map([session.key], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, subpath) in transcripts {
        let relpath = if subpath.is_empty() {
            export::safe_relative(&format!("{sid}.jsonl"))?
        } else {
            export::safe_relative(sid)?.join(export::safe_relative(&format!("{subpath}.jsonl"))?)
        };
        let mut bytes = Vec::new();
        export::write_transcript_mapped(conn, id, &mut bytes, &mut map)?;
        files.push(Planned {
            holds: Adopted::Transcript(id),
            relpath,
            bytes,
            mtime_ns: export::recorded_mtime_ns(conn, Recorded::Transcript(id))?,
        });
    }
    Ok((files, rewritten))
}

/// How the file at `path` differs from what would be restored, in words a user can act on.
fn describe_difference(path: &Path, existing: &[u8], stored: &[u8]) -> String {
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    if existing.starts_with(stored) {
        return format!(
            "{} has {} more bytes ({} more lines) than the stored session: Claude Code wrote \
             to it after the last import (run `sessiondb import` first)",
            path.display(),
            existing.len() - stored.len(),
            lines(&existing[stored.len()..])
        );
    }
    if stored.starts_with(existing) {
        return format!(
            "{} is shorter than the stored session ({} of {} bytes)",
            path.display(),
            existing.len(),
            stored.len()
        );
    }
    let at = existing
        .iter()
        .zip(stored)
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    format!(
        "{} differs from the stored session from line {} on ({} bytes there, {} stored)",
        path.display(),
        lines(&existing[..at]) + 1,
        existing.len(),
        stored.len()
    )
}

/// Claude Code's config folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn default_config_dir() -> Option<PathBuf> {
    crate::paths::default_projects_dir().and_then(|p| p.parent().map(Path::to_path_buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw() -> CwdRewrite {
        CwdRewrite {
            from: "/home/a/proj".into(),
            to: "/srv/b/work".into(),
        }
    }

    #[test]
    fn cwd_equal_or_under_is_rewritten() {
        let r = rw();
        assert_eq!(r.apply("/home/a/proj").as_deref(), Some("/srv/b/work"));
        assert_eq!(
            r.apply("/home/a/proj/sub/x").as_deref(),
            Some("/srv/b/work/sub/x")
        );
        assert_eq!(r.apply("/home/a/project"), None);
        assert_eq!(r.apply("/home/a"), None);
    }

    #[test]
    fn only_the_top_level_cwd_changes() {
        let r = rw();
        let line = br#"{"type":"user","cwd":"/home/a/proj/sub","message":{"content":"cd /home/a/proj","cwd":"/home/a/proj"},"x":1.50}"#;
        let out = r.rewrite_line(line).expect("rewritten");
        assert_eq!(
            String::from_utf8(out).expect("utf8"),
            r#"{"type":"user","cwd":"/srv/b/work/sub","message":{"content":"cd /home/a/proj","cwd":"/home/a/proj"},"x":1.50}"#
        );
        assert_eq!(
            r.rewrite_line(br#"{"type":"summary","cwd":"/elsewhere"}"#),
            None
        );
        assert_eq!(r.rewrite_line(br#"{"type":"summary"}"#), None);
        let escaped = r
            .rewrite_line(br#"{"cwd":"\/home\/a\/proj"}"#)
            .expect("decoded");
        assert_eq!(escaped, br#"{"cwd":"/srv/b/work"}"#);
    }
}
