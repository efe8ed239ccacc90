//! `sessiondb launch SESSION [--cwd PATH | --here] [--fork] [--print] [-- CLAUDE_ARGS…]`:
//! restore, then hand the session to Claude Code.

use crate::cli_setup::LaunchArgs;
use crate::output::outln;
use anyhow::Context;
use std::path::{Path, PathBuf};

pub fn run(db: &Path, args: LaunchArgs) -> anyhow::Result<()> {
    let store = super::open_db(db)?;
    let session = store.resolve_session(&args.session)?;
    let recorded = store.recorded_cwd(&session)?;
    // Claude Code finds the session under the project of the folder it runs in: run it in
    // the recorded cwd, or where the user says; never in a folder chosen silently.
    let dir = match (&args.cwd, args.here, &recorded) {
        (Some(dir), _, _) => dir.clone(),
        (None, true, _) => std::env::current_dir().context("cannot read the current folder")?,
        (None, false, Some(cwd)) if Path::new(cwd).is_dir() => PathBuf::from(cwd),
        (None, false, Some(cwd)) => anyhow::bail!(
            "the session's folder {} does not exist here; pass --cwd PATH to run Claude Code \
             in another folder, or --here for the current one",
            cwd.escape_debug()
        ),
        (None, false, None) => anyhow::bail!(
            "the session records no folder; pass --cwd PATH to run Claude Code in one, or \
             --here for the current one"
        ),
    };
    let real = std::fs::canonicalize(&dir)
        .with_context(|| format!("cannot run Claude Code in {}", dir.display()))?;
    let moved = recorded
        .as_deref()
        .is_none_or(|cwd| std::fs::canonicalize(cwd).ok().as_ref() != Some(&real));
    let report = super::restore::restore_session(
        &store,
        &session,
        None,
        moved.then(|| real.clone()),
        false,
        true,
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
        outln!(
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
