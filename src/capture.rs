//! Hook capture: Claude Code's hook payload → an incremental import of one session.
//!
//! A thin layer over [`crate::import::import_session`]: the payload names the transcript
//! that changed, and import does the rest exactly as `sessiondb import` would. Beside it, a
//! small log of failures and a record of the last run, which `hooks status` reads; hooks
//! must never disturb Claude Code, so the caller reports failures here, not on a terminal.
//!
//! On a team store the same session import runs over PostgreSQL
//! ([`crate::pg::import::import_session`]), on one connection that gives up on an
//! unreachable server after [`TEAM_CONNECT_TIMEOUT`]; the hook names the store by its URL
//! without the password, which comes from `PGPASSWORD` or `~/.pgpass`
//! ([`crate::pg::password`]).
//!
//! Claude Code waits for the hook, so capture keeps its own path short: one connection, no
//! thread, one transaction (see [`open_store`]), and no WAL checkpoint. Copying the WAL into
//! the database file ends with two fsyncs, which on a busy disk took half a second; capture
//! leaves its pages in the WAL, and once the WAL is past [`CHECKPOINT_ABOVE_BYTES`] it
//! starts a process of its own that copies it ([`checkpoint_wal`]) and exits without
//! waiting for it.

use crate::error::{Error, Result};
use crate::model::{ImportReport, NoProgress};
use crate::store::Store;
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The fields of a hook's standard input that capture uses (Claude Code sends more; they are
/// ignored). Recorded payloads are under `tests/fixtures/hooks/`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct HookPayload {
    /// The session the hook fired for.
    pub session_id: String,
    /// The session's main transcript.
    pub transcript_path: PathBuf,
    /// Claude Code's working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// `Stop`, `SubagentStop`, `PreCompact`, `SessionEnd`, ...
    pub hook_event_name: String,
    /// A sub-agent's transcript (`SubagentStop`).
    #[serde(default)]
    pub agent_transcript_path: Option<PathBuf>,
}

impl HookPayload {
    /// Parses a hook's standard input.
    ///
    /// # Errors
    /// Fails when it is not a JSON object with `session_id`, `transcript_path` and
    /// `hook_event_name`.
    pub fn parse(input: &[u8]) -> Result<HookPayload> {
        serde_json::from_slice(input).map_err(|e| {
            Error::Invalid(format!(
                "the hook payload on standard input is not what Claude Code sends: {e}"
            ))
        })
    }
}

/// How long capture waits for a team store's server to answer before giving up (a URL's own
/// `connect_timeout` wins): a hook must not hang Claude Code on a server that is down.
pub const TEAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// `url` with [`TEAM_CONNECT_TIMEOUT`] as its `connect_timeout` unless it names one.
pub fn with_connect_timeout(url: &str) -> String {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    if query
        .split('&')
        .any(|p| p.split('=').next() == Some("connect_timeout"))
    {
        return url.to_owned();
    }
    let joint = if url.contains('?') { '&' } else { '?' };
    format!(
        "{url}{joint}connect_timeout={}",
        TEAM_CONNECT_TIMEOUT.as_secs()
    )
}

/// How long capture waits for another writer before giving up (the next capture catches
/// up: import is incremental).
pub const BUSY: Duration = Duration::from_secs(2);

/// The WAL size past which a capture has the WAL copied into the database file by a
/// background process ([`checkpoint_wal`]). A capture of one turn adds about 0.35 MB (tens
/// of 16 KiB pages). Between two limits: the first process to open the database reads the
/// whole WAL (SQLite rebuilds its index), about a millisecond for 4 MiB; and the capture
/// that writes the first frames of a WAL started over syncs its header (two fsyncs, with the
/// folder's), so that happens once in about twelve captures.
pub const CHECKPOINT_ABOVE_BYTES: u64 = 4 * 1024 * 1024;

/// The WAL size past which a capture copies the WAL itself, waiting for it, when it could
/// not start the background process (the binary was replaced, no process can be made): the
/// bound on the WAL whatever happens.
pub const CHECKPOINT_NOW_ABOVE_BYTES: u64 = 16 * 1024 * 1024;

/// Opens the database for one capture: a single connection ([`Store::open_single`]) that
/// waits at most [`BUSY`] for another writer, and never checkpoints: neither when a commit
/// crosses SQLite's threshold nor when it closes (see the module documentation).
///
/// # Errors
/// As [`Store::open_single`].
pub fn open_store(db: &Path) -> Result<Store> {
    let store = Store::open_single(db)?;
    store.set_busy_timeout(BUSY)?;
    store.set_wal_autocheckpoint(0)?;
    store.set_checkpoint_on_close(false)?;
    Ok(store)
}

/// The size of the database's WAL file (0 when there is none).
pub fn wal_bytes(db: &Path) -> u64 {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    std::fs::metadata(PathBuf::from(name)).map_or(0, |m| m.len())
}

