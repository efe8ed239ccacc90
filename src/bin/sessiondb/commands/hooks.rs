//! `sessiondb hooks install | uninstall | status`.

use crate::cli::{HooksAction, HooksArgs};
use crate::output::print_json;
use anyhow::Context;
use sessiondb::{capture, hooks};
use std::path::PathBuf;

pub fn run(db: Option<PathBuf>, args: HooksArgs) -> anyhow::Result<()> {
    if let HooksAction::Install(_) = &args.action {
        // The hooks run `capture`, which writes to a SQLite file only (`--db`, else
        // `SESSIONDB_PATH`, which the hooks would read).
        if let Some(db) = db.clone().or_else(sessiondb::paths::default_database) {
            super::sqlite_only(&db, "hooks install")?;
        }
    }
    let (target, action) = match args.action {
        HooksAction::Install(t) => (t, "install"),
        HooksAction::Uninstall(t) => (t, "uninstall"),
        HooksAction::Status(t) => (t, "status"),
    };
    let path = match target.settings {
        Some(path) => path,
        None => hooks::default_settings_path()
            .context("no --settings given and neither CLAUDE_CONFIG_DIR nor HOME is set")?,
    };
    let mut settings = hooks::read_settings(&path)?;
    let changed = match action {
        "install" => {
            let binary = std::env::current_exe()
                .and_then(std::fs::canonicalize)
                .context("cannot find the path of this sessiondb binary")?;
            let db = db
                .map(|db| std::path::absolute(&db).context("cannot resolve --db"))
                .transpose()?;
            let command = hooks::capture_command(&binary, db.as_deref());
            hooks::install(&mut settings, &command)
        }
        "uninstall" => hooks::uninstall(&mut settings),
        _ => return status(&path, &settings, target.json),
    };
    let backup = if changed {
        hooks::write_settings(&path, &settings)
            .with_context(|| format!("cannot write {}", path.display()))?
    } else {
        None
    };
    if target.json {
        return print_json(&serde_json::json!({
            "settings": path,
            "changed": changed,
            "backup": backup,
            "hooks": hooks::status(&settings),
        }));
    }
    let done = if action == "install" {
        "installed"
    } else {
        "removed"
    };
    match (changed, backup) {
        (false, _) => eprintln!("nothing to change in {}", path.display()),
        (true, Some(bak)) => eprintln!(
            "capture hooks {done} in {} (previous file: {})",
            path.display(),
            bak.display()
        ),
        (true, None) => eprintln!("capture hooks {done} in {}", path.display()),
    }
    Ok(())
}

fn status(path: &std::path::Path, settings: &serde_json::Value, json: bool) -> anyhow::Result<()> {
    let installed = hooks::status(settings);
    let state = capture::state_dir()
        .map(|dir| capture::read_state(&dir))
        .unwrap_or_default();
    if json {
        return print_json(&serde_json::json!({
            "settings": path,
            "hooks": installed,
            "capture": state,
            "log": capture::state_dir().map(|d| d.join("capture.log")),
        }));
    }
    println!("settings: {}", path.display());
    for hook in &installed {
        match &hook.command {
            Some(command) => println!("{:<13} installed: {command}", hook.event),
            None => println!("{:<13} not installed", hook.event),
        }
    }
    match (&state.last_run, &state.last_event) {
        (Some(at), event) => println!(
            "last capture: {at} ({})",
            event.as_deref().unwrap_or("no payload")
        ),
        (None, _) => println!("last capture: never"),
    }
    match (&state.last_failure, &state.last_error) {
        (Some(at), Some(error)) => println!("last failure: {at}: {}", error.escape_debug()),
        _ => println!("last failure: never"),
    }
    Ok(())
}
