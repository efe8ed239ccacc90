//! The command-line grammar (clap derive). Verb names and flags are a contract: scripts call
//! them exactly so.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// An embedded, SQLite-backed store for coding-agent sessions (Claude Code transcripts).
#[derive(Debug, Parser)]
#[command(name = "sessiondb", version, about, long_about = None)]
pub struct Cli {
    /// The database file [default: $SESSIONDB_PATH, else $XDG_DATA_HOME/sessiondb/sessions.db,
    /// else ~/.local/share/sessiondb/sessions.db].
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Import Claude Code transcripts (files, project folders or a projects root).
    ///
    /// With no PATH, imports $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects. Unchanged
    /// files are skipped, grown files add only their new lines, and rewritten files are
    /// re-imported while the old version is kept.
    Import(ImportArgs),
    /// Write a session's transcript, or the whole projects tree, exactly as imported.
    Export(ExportArgs),
    /// List stored sessions, newest first.
    Sessions(SessionsArgs),
    /// Rebuild a session's conversation and runtime state, as Claude Code's --resume does.
    ///
    /// Without --json or --api prints a short summary: title, leaf, message count, repairs.
    Resume(ResumeArgs),
    /// Resume the newest session of a project, as Claude Code's --continue does.
    ///
    /// The project defaults to the one of the current directory (sanitized as Claude Code
    /// does); the newest session is the one whose transcript file was modified last.
    Continue(ContinueArgs),
}

/// How a resume is shown and which Claude Code options it emulates.
#[derive(Debug, Args)]
pub struct ResumeView {
    /// Print the restored state as one JSON bundle (messages, repairs, metadata, file
    /// history, content replacements, subagents, write target).
    #[arg(long, conflicts_with = "api")]
    pub json: bool,
    /// Print the provider-valid `messages` array (the API view).
    #[arg(long)]
    pub api: bool,
    /// End the conversation at this record (Claude Code's --resume-session-at).
    #[arg(long, value_name = "UUID")]
    pub at: Option<String>,
    /// Apply content-replacement records, as the interactive client does (print mode
    /// ignores them).
    #[arg(long)]
    pub interactive: bool,
    /// Drop an unfinished last turn, as CLAUDE_CODE_RESUME_INTERRUPTED_TURN=1 does.
    #[arg(long)]
    pub continue_interrupted: bool,
}

/// `sessiondb resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    #[command(flatten)]
    pub view: ResumeView,
}

/// `sessiondb continue`.
#[derive(Debug, Args)]
pub struct ContinueArgs {
    /// The project folder name or path.
    #[arg(long, value_name = "P", conflicts_with = "cwd")]
    pub project: Option<String>,
    /// Use the project of this directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[command(flatten)]
    pub view: ResumeView,
}

/// `sessiondb import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// .jsonl files, project folders or projects roots.
    pub paths: Vec<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb export`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["session", "all"])))]
pub struct ExportArgs {
    /// A session id, a unique prefix of one, or PROJECT/SESSION.
    pub session: Option<String>,
    /// Write the session to FILE instead of standard output.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "all"
    )]
    pub output: Option<PathBuf>,
    /// Rebuild the whole projects tree (main files, subagents, sidecars, tool results).
    #[arg(long, requires = "out")]
    pub all: bool,
    /// The folder to rebuild the tree in (with --all).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only this project folder (with --all).
    #[arg(long, value_name = "P", requires = "all")]
    pub project: Option<String>,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Only sessions of this project (a folder name or a path, sanitized as Claude Code does).
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
