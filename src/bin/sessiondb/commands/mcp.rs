//! `sessiondb mcp [--allow-write]`: the MCP server over stdio; `sessiondb mcp install |
//! uninstall [--scope user|project]`: registering it with Claude Code.

use crate::cli_mcp::{McpAction, McpArgs, McpScope, McpTarget};
use anyhow::Context;
use sessiondb::mcp::{self, install};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub fn run(db: Option<PathBuf>, args: McpArgs) -> anyhow::Result<()> {
    match args.action {
        Some(McpAction::Install(target)) => register(db, &target, true),
        Some(McpAction::Uninstall(target)) => register(db, &target, false),
        None => serve(db, args.allow_write),
    }
}

/// Serves until the client closes standard input.
fn serve(db: Option<PathBuf>, allow_write: bool) -> anyhow::Result<()> {
    let path = super::database_path(db.clone())?;
    let store = if allow_write {
        super::open_db(&path)?
    } else {
        super::open_db_read(&path)?
    };
    let options = mcp::Options {
        allow_write,
        caller: std::env::var(mcp::SESSION_ENV)
            .ok()
            .filter(|id| mcp::plausible_session_id(id)),
        db_arg: db.map(|d| shown_db(&d)),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let store = Arc::new(store);
    runtime.block_on(mcp::serve_stdio(store.clone(), options))?;
    // A team store's connection closes by blocking on its own runtime: outside this one.
    drop(runtime);
    drop(store);
    Ok(())
}

/// How a `--db` is named in the commands `resume_plan` writes: a URL without its password.
fn shown_db(db: &Path) -> String {
    let text = db.to_string_lossy();
    if super::is_team_store(db) {
        sessiondb::pg::url::without_password(&text)
    } else {
        std::path::absolute(db)
            .map_or_else(|_| text.into_owned(), |p| p.to_string_lossy().into_owned())
    }
}

fn register(db: Option<PathBuf>, target: &McpTarget, add: bool) -> anyhow::Result<()> {
    let scope = match target.scope {
        McpScope::User => install::Scope::User,
        McpScope::Project => install::Scope::Project,
    };
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let path = match &target.config {
        Some(path) => path.clone(),
        None => install::config_path(scope, &cwd)
            .context("neither CLAUDE_CONFIG_DIR nor HOME is set: pass --config")?,
    };
    let change = if add {
        let binary = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .context("cannot find the path of this sessiondb binary")?;
        // A team store is named without its password (the config file is read by every
        // process of the user, and `.mcp.json` is often committed).
        let db = match db {
            Some(d) if super::is_team_store(&d) => Some(PathBuf::from(
                super::hooks::team_hook_url(&d.to_string_lossy())?,
            )),
            Some(d) => Some(std::path::absolute(&d).context("cannot resolve --db")?),
            None => None,
        };
        let entry = install::entry(&binary, db.as_deref(), target.allow_write);
        install::install(&path, &entry)
    } else {
        install::uninstall(&path, scope)
    }
    .with_context(|| format!("cannot change {}", path.display()))?;
    let what = match change {
        install::Change::Added => "added the sessiondb MCP server to",
        install::Change::Replaced => "updated the sessiondb MCP server in",
        install::Change::Removed => "removed the sessiondb MCP server from",
        install::Change::Unchanged => "nothing to change in",
    };
    if !crate::style::quiet() {
        eprintln!("{what} {}", path.display());
    }
    Ok(())
}
