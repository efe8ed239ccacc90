//! The grammar of `sessiondb mcp` (beside `cli.rs`, which holds the other verbs).

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `sessiondb mcp`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// Register with Claude Code, or remove the registration.
    #[command(subcommand)]
    pub action: Option<McpAction>,
    /// Also offer the tools that change the store: tag, rename and fork (never delete).
    #[arg(long)]
    pub allow_write: bool,
}

/// `sessiondb mcp install | uninstall`.
#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Register this binary as Claude Code's `sessiondb` MCP server, as `claude mcp add`
    /// does (other bytes of the file are kept; a symbolic link stays one).
    Install(McpTarget),
    /// Remove exactly what `install` added.
    Uninstall(McpTarget),
}

/// Where the registration goes.
#[derive(Debug, Args)]
pub struct McpTarget {
    /// user: every project ($CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json);
    /// project: this folder's .mcp.json.
    #[arg(long, value_enum, default_value_t = McpScope::User)]
    pub scope: McpScope,
    /// Edit this file instead of the scope's.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Register the server with --allow-write.
    #[arg(long)]
    pub allow_write: bool,
}

/// `--scope` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpScope {
    /// Every project of this user.
    User,
    /// This folder's project (.mcp.json).
    Project,
}
