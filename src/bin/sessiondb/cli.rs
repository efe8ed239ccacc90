//! The command-line grammar (clap derive). Verb names and flags are a contract: scripts call
//! them exactly so.

use crate::style::ColorChoice;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::sync::LazyLock;

/// `--version`: the crate version, the newest schema migration this binary knows (what it
/// creates and upgrades to) and the SQLite compiled in.
static VERSION: LazyLock<String> = LazyLock::new(|| {
    let (schema, name) = sessiondb::schema::newest_known();
    format!(
        "{} (schema V{schema} {name}, SQLite {})",
        env!("CARGO_PKG_VERSION"),
        rusqlite::version()
    )
});

/// An embedded, SQLite-backed store for coding-agent sessions (Claude Code transcripts).
#[derive(Debug, Parser)]
#[command(name = "sessiondb", version = VERSION.as_str(), about, long_about = None)]
pub struct Cli {
    /// The database file [default: $SESSIONDB_PATH, else $XDG_DATA_HOME/sessiondb/sessions.db,
    /// else ~/.local/share/sessiondb/sessions.db].
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// When to colour output: auto (on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE
    /// forces it), always or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// No summaries and no warnings (errors are still printed).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,

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
    /// Show one session's catalog entry.
    Info(InfoArgs),
    /// Print a session's conversation as the Agent SDK's get_session_messages returns it.
    Messages(MessagesArgs),
    /// List a session's sub-agents.
    Agents(AgentsArgs),
    /// Give a session a custom title (writes the record Claude Code and the SDK write).
    Rename(RenameArgs),
    /// Tag a session, or clear its tag with --clear.
    Tag(TagArgs),
    /// Remove a session, its sub-agent transcripts and everything keyed to it.
    Delete(DeleteArgs),
    /// Full-text search over prompts and replies (and tool calls and results with --tools).
    Search(SearchArgs),
    /// Rebuild the full-text index and the session catalog.
    Reindex(ReindexArgs),
    /// Write a consistent copy of the database to DEST (mode 0600, atomically), while
    /// writers go on (SQLite's online backup).
    Backup(BackupArgs),
    /// Rebuild a session's conversation and runtime state, as Claude Code's --resume does.
    ///
    /// Without --json or --api prints a short summary: title, leaf, message count, repairs.
    Resume(ResumeArgs),
    /// Resume the newest session of a project, as Claude Code's --continue does.
    ///
    /// The project defaults to the one of the current directory (sanitized as Claude Code
    /// does); the newest session is the one whose transcript file was modified last.
    Continue(ContinueArgs),
    /// Fork a session: a new session holding its conversation, as Claude Code's
    /// --fork-session writes it. Prints the new session id.
    Fork(ForkArgs),
    /// Append JSONL entries from standard input to a session, with Claude Code's write rules
    /// (dedup by uuid, parent chaining, compact boundaries; metadata as given).
    Append(AppendArgs),
    /// Serve the store over HTTP/JSON: the Agent SDK's SessionStore protocol and the read
    /// verbs (sessions, resume, messages, search). Stops on SIGINT/SIGTERM after the requests
    /// in flight finish.
    Serve(ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish) to stdout.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to stdout: `sessiondb man > sessiondb.1`.
    Man,
}

/// `sessiondb completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `sessiondb serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (port 0: any free port; the bound address is printed).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7878")]
    pub addr: String,
    /// Require `Authorization: Bearer TOKEN` on every request [default: $SESSIONDB_TOKEN].
    /// Required for any address but loopback.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
}

/// `sessiondb fork`.
#[derive(Debug, Args)]
pub struct ForkArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// End the fork at this message of the conversation (the SDK's up_to_message_id).
    #[arg(long, value_name = "UUID")]
    pub up_to: Option<String>,
    /// Give the fork this custom title (else it inherits the source's).
    #[arg(long, value_name = "T")]
    pub title: Option<String>,
    /// Use this session id instead of a fresh one (must be unused in the project).
    #[arg(long, value_name = "UUID")]
    pub session_id: Option<String>,
    /// Print a JSON object (session_id, project, source, counts) instead of the id alone.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb append`.
#[derive(Debug, Args)]
pub struct AppendArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// Hang the batch off this message when it does not start with recorded messages
    /// [default: the leaf resume picks].
    #[arg(long, value_name = "UUID", conflicts_with = "root")]
    pub parent: Option<String>,
    /// Start a new root instead (Claude Code without a parent hint).
    #[arg(long)]
    pub root: bool,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
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
    /// How the conversation's last record is chosen: file-order (Claude Code 2.1.332, every
    /// entry point), newest-message (2.1.88 --resume <id>), newest-turn (2.1.88 --continue
    /// and the picker).
    #[arg(long, value_enum, default_value_t = LeafRuleArg::FileOrder)]
    pub leaf_rule: LeafRuleArg,
}

/// `--leaf-rule` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LeafRuleArg {
    /// The newest chain record in file order that nothing names as its parent.
    FileOrder,
    /// The non-sidechain message with the newest timestamp.
    NewestMessage,
    /// The newest user/assistant message reached from a childless message.
    NewestTurn,
}