/// Copies the database's WAL into the database file without waiting for any other process
/// (a PASSIVE checkpoint: a writer that comes meanwhile goes on, and the pages it adds wait
/// for the next one); when no other connection is open, SQLite then removes the WAL as this
/// one closes. What `sessiondb capture --checkpoint` runs, in the background. Never creates
/// a database.
///
/// # Errors
/// Fails when the database cannot be opened or the checkpoint fails.
pub fn checkpoint_wal(db: &Path) -> Result<()> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| crate::schema::open_error(e, db))?;
    conn.busy_timeout(BUSY)?;
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
    conn.close().map_err(|(_, e)| Error::from(e))?;
    Ok(())
}

/// Imports what a hook payload names: the main transcript and its session folder
/// (sub-agents, sidecars, tool results), incrementally. A sub-agent transcript outside that
/// folder is imported on its own. Files that do not exist are skipped: Claude Code names
/// some agents' transcripts without writing them (the compaction agent).
///
/// Only regular files under Claude Code's projects folder ([`projects_root`]) are taken:
/// a payload is data that any process able to run the hook could forge, and a `.jsonl`
/// link to `/etc/shadow` must not end up stored (and pushed to a team store).
///
/// # Errors
/// Fails when a transcript path is not a `.jsonl` regular file under the projects folder
/// (nothing is imported then), or when import fails.
pub fn capture(store: &crate::backend::Db, payload: &HookPayload) -> Result<ImportReport> {
    let root = projects_root()?;
    capture_under(store, payload, &root)
}

/// [`capture`] with the projects folder given.
///
/// # Errors
/// As [`capture`].
pub fn capture_under(
    store: &crate::backend::Db,
    payload: &HookPayload,
    root: &Path,
) -> Result<ImportReport> {
    let transcript = &payload.transcript_path;
    check_transcript_path(transcript, root)?;
    let agent = match &payload.agent_transcript_path {
        Some(agent) => {
            check_transcript_path(agent, root)?;
            Some(agent)
        }
        None => None,
    };
    let mut report = store.import_session(transcript, &NoProgress)?;
    if let Some(agent) = agent {
        let folder = transcript.with_extension("");
        if !agent.starts_with(&folder) && agent.is_file() {
            let more = store.import_paths(std::slice::from_ref(agent), &NoProgress)?;
            report.files += more.files;
            report.files_imported += more.files_imported;
            report.new_rows += more.new_rows;
            report.errors.extend(more.errors);
            report.files_failed += more.files_failed;
        }
    }
    Ok(report)
}

/// The projects folder a hook's transcripts must be under: `$CLAUDE_CONFIG_DIR/projects`,
/// else `~/.claude/projects` (Claude Code runs the hook with its own environment). With
/// `CLAUDE_CODE_PROJECT_DIR_NAME` the session's folder has that name, still under it.
///
/// # Errors
/// Fails when neither `CLAUDE_CONFIG_DIR` nor `HOME` is set.
pub fn projects_root() -> Result<PathBuf> {
    crate::paths::default_projects_dir().ok_or_else(|| {
        Error::Invalid(
            "neither CLAUDE_CONFIG_DIR nor HOME is set: no projects folder to capture from"
                .to_owned(),
        )
    })
}

/// A transcript path from a payload: an absolute `.jsonl` path whose folder is (once its
/// links are resolved) inside `root` (also resolved), and which is a regular file, not a
/// link (the rule `import` applies to files found inside a folder it scans), or does not
/// exist (yet).
fn check_transcript_path(path: &Path, root: &Path) -> Result<()> {
    let refuse = |why: &str| {
        Err(Error::Invalid(format!(
            "the hook payload names {} as a transcript: {why}; skipped",
            path.display()
        )))
    };
    if !path.is_absolute() || path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
        return refuse("not an absolute .jsonl path");
    }
    let inside = match (
        path.parent().and_then(resolved),
        std::fs::canonicalize(root),
    ) {
        (Some(folder), Ok(root)) => folder.starts_with(&root) && folder != root,
        _ => false,
    };
    if !inside {
        return refuse(&format!(
            "not inside Claude Code's projects folder {}",
            root.display()
        ));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => refuse("a symbolic link, which is not followed"),
        Ok(m) if !m.is_file() => refuse("not a regular file"),
        _ => Ok(()),
    }
}

/// `path` with its links resolved: its nearest existing ancestor resolved, and the
/// components that do not exist yet (which cannot be links) after it.
fn resolved(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        match std::fs::canonicalize(at) {
            Ok(real) => {
                let mut out = real;
                for name in missing.iter().rev() {
                    out.push(name);
                }
                return Some(out);
            }
            Err(_) => {
                let name = at.file_name()?;
                if name == ".." {
                    return None;
                }
                missing.push(name.to_owned());
                at = at.parent()?;
            }
        }
    }
}

/// The log is started over (the old one kept as `capture.log.1`) past this size.
pub const LOG_LIMIT: u64 = 1024 * 1024;

