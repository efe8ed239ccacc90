//! `sessiondb capture`: the hook entry point. It must never disturb Claude Code: it always
//! succeeds, prints nothing, and reports failures to its log (see `sessiondb::capture`).

use crate::cli_setup::CaptureArgs;
use sessiondb::capture::{self, HookPayload};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub fn run(db: Option<PathBuf>, args: &CaptureArgs) -> anyhow::Result<()> {
    if args.checkpoint {
        return checkpoint(db);
    }
    let read = read_payload(PAYLOAD_DEADLINE);
    let input = read.clone().unwrap_or_default();
    let payload = HookPayload::parse(&input).ok();
    // A panic must not become a non-zero exit or a backtrace in Claude Code's output.
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| -> anyhow::Result<()> {
        read.clone().map_err(anyhow::Error::msg)?;
        let payload = HookPayload::parse(&input)?;
        let db = super::database_path(db)?;
        let report = if super::is_team_store(&db) {
            let url = capture::with_connect_timeout(&db.to_string_lossy());
            let store = sessiondb::Db::from(sessiondb::pg::PgStore::connect(&url)?);
            capture::capture(&store, &payload)?
        } else {
            let store = super::named(&db, capture::open_store(&db))?;
            let report = capture::capture(&sessiondb::Db::from(store), &payload);
            after_capture(&db)?;
            report?
        };
        if let Some(first) = report.errors.first() {
            anyhow::bail!("{} files failed, first: {first}", report.files_failed);
        }
        Ok(())
    }));
    let failure = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("{e:#}")),
        Err(_) => Some("capture panicked".to_owned()),
    };
    if let Some(dir) = capture::state_dir() {
        // Nowhere left to report a failure to write the log: stay silent, exit 0.
        let _ = capture::record_run(
            &dir,
            payload.as_ref().map(|p| p.hook_event_name.as_str()),
            payload.as_ref().map(|p| p.session_id.as_str()),
            failure.as_deref(),
        );
    }
    Ok(())
}

/// How long capture waits for a whole payload on standard input. Claude Code writes it at
/// once; a writer that keeps the pipe open after it (or never writes) must not hold the
/// hook, and Claude Code with it.
const PAYLOAD_DEADLINE: Duration = Duration::from_secs(5);

/// Reads standard input up to the end of the first JSON value (not to the end of the
/// input: the pipe may stay open), within `deadline`. The reading thread is left behind
/// when the deadline passes; the process ends soon after.
fn read_payload(deadline: Duration) -> Result<Vec<u8>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin().lock();
        let mut values = serde_json::Deserializer::from_reader(stdin)
            .into_iter::<Box<serde_json::value::RawValue>>();
        let answer = match values.next() {
            Some(Ok(raw)) => Ok(raw.get().as_bytes().to_vec()),
            Some(Err(e)) => Err(format!(
                "the hook payload on standard input is not what Claude Code sends: {e}"
            )),
            None => Err("no hook payload on standard input".to_owned()),
        };
        let _ = tx.send(answer);
    });
    rx.recv_timeout(deadline).unwrap_or_else(|_| {
        Err(format!(
            "no whole hook payload on standard input within {} s",
            deadline.as_secs()
        ))
    })
}

/// Once the WAL has grown past `CHECKPOINT_ABOVE_BYTES`, starts `sessiondb capture
/// --checkpoint` in the background and returns without waiting for it; only when that
/// cannot be started and the WAL is past `CHECKPOINT_NOW_ABOVE_BYTES` does this process
/// copy the WAL itself.
fn after_capture(db: &Path) -> anyhow::Result<()> {
    let wal = capture::wal_bytes(db);
    if wal <= capture::CHECKPOINT_ABOVE_BYTES {
        return Ok(());
    }
    if start_checkpoint(db).is_err() && wal > capture::CHECKPOINT_NOW_ABOVE_BYTES {
        capture::checkpoint_wal(db)?;
    }
    Ok(())
}

/// Starts this binary as `sessiondb --db DB capture --checkpoint`, detached: no standard
/// input or output (Claude Code waits until the hook's output closes), in a process group
/// of its own (a hook that times out is killed with its group), at a low priority.
fn start_checkpoint(db: &Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--db")
        .arg(db)
        .args(["capture", "--checkpoint"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    // Not waited for: once this process exits, init reaps it.
    command.spawn().map(drop)
}

/// `sessiondb capture --checkpoint`: copies the WAL, lowering its own priority first; a
/// failure goes to the capture log.
fn checkpoint(db: Option<PathBuf>) -> anyhow::Result<()> {
    #[cfg(unix)]
    let _ = rustix::process::setpriority_process(None, 10);
    let result = super::database_path(db).and_then(|db| {
        super::sqlite_only(&db, "capture --checkpoint")?;
        Ok(capture::checkpoint_wal(&db)?)
    });
    if let (Err(e), Some(dir)) = (&result, capture::state_dir()) {
        let _ = capture::log_failure(&dir, "checkpoint", &format!("{e:#}"));
    }
    Ok(())
}
