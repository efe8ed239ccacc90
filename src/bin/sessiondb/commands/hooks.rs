//! `sessiondb hooks install | uninstall | status`.

use crate::cli_setup::{HooksAction, HooksArgs};
use crate::output::outln;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::{capture, hooks};
use std::path::PathBuf;

pub fn run(db: Option<PathBuf>, args: HooksArgs) -> anyhow::Result<()> {
    if let Some(db) = db.clone().or_else(sessiondb::paths::default_database) {
        super::refuse_libpq_string(&db)?;
    }
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
            let binary = hook_binary()?;
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

/// The binary a hook names: the path this one was run by (a symbolic link such as
/// `~/.cargo/bin/sessiondb` or `/usr/local/bin/sessiondb` stays a link, so that an upgrade
/// that replaces or re-points it keeps capture running), or, when it was run by its bare
/// name, the `sessiondb` that `PATH` finds; either only when it is this binary, else this
/// binary's own path.
fn hook_binary() -> anyhow::Result<PathBuf> {
    let this = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot find the path of this sessiondb binary")?;
    let invoked = std::env::args_os().next().map(PathBuf::from);
    let candidate = match invoked {
        Some(path) if path.components().count() > 1 => std::path::absolute(&path).ok(),
        Some(name) => on_path(&name),
        None => None,
    };
    Ok(candidate
        .filter(|c| std::fs::canonicalize(c).ok().as_ref() == Some(&this))
        .unwrap_or(this))
}

/// The first executable file called `name` in a folder of `PATH`, as a shell finds it.
fn on_path(name: &std::path::Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|file| file.is_file())
}

/// What is wrong with the binary a hook command runs, in words: it is gone (capture has
/// stopped), or it is not the sessiondb running now (an older copy).
fn binary_warnings(installed: &[hooks::Installed]) -> Vec<String> {
    let this = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let mut warnings = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for command in installed.iter().filter_map(|h| h.command.as_deref()) {
        let Some(program) = hooks::command_program(command) else {
            continue;
        };
        if !seen.insert(program.clone()) {
            continue;
        }
        match std::fs::canonicalize(&program) {
            Err(_) => warnings.push(format!(
                "the hooks run {}, which does not exist: capture is not running (run \
                 `sessiondb hooks install` again)",
                program.display()
            )),
            Ok(real) if Some(&real) != this.as_ref() => warnings.push(format!(
                "the hooks run {}, which is not this sessiondb ({}): run `sessiondb hooks \
                 install` with the one you use",
                program.display(),
                this.as_deref()
                    .unwrap_or(std::path::Path::new("?"))
                    .display()
            )),
            Ok(_) => {}
        }
    }
    warnings
}

fn status(path: &std::path::Path, settings: &serde_json::Value, json: bool) -> anyhow::Result<()> {
    let installed = hooks::status(settings);
    let warnings = binary_warnings(&installed);
    let state = capture::state_dir()
        .map(|dir| capture::read_state(&dir))
        .unwrap_or_default();
    if json {
        return print_json(&serde_json::json!({
            "settings": path,
            "hooks": installed,
            "capture": state,
            "log": capture::state_dir().map(|d| d.join("capture.log")),
            "warnings": warnings,
        }));
    }
    for warning in &warnings {
        crate::style::warn(format_args!("{warning}"));
    }
    outln!("settings: {}", path.display());
    for hook in &installed {
        match &hook.command {
            Some(command) => outln!("{:<13} installed: {command}", hook.event),
            None => outln!("{:<13} not installed", hook.event),
        }
    }
    match (&state.last_run, &state.last_event) {
        (Some(at), event) => outln!(
            "last capture: {at} ({})",
            event.as_deref().unwrap_or("no payload")
        ),
        (None, _) => outln!("last capture: never"),
    }
    match (&state.last_failure, &state.last_error) {
        (Some(at), Some(error)) => outln!("last failure: {at}: {}", error.escape_debug()),
        _ => outln!("last failure: never"),
    }
    Ok(())
}
