//! `sessiondb launch SESSION [--cwd PATH] [--fork] [--print] [-- CLAUDE_ARGS…]`: restore,
//! then hand the session to Claude Code.

use crate::cli::LaunchArgs;
use anyhow::Context;
use std::path::{Path, PathBuf};

pub fn run(db: &Path, args: LaunchArgs) -> anyhow::Result<()> {
    let store = super::open_db(db)?;
    let session = store.resolve_session(&args.session)?;
    let recorded = store.recorded_cwd(&session)?;
    // Claude Code finds the session under the project of the folder it runs in: run it in
    // the recorded cwd when that still exists, else move the session to where it will run.
    let dir = match (&args.cwd, &recorded) {
        (Some(dir), _) => dir.clone(),
        (None, Some(cwd)) if Path::new(cwd).is_dir() => PathBuf::from(cwd),
        (None, _) => std::env::current_dir().context("cannot read the current folder")?,
    };
    let real = std::fs::canonicalize(&dir)
        .with_context(|| format!("cannot run Claude Code in {}", dir.display()))?;
    let moved = recorded.as_deref().map_or(true, |cwd| {
        std::fs::canonicalize(cwd).ok().as_ref() != Some(&real)
    });
    let report = super::restore::restore_session(
        &store,
        &session,
        None,
        moved.then(|| real.clone()),
        false,
    )?;
    super::restore::describe(&report);
    let claude = std::env::var_os("SESSIONDB_CLAUDE")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "claude".into());
    let mut argv: Vec<String> = vec![
        claude.to_string_lossy().into_owned(),
        "--resume".into(),
        report.session_id.clone(),
    ];
    if args.fork {
        argv.push("--fork-session".into());
    }
    argv.extend(args.claude_args);
    if args.print {
        let words: Vec<String> = argv
            .iter()
            .map(|w| sessiondb::hooks::shell_quote(w))
            .collect();
        println!(
            "cd {} && {}",
            sessiondb::hooks::shell_quote(&real.to_string_lossy()),
            words.join(" ")
        );
        return Ok(());
    }
    let status = std::process::Command::new(&claude)
        .args(&argv[1..])
        .current_dir(&real)
        .status()
        .with_context(|| format!("cannot run {}", claude.to_string_lossy()))?;
    if !status.success() {
        anyhow::bail!("{} exited with {status}", claude.to_string_lossy());
    }
    Ok(())
}
