//! One module per verb; `run` dispatches.

mod agents;
mod append;
mod capture;
mod config;
mod delete;
mod export;
mod fork;
mod hooks;
mod import;
mod info;
mod launch;
mod messages;
mod reindex;
mod rename;
mod restore;
mod resume;
mod search;
mod serve;
mod sessions;
mod tag;
mod watch;

use crate::cli::{Cli, Command};
use anyhow::Context;
use sessiondb::Store;
use std::path::PathBuf;

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    // These two never need the default database: capture must not fail before it can log,
    // and hooks name --db in the hook only when it was given.
    let cli = match cli.command {
        Command::Capture => return capture::run(cli.db),
        Command::Hooks(args) => return hooks::run(cli.db, args),
        Command::Config(args) => return config::run(args),
        command => Cli { command, ..cli },
    };
    let db = database_path(cli.db)?;
    match cli.command {
        Command::Import(args) => import::run(&db, args),
        Command::Export(args) => export::run(&db, args),
        Command::Sessions(args) => sessions::run(&db, args),
        Command::Info(args) => info::run(&db, args),
        Command::Messages(args) => messages::run(&db, args),
        Command::Agents(args) => agents::run(&db, args),
        Command::Rename(args) => rename::run(&db, args),
        Command::Tag(args) => tag::run(&db, args),
        Command::Delete(args) => delete::run(&db, args),
        Command::Search(args) => search::run(&db, args),
        Command::Reindex(args) => reindex::run(&db, args),
        Command::Resume(args) => resume::run_resume(&db, args),
        Command::Continue(args) => resume::run_continue(&db, args),
        Command::Fork(args) => fork::run(&db, args),
        Command::Append(args) => append::run(&db, args),
        Command::Serve(args) => serve::run(&db, args),
        Command::Restore(args) => restore::run(&db, args),
        Command::Launch(args) => launch::run(&db, args),
        Command::Watch(args) => watch::run(&db, args),
        Command::Capture | Command::Hooks(_) | Command::Config(_) => {
            unreachable!("handled above")
        }
    }
}

fn database_path(flag: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    flag.or_else(sessiondb::paths::default_database)
        .context("no database path: pass --db PATH or set SESSIONDB_PATH (HOME is not set either)")
}

/// Opens the store, naming the file in any error.
pub fn open(db: &std::path::Path) -> anyhow::Result<Store> {
    Store::open(db).with_context(|| format!("cannot open database {}", db.display()))
}

/// A `--project` value as a project folder name: paths are sanitized as Claude Code does.
pub fn project_key(arg: &str) -> String {
    sessiondb::paths::project_argument(arg).0
}

/// The project folder Claude Code uses for a directory: its real path, sanitized.
pub fn project_key_of_dir(dir: &std::path::Path) -> anyhow::Result<String> {
    let real = std::fs::canonicalize(dir)
        .with_context(|| format!("cannot resolve directory {}", dir.display()))?;
    Ok(sessiondb::paths::sanitize_path(&real.to_string_lossy()))
}

/// A `--project` path (not a folder name), as the SDK's `directory` argument: the `cwd` the
/// listing reports for sessions that record none.
pub fn project_directory(arg: &str) -> Option<String> {
    sessiondb::paths::project_argument(arg).1
}

/// Whether to write a change back to Claude Code's file: the flags, else the config.
pub fn write_back_wanted(flags: &crate::cli::WriteBackArgs) -> anyhow::Result<bool> {
    if flags.write_back || flags.no_write_back {
        return Ok(flags.write_back);
    }
    match sessiondb::config::config_path() {
        Some(path) => Ok(sessiondb::config::load(&path)?.write_back),
        None => Ok(false),
    }
}
