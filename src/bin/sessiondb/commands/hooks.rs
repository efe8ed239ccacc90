//! `sessiondb hooks install | uninstall | status`.

use crate::cli::{HooksAction, HooksArgs};
use crate::output::print_json;
use anyhow::Context;
use sessiondb::{capture, hooks};
use std::path::PathBuf;

pub fn run(db: Option<PathBuf>, args: HooksArgs) -> anyhow::Result<()> {
    // A team store (`--db`, else `SESSIONDB_PATH`) is always named in the hook, by its URL
    // without the password: checked here, where a failure can still be told.
    let team = match (
        &args.action,
        db.clone().or_else(sessiondb::paths::default_database),
    ) {
        (HooksAction::Install(_), Some(target)) if super::is_team_store(&target) => {
            Some(team_hook_url(&target.to_string_lossy())?)
        }
        _ => None,
    };
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
    let command = match action {
        "install" => {
            let binary = std::env::current_exe()
                .and_then(std::fs::canonicalize)
                .context("cannot find the path of this sessiondb binary")?;
            let db = match team {
                Some(url) => Some(PathBuf::from(url)),
                None => db
                    .map(|db| std::path::absolute(&db).context("cannot resolve --db"))
                    .transpose()?,
            };
            Some(hooks::capture_command(&binary, db.as_deref()))
        }
        "uninstall" => None,
        _ => return status(&path, &hooks::read_settings(&path)?, target.json),
    };
    let (changed, edited) = hooks::edit_settings(&path, command.as_deref())
        .with_context(|| format!("{} was not changed", path.display()))?;
    let backup = edited.backup.clone();
    let settings = if edited.removed {
        serde_json::json!({})
    } else {
        hooks::read_settings(&path)?
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
        (true, _) if edited.removed => eprintln!(
            "capture hooks {done}; {} held nothing else and was removed",
            path.display()
        ),
        (true, Some(bak)) => eprintln!(
            "capture hooks {done} in {} (previous file: {})",
            path.display(),
            bak.display()
        ),
        (true, None) => eprintln!("capture hooks {done} in {}", path.display()),
    }
    Ok(())
}

/// The URL a hook names a team store by: `url` without its password (`settings.json` is
/// read by every process of the user and often shared), after checking that capture can
/// connect with it, its password coming from `PGPASSWORD` or `~/.pgpass` as for `psql`.
pub(super) fn team_hook_url(url: &str) -> anyhow::Result<String> {
    use sessiondb::pg::password::{self, Source};
    let bare = sessiondb::pg::url::without_password(url);
    if let Err(e) =
        sessiondb::pg::PgStore::connect(&sessiondb::capture::with_connect_timeout(&bare))
    {
        anyhow::bail!(
            "{e}\nhooks not installed: a hook names the team store without its password, \
             and capture must connect with it as this did (the password from ~/.pgpass, a \
             line host:port:database:user:password, chmod 600; or PGPASSWORD)"
        );
    }
    if password::source_for(&bare) == Ok(Source::Environment) {
        crate::style::warn(format_args!(
            "the password came from PGPASSWORD: Claude Code must have it in its environment \
             too, or put it in ~/.pgpass"
        ));
    }
    Ok(bare)
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
