//! `sessiondb capture`: the hook entry point. It must never disturb Claude Code: it always
//! succeeds, prints nothing, and reports failures to its log (see `sessiondb::capture`).

use sessiondb::capture::{self, HookPayload};
use std::io::Read;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::Duration;

/// How long capture waits for another writer before giving up (the next capture catches up:
/// import is incremental).
const BUSY: Duration = Duration::from_secs(2);

/// The WAL size up to which capture leaves its pages in the WAL on exit (see
/// `Store::set_checkpoint_on_close`). Small enough that the next process's WAL recovery
/// (it reads the whole WAL) stays cheap.
const KEEP_WAL_BYTES: u64 = 4 * 1024 * 1024;

pub fn run(db: Option<PathBuf>) -> anyhow::Result<()> {
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .map_err(|e| format!("cannot read the hook payload: {e}"));
    let payload = HookPayload::parse(&input).ok();
    // A panic must not become a non-zero exit or a backtrace in Claude Code's output.
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| -> anyhow::Result<()> {
        read.map_err(anyhow::Error::msg)?;
        let payload = HookPayload::parse(&input)?;
        let db = super::database_path(db)?;
        let store = super::open(&db)?;
        store.set_busy_timeout(BUSY)?;
        let report = capture::capture(&store, &payload)?;
        // Most captures add a few pages: leave them in the WAL for the next one, and let the
        // capture that finds it past KEEP_WAL_BYTES copy it back on close.
        let wal = std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len());
        store.set_checkpoint_on_close(wal > KEEP_WAL_BYTES)?;
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
