//! `sessiondb watch [PATH…] [--once]`: import what changes under the projects folders until
//! Ctrl-C (or SIGTERM), one line per imported change.

use crate::cli::ImportArgs;
use crate::cli_setup::WatchArgs;
use anyhow::Context;
use sessiondb::watch::{self, Watch};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the loop looks at the stop flag while nothing happens.
const TICK: Duration = Duration::from_millis(200);

pub fn run(db: &Path, args: WatchArgs) -> anyhow::Result<()> {
    if args.once {
        return super::import::run(
            db,
            ImportArgs {
                paths: args.paths,
                json: false,
            },
        );
    }
    let roots = super::import::roots(args.paths)?;
    let store = super::open_db(db)?;
    let stop = stop_on_signal()?;
    // Watch first, then catch up, so nothing written in between is missed.
    let watcher = Watch::start(&roots)?;
    let report = store.import_paths(&roots, &sessiondb::model::NoProgress)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "watching {} ({} files, {} new rows on start)",
        roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        report.files,
        report.new_rows
    )?;
    out.flush()?;
    let mut last_scan = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        let batch = watcher.next_batch(TICK)?;
        if batch.rescan || last_scan.elapsed() >= watch::RESCAN_EVERY {
            // Events were lost, or it is time: import the roots whole, as on start.
            let report = store.import_paths(&roots, &sessiondb::model::NoProgress)?;
            last_scan = Instant::now();
            if batch.rescan || report.new_rows > 0 || report.files_failed > 0 {
                let why = if batch.rescan {
                    "events were lost"
                } else {
                    "periodic"
                };
                let mut line = format!(
                    "rescanned ({why}): {} files, {} new rows",
                    report.files, report.new_rows
                );
                for error in &report.errors {
                    line.push_str(&format!(", failed: {error}"));
                }
                writeln!(out, "{}", line.escape_debug())?;
                out.flush()?;
            }
            if batch.rescan {
                continue;
            }
        }
        if batch.is_empty() {
            continue;
        }
        for change in watch::import_batch(&store, &batch.sessions)? {
            let r = &change.report;
            let mut line = format!("{}: {} new rows", label(&change.transcript), r.new_rows);
            if r.files_rewritten > 0 {
                line.push_str(&format!(", {} files rewritten", r.files_rewritten));
            }
            if r.vanished_files > 0 {
                line.push_str(&format!(
                    ", {} files vanished (rows kept)",
                    r.vanished_files
                ));
            }
            for error in &r.errors {
                line.push_str(&format!(", failed: {error}"));
            }
            writeln!(out, "{}", line.escape_debug())?;
            out.flush()?;
        }
    }
    writeln!(out, "stopped")?;
    Ok(())
}

/// `project/session` for a session's main transcript.
fn label(path: &Path) -> String {
    let name = |n: Option<&std::ffi::OsStr>| {
        n.map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let project = name(path.parent().and_then(Path::file_name));
    format!("{project}/{}", name(path.file_stem()))
}

/// A flag set on SIGINT or SIGTERM, so the loop stops between imports (never inside one).
fn stop_on_signal() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the signal handler")?;
    std::thread::spawn(move || {
        runtime.block_on(async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                let Ok(mut term) = signal(SignalKind::terminate()) else {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                };
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
        });
        flag.store(true, Ordering::SeqCst);
    });
    Ok(stop)
}