impl From<LeafRuleArg> for sessiondb::resume::gather::LeafRule {
    fn from(arg: LeafRuleArg) -> Self {
        match arg {
            LeafRuleArg::FileOrder => Self::FileOrder,
            LeafRuleArg::NewestMessage => Self::NewestMessage,
            LeafRuleArg::NewestTurn => Self::NewestTurn,
        }
    }
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
    #[arg(
        long,
        value_name = "P",
        allow_hyphen_values = true,
        conflicts_with = "cwd"
    )]
    pub project: Option<String>,
    /// Use the project of this directory (it need not exist on this machine: only its
    /// sanitized path matters).
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
    #[arg(long, value_name = "P", allow_hyphen_values = true, requires = "all")]
    pub project: Option<String>,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Only sessions of this project: a folder name or a path (sanitized as Claude Code
    /// does), else any project whose folder name or cwd contains P, ignoring case.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub project: Option<String>,
    /// Only sessions with this tag (exact).
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Only sessions whose title, custom title, AI title, summary or first prompt contains
    /// TEXT (case-insensitive).
    #[arg(long, value_name = "TEXT")]
    pub name: Option<String>,
    /// Only sessions last on this git branch.
    #[arg(long, value_name = "B")]
    pub branch: Option<String>,
    /// Only sessions modified at or after T (2026-01-31, an RFC 3339 time, or 3d / 12h / 30m ago).
    #[arg(long, value_name = "T")]
    pub since: Option<String>,
    /// Only sessions modified at or before T (same forms as --since).
    #[arg(long, value_name = "T")]
    pub until: Option<String>,
    /// At most N sessions (0: all).
    #[arg(long, value_name = "N", value_parser = count(), allow_negative_numbers = true)]
    pub limit: Option<i64>,
    /// Skip the first N sessions.
    #[arg(long, value_name = "N", value_parser = count(), allow_negative_numbers = true)]
    pub offset: Option<i64>,
    /// Also show sessions the SDK hides (sidechain-only files, nothing to title them by).
    #[arg(long)]
    pub all: bool,
    /// Show full session ids (the table shows the shortest unique prefix, at least 8
    /// characters).
    #[arg(long)]
    pub long: bool,
    /// Print JSON (the Agent SDK's field names, plus sessiondb's own) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `--limit`/`--offset` values: a count, 0 or more (a negative one is a usage error).
fn count() -> fn(&str) -> Result<i64, String> {
    |text| match text.trim().parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        Ok(_) => Err("a count cannot be negative (0 or more)".to_owned()),
        Err(_) => Err("not a whole number".to_owned()),
    }
}

/// `sessiondb info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb messages`.
#[derive(Debug, Args)]
pub struct MessagesArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// A sub-agent's messages instead (an id from `sessiondb agents`).
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// At most N messages (0: all).
    #[arg(long, value_name = "N", value_parser = count(), allow_negative_numbers = true)]
    pub limit: Option<i64>,
    /// Skip N messages first; with --limit a negative N counts from the end (the SDK's
    /// slice `[offset:offset+limit]`).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub offset: i64,
    /// Show everything: whole texts, tool inputs, tool results and thinking.
    #[arg(long)]
    pub full: bool,
    /// Never page the output (the default pages through $PAGER, else `less -FRX`, on a
    /// terminal).
    #[arg(long)]
    pub no_pager: bool,
    /// Print JSON (the SDK's SessionMessage objects) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// Print JSON instead of one id per line.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb rename`.
#[derive(Debug, Args)]
pub struct RenameArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// The new title (trimmed; must not be empty).
    pub title: String,
}

/// `sessiondb tag`.
#[derive(Debug, Args)]
#[command(override_usage = "sessiondb tag <SESSION> <TAG|--clear>")]
#[command(group(clap::ArgGroup::new("what").required(true).args(["tag", "clear"])))]
pub struct TagArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// The tag (Unicode-cleaned and trimmed as the SDK does).
    pub tag: Option<String>,
    /// Remove the tag.
    #[arg(long)]
    pub clear: bool,
}

/// `sessiondb delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    pub session: String,
    /// Do not ask for confirmation (required when standard input is not a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `sessiondb search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Words to find (all must match; punctuation and operators are taken literally).
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Only sessions of this project (a folder name or a path).
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub project: Option<String>,
    /// Only sessions with this tag.
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Only records of this role.
    #[arg(long, value_parser = ["user", "assistant"])]
    pub role: Option<String>,
    /// Also search tool inputs and tool results.
    #[arg(long)]
    pub tools: bool,
    /// At most N hits (0: all) [default: 20].
    #[arg(long, value_name = "N", value_parser = count(), allow_negative_numbers = true)]
    pub limit: Option<i64>,
    /// Skip the first N hits.
    #[arg(long, value_name = "N", value_parser = count(), allow_negative_numbers = true)]
    pub offset: Option<i64>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb reindex`.
#[derive(Debug, Args)]
pub struct ReindexArgs {
    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb backup`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The copy to write (replaced atomically when it exists).
    pub dest: PathBuf,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}
