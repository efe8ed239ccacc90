//! One module per verb; `run` dispatches.

mod export;
mod import;
mod resume;
mod sessions;

use crate::cli::{Cli, Command};
use anyhow::Context;
use sessiondb::Store;
use std::path::PathBuf;

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let db = database_path(cli.db)?;
    match cli.command {
        Command::Import(args) => import::run(&db, args),
        Command::Export(args) => export::run(&db, args),
        Command::Sessions(args) => sessions::run(&db, args),
        Command::Resume(args) => resume::run_resume(&db, args),
        Command::Continue(args) => resume::run_continue(&db, args),
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
    if arg.contains('/') || arg.contains('\\') {
        let real = std::fs::canonicalize(arg)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| arg.to_owned());
        sessiondb::paths::sanitize_path(&real)
    } else {
        arg.to_owned()
    }
}

/// The project folder Claude Code uses for a directory: its real path, sanitized.
pub fn project_key_of_dir(dir: &std::path::Path) -> anyhow::Result<String> {
    let real = std::fs::canonicalize(dir)
        .with_context(|| format!("cannot resolve directory {}", dir.display()))?;
    Ok(sessiondb::paths::sanitize_path(&real.to_string_lossy()))
}
