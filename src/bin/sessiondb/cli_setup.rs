//! The grammar of the verbs that tie sessiondb to Claude Code's own files: `capture`,
//! `watch`, `hooks`, `config`, `restore` and `launch` (beside `cli.rs`, which holds the
//! store's verbs). Kept apart because these verbs read and write another program's folders
//! and settings, and their flags follow that program's layout, not the store's.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `sessiondb capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Copy the WAL into the database file and exit (what a capture starts in the
    /// background once the WAL has grown; reads no payload).
    #[arg(long, hide = true)]
    pub checkpoint: bool,
}

/// `sessiondb watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Projects roots, project folders or transcripts [default: $CLAUDE_CONFIG_DIR/projects,
    /// else ~/.claude/projects].
    pub paths: Vec<PathBuf>,
    /// Import once and exit (a plain `import`).
    #[arg(long)]
    pub once: bool,
}

/// `sessiondb config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// What to do with the config.
    #[command(subcommand)]
    pub action: ConfigAction,
}

/// `sessiondb config set KEY VALUE | get KEY | path`.
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Set a value (keys: write_back).
    Set {
        /// The setting.
        key: String,
        /// Its value.
        value: String,
    },
    /// Print a value.
    Get {
        /// The setting.
        key: String,
    },
    /// Print where the config file is.
    Path,
}

/// `sessiondb hooks`.
#[derive(Debug, Args)]
pub struct HooksArgs {
    /// What to do with the hooks.
    #[command(subcommand)]
    pub action: HooksAction,
}

/// `sessiondb hooks install | uninstall | status`.
#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add Stop, SubagentStop, PreCompact and SessionEnd hooks running `sessiondb capture`
    /// (this binary's absolute path, plus --db when given). Other settings and hooks are kept;
    /// the old file is kept beside it as settings.json.sessiondb.bak.
    Install(HooksTarget),
    /// Remove exactly the hooks `install` added.
    Uninstall(HooksTarget),
    /// Show which capture hooks are installed, and when capture last ran and last failed.
    Status(HooksTarget),
}

/// The settings file the hooks go into.
#[derive(Debug, Args)]
pub struct HooksTarget {
    /// Claude Code's settings file [default: $CLAUDE_CONFIG_DIR/settings.json, else
    /// ~/.claude/settings.json].
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
    pub session: String,
    #[command(flatten)]
    pub target: RestoreTarget,
    /// When a different file is already there, write the conversation under a new session id
    /// (as `fork` does) and print it.
    #[arg(long)]
    pub as_new: bool,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Where a session is restored to.
#[derive(Debug, Args)]
pub struct RestoreTarget {
    /// Claude Code's config folder [default: $CLAUDE_CONFIG_DIR, else ~/.claude].
    #[arg(long, value_name = "DIR")]
    pub config_dir: Option<PathBuf>,
    /// Put the session under this folder's project and rewrite every record's `cwd` that is
    /// the recorded cwd (or under it) to this folder (or the same place under it).
    #[arg(long, value_name = "PATH")]
    pub cwd: Option<PathBuf>,
}

/// `sessiondb launch`.
#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
    pub session: String,
    /// Run Claude Code in this folder [default: the recorded cwd; when it does not exist,
    /// launch says so and asks for --cwd or --here]; the session is restored for it (see
    /// `restore --cwd`).
    #[arg(long, value_name = "PATH", conflicts_with = "here")]
    pub cwd: Option<PathBuf>,
    /// Run Claude Code in the current folder (the session is restored for it).
    #[arg(long)]
    pub here: bool,
    /// Resume with --fork-session (Claude Code writes a new session).
    #[arg(long)]
    pub fork: bool,
    /// Print the command instead of running it (the session is restored all the same).
    #[arg(long)]
    pub print: bool,
    /// Arguments passed on to Claude Code.
    #[arg(last = true, value_name = "CLAUDE_ARGS")]
    pub claude_args: Vec<String>,
}