/// Where capture keeps its log and its last-run record: `$XDG_STATE_HOME/sessiondb`, else
/// `~/.local/state/sessiondb`.
pub fn state_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir).join("sessiondb"));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".local")
            .join("state")
            .join("sessiondb"),
    )
}

/// The last capture run and the last failure, as `hooks status` shows them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CaptureState {
    /// When capture last ran (ISO 8601, UTC).
    pub last_run: Option<String>,
    /// The hook event of that run.
    pub last_event: Option<String>,
    /// The session of that run.
    pub last_session: Option<String>,
    /// When capture last failed.
    pub last_failure: Option<String>,
    /// Why it failed.
    pub last_error: Option<String>,
}

const STATE_FILE: &str = "capture-state.json";
const LOG_FILE: &str = "capture.log";

/// Reads the last-run record in `dir` (empty when there is none or it cannot be read).
pub fn read_state(dir: &Path) -> CaptureState {
    std::fs::read(dir.join(STATE_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Records one capture run in `dir`: its time, event and session, and on failure the error,
/// which also goes into `capture.log` (started over past [`LOG_LIMIT`]).
///
/// # Errors
/// Fails when the folder or files cannot be written.
pub fn record_run(
    dir: &Path,
    event: Option<&str>,
    session: Option<&str>,
    failure: Option<&str>,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let now = crate::time::format_ms(crate::time::now_ms());
    let mut state = read_state(dir);
    state.last_run = Some(now.clone());
    state.last_event = event.map(str::to_owned);
    state.last_session = session.map(str::to_owned);
    if let Some(error) = failure {
        state.last_failure = Some(now.clone());
        state.last_error = Some(error.to_owned());
        append_log(
            dir,
            &format!(
                "{now} {} {}: {error}",
                event.unwrap_or("-"),
                session.unwrap_or("-")
            ),
        )?;
    }
    let bytes = serde_json::to_vec_pretty(&state)?;
    crate::export::write_atomically(&dir.join(STATE_FILE), |out| {
        out.write_all(&bytes)
            .map_err(|e| Error::io(dir.join(STATE_FILE), e))?;
        Ok(bytes.len() as u64)
    })?;
    Ok(())
}

/// Logs a failure of capture's background checkpoint (`what` names it) in `dir`'s
/// `capture.log`; the last-run record is left alone, since no hook ran.
///
/// # Errors
/// Fails when the folder or the log cannot be written.
pub fn log_failure(dir: &Path, what: &str, error: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let now = crate::time::format_ms(crate::time::now_ms());
    append_log(dir, &format!("{now} {what}: {error}"))
}

/// Appends one line to `capture.log`, first moving a log past [`LOG_LIMIT`] to
/// `capture.log.1`. Newlines inside the message are escaped: one failure, one line.
fn append_log(dir: &Path, line: &str) -> Result<()> {
    let path = dir.join(LOG_FILE);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= LOG_LIMIT) {
        let old = dir.join(format!("{LOG_FILE}.1"));
        std::fs::rename(&path, &old).map_err(|e| Error::io(&path, e))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path).map_err(|e| Error::io(&path, e))?;
    let line = line.replace('\n', "\\n");
    file.write_all(format!("{line}\n").as_bytes())
        .map_err(|e| Error::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_payload_and_names_what_is_missing() {
        let p = HookPayload::parse(
            br#"{"session_id":"s","transcript_path":"/a/b/s.jsonl","cwd":"/w","hook_event_name":"Stop","extra":1}"#,
        )
        .expect("valid");
        assert_eq!(p.hook_event_name, "Stop");
        assert_eq!(p.agent_transcript_path, None);
        let err = HookPayload::parse(br#"{"session_id":"s"}"#).expect_err("incomplete");
        assert!(err.to_string().contains("transcript_path"), "{err}");
        assert!(HookPayload::parse(b"not json").is_err());
    }

    #[test]
    fn the_log_is_started_over_past_its_limit() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join(LOG_FILE), vec![b'x'; LOG_LIMIT as usize]).expect("w");
        record_run(dir.path(), Some("Stop"), Some("s"), Some("bad\nthing")).expect("record");
        let log = std::fs::read_to_string(dir.path().join(LOG_FILE)).expect("log");
        assert!(log.ends_with("Stop s: bad\\nthing\n"), "{log}");
        assert_eq!(log.lines().count(), 1);
        let old = std::fs::metadata(dir.path().join("capture.log.1")).expect("old log");
        assert_eq!(old.len(), LOG_LIMIT);
        let state = read_state(dir.path());
        assert_eq!(state.last_error.as_deref(), Some("bad\nthing"));
        assert_eq!(state.last_run, state.last_failure);
        record_run(dir.path(), Some("Stop"), Some("s"), None).expect("record");
        let state = read_state(dir.path());
        assert_eq!(state.last_error.as_deref(), Some("bad\nthing"), "kept");
    }
}
