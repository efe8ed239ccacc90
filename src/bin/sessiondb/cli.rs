//! The command-line grammar (clap derive). Verb names and flags are a contract: scripts call
//! them exactly so.
//!
//! This module holds the whole grammar's frame (the global options, the verb list, the
//! one-verb parse) and the store's own verbs; the verbs that tie sessiondb to Claude Code's
//! files are in `cli_setup`, the usage reports in `cli_usage`, `mcp` and `pick` in theirs.

use crate::cli_setup::{CaptureArgs, ConfigArgs, HooksArgs, LaunchArgs, RestoreArgs, WatchArgs};
use crate::cli_usage::{StatsArgs, StatuslineArgs};
use crate::style::ColorChoice;
use clap::{Args, FromArgMatches, Parser, Subcommand};
use sessiondb::resume::CliVersion;
use sessiondb::serve::guard::AllowedHost;
use std::ffi::OsString;
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
    /// The options every verb takes.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The options every verb takes (`--db`, `--color`, `--quiet`).
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// The database file, or a team store's postgres:// URL (give its password in PGPASSWORD
    /// or ~/.pgpass: one in the URL is visible to every user in `ps`; libpq's key=value form
    /// is refused) [default: $SESSIONDB_PATH, else $XDG_DATA_HOME/sessiondb/sessions.db,
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
}

/// Parses the command line as [`Cli::parse`] does, building only the verb it names.
///
/// clap builds the whole grammar, 25 verbs with all their arguments, before it parses: about
/// a tenth of the work of a process that lists one session. The verb named on the command
/// line is parsed alone first. When that does not succeed (help, `--version`, a mistake, or
/// a word taken for the verb that was not it), the whole grammar parses the line again, so
/// every message, help text and exit code is the one it always was.
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    parse_one_verb(&args).unwrap_or_else(Cli::parse)
}

/// The command line parsed with a grammar holding only the verb it names; `None` when it
/// names none or does not parse so (the caller then parses with the whole grammar).
fn parse_one_verb(args: &[OsString]) -> Option<Cli> {
    let (name, augment) = args
        .iter()
        .skip(1)
        .find_map(|arg| VERBS.iter().find(|(name, _)| arg.to_str() == Some(name)))?;
    let grammar = GlobalArgs::augment_args(clap::Command::new("sessiondb"))
        .subcommand_required(true)
        .subcommand(augment(clap::Command::new(*name)));
    let matches = grammar.try_get_matches_from(args).ok()?;
    Cli::from_arg_matches(&matches).ok()
}

/// What adds a verb's arguments to its (empty) command.
type AddArgs = fn(clap::Command) -> clap::Command;

/// Each verb of [`Command`] with what adds its arguments (a unit test holds this table
/// equal to the enum).
const VERBS: &[(&str, AddArgs)] = &[
    ("import", ImportArgs::augment_args),
    ("export", ExportArgs::augment_args),
    ("sessions", SessionsArgs::augment_args),
    ("info", InfoArgs::augment_args),
    ("messages", MessagesArgs::augment_args),
    ("agents", AgentsArgs::augment_args),
    ("rename", RenameArgs::augment_args),
    ("tag", TagArgs::augment_args),
    ("delete", DeleteArgs::augment_args),
    ("search", SearchArgs::augment_args),
    ("reindex", ReindexArgs::augment_args),
    ("backup", BackupArgs::augment_args),
    ("check", CheckArgs::augment_args),
    ("compact", CompactArgs::augment_args),
    ("resume", ResumeArgs::augment_args),
    ("continue", ContinueArgs::augment_args),
    ("fork", ForkArgs::augment_args),
    ("append", AppendArgs::augment_args),
    ("serve", ServeArgs::augment_args),
    ("completions", CompletionsArgs::augment_args),
    ("man", |verb| verb),
    ("capture", CaptureArgs::augment_args),
    ("hooks", HooksArgs::augment_args),
    ("restore", RestoreArgs::augment_args),
    ("launch", LaunchArgs::augment_args),
    ("watch", WatchArgs::augment_args),
    ("config", ConfigArgs::augment_args),
    ("sync", SyncArgs::augment_args),
    ("stats", StatsArgs::augment_args),
    ("statusline", StatuslineArgs::augment_args),
    #[cfg(feature = "mcp")]
    ("mcp", crate::cli_mcp::McpArgs::augment_args),
    #[cfg(feature = "pick")]
    ("pick", crate::cli_pick::PickArgs::augment_args),
];

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
    /// writers go on (SQLite's online backup; on a team store, pg_dump's custom format).
    Backup(BackupArgs),
    /// Verify the database: SQLite integrity and foreign keys, the search index, every
    /// stored line against its checksum, the catalog against its lines. Exit 1 when a
    /// problem is found.
    ///
    /// With --repair, damaged lines are read again from the source files that still hold
    /// them, and the search index and catalog are rebuilt (one transaction).
    Check(CheckArgs),
    /// Compress the lines stored as they came (a database made by an older sessiondb, or
    /// lines too few to train a dictionary on when imported), then give the space back
    /// (VACUUM, after checking the free disk it needs).
    ///
    /// Safe to interrupt: each batch of lines is one transaction, and the next run goes on.
    Compact(CompactArgs),
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
    /// Hook entry point: import the session a Claude Code hook names (its JSON on standard
    /// input). Always exits 0 and prints nothing; failures go to
    /// $XDG_STATE_HOME/sessiondb/capture.log (else ~/.local/state/sessiondb/capture.log).
    Capture(CaptureArgs),
    /// Install, remove or show the Claude Code hooks that run `sessiondb capture`.
    Hooks(HooksArgs),
    /// Write a stored session back into Claude Code's tree, with its recorded mtimes.
    Restore(RestoreArgs),
    /// Restore a session, then run `claude --resume` on it.
    Launch(LaunchArgs),
    /// Import what changes under the projects folders as it changes, until Ctrl-C: one line
    /// per imported change. A file Claude Code deletes keeps its rows (marked vanished).
    Watch(WatchArgs),
    /// sessiondb's own settings ($XDG_CONFIG_HOME/sessiondb/config.toml, else
    /// ~/.config/sessiondb/config.toml).
    Config(ConfigArgs),
    /// Copy a local store (--from, else the database) into a PostgreSQL team store:
    /// only what the target lacks, one file per transaction, safe to interrupt and re-run.
    Sync(SyncArgs),
    /// Tokens and cost of every stored API response, per day, week, month, session,
    /// project, model or 5-hour block (docs/usage.md). Several reports in one call read one
    /// snapshot.
    Stats(StatsArgs),
    /// One line for Claude Code's status line: the session's cost, today's, and the open
    /// 5-hour block's with its burn rate. Reads Claude Code's status JSON on stdin when
    /// given one.
    Statusline(StatuslineArgs),
    /// Serve the store to agents over MCP (stdio): search, list and read past sessions.
    /// `mcp install` registers it with Claude Code.
    #[cfg(feature = "mcp")]
    Mcp(crate::cli_mcp::McpArgs),
    /// Pick a session in a terminal UI: type to search titles, prompts and text (filters:
    /// project: tag: branch: host: since: until:), see its last messages, Enter to launch it
    /// in its folder, Ctrl-O to launch it here. Esc quits (exit 130).
    #[cfg(feature = "pick")]
    Pick(crate::cli_pick::PickArgs),
}

/// `--write-back` / `--no-write-back` (default: `write_back` of `sessiondb config`; unset,
/// rename, tag and fork write back when the session's file is there, append does not).
#[derive(Debug, Args)]
pub struct WriteBackArgs {
    /// Also write the change to Claude Code's file (only when it still holds exactly what
    /// was imported; otherwise exit 1 saying why, changing nothing). Without either flag,
    /// rename, tag and fork write back when the session's file is there (a file that moved
    /// on gets a warning, and the change is stored alone), unless `write_back` is set.
    #[arg(long, conflicts_with = "no_write_back")]
    pub write_back: bool,
    /// Keep the change in the database only, whatever the config says.
    #[arg(long)]
    pub no_write_back: bool,
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
    /// Require `Authorization: Bearer TOKEN` on every request, with the token read from the
    /// first line of FILE. Without it (and without --token) the token is $SESSIONDB_TOKEN.
    /// A token is required for any address but loopback.
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// The token on the command line. Other users of the machine can read it (`ps`): prefer
    /// --token-file or $SESSIONDB_TOKEN.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Also answer requests whose Host is NAME (a name this server is reached by, e.g. behind
    /// a proxy). NAME:PORT needs that port; NAME alone takes no port or the listening one.
    /// Repeatable. By default only the listening address (and, on loopback, localhost,
    /// 127.0.0.1 and [::1]) with its port is answered.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_host: Vec<AllowedHost>,
    /// Open the web viewer in the default browser ($BROWSER, else xdg-open / open / start)
    /// once the server listens.
    #[arg(long)]
    pub open: bool,
}

/// `sessiondb fork`.
#[derive(Debug, Args)]
pub struct ForkArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
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
    #[command(flatten)]
    pub write_back: WriteBackArgs,
}

/// `sessiondb append`.
#[derive(Debug, Args)]
pub struct AppendArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
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
    #[command(flatten)]
    pub write_back: WriteBackArgs,
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
    /// The model the resumed conversation will be sent to (Claude Code's --model; aliases
    /// such as `opus` are resolved). Default: the model of the session's last assistant
    /// message. Thinking of other models is left out of the API view.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Resume as this Claude Code version (X.Y.Z) does where versions differ. Before
    /// 2.1.333 (as 2.1.332): the attachment kinds auto_mode_rules, plugin_rules,
    /// projects_instructions, routine_fire and attachment_answer are unknown (a stored
    /// text is sent as stored, nothing is rendered from the payload, answers are not
    /// applied), a record's textRewritten is ignored, and auto mode rules after a tool
    /// result are folded into it. From 2.1.333 on (as 2.1.336, the newest checked; newer
    /// versions too): all of these are followed.
    #[arg(long, value_name = "V", default_value_t = CliVersion::NEWEST_CHECKED)]
    pub cli_version: CliVersion,
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
    #[arg(allow_hyphen_values = true)]
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
    #[arg(allow_hyphen_values = true)]
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
    /// Export lines that no longer match their checksum as stored, with a warning naming
    /// each, instead of failing (see `sessiondb check`).
    #[arg(long)]
    pub force: bool,
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
    /// Only sessions that came from this host (a PostgreSQL team store records the machine
    /// that imported or first wrote each session).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
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
    #[arg(allow_hyphen_values = true)]
    pub session: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb messages`.
#[derive(Debug, Args)]
pub struct MessagesArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
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
    #[arg(allow_hyphen_values = true)]
    pub session: String,
    /// Print JSON instead of one id per line.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb rename`.
#[derive(Debug, Args)]
pub struct RenameArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
    pub session: String,
    /// The new title (trimmed; must not be empty).
    pub title: String,
    #[command(flatten)]
    pub write_back: WriteBackArgs,
}

/// `sessiondb tag`.
#[derive(Debug, Args)]
#[command(override_usage = "sessiondb tag <SESSION> <TAG|--clear>")]
#[command(group(clap::ArgGroup::new("what").required(true).args(["tag", "clear"])))]
pub struct TagArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
    pub session: String,
    /// The tag (Unicode-cleaned and trimmed as the SDK does).
    pub tag: Option<String>,
    /// Remove the tag.
    #[arg(long)]
    pub clear: bool,
    #[command(flatten)]
    pub write_back: WriteBackArgs,
}

/// `sessiondb delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// A session id, a unique prefix of one, PROJECT/SESSION, or a unique custom title.
    #[arg(allow_hyphen_values = true)]
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

/// `sessiondb check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Repair what can be repaired, then check again.
    #[arg(long)]
    pub repair: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb compact`.
#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Compress only; leave the freed pages in the file (no VACUUM).
    #[arg(long)]
    pub no_vacuum: bool,
    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,
    /// Train a dictionary once the store holds this many bytes of lines (tests).
    #[arg(long, hide = true, value_name = "BYTES")]
    pub train_min_bytes: Option<u64>,
    /// Lines per transaction (tests).
    #[arg(long, hide = true, value_name = "LINES")]
    pub batch_lines: Option<usize>,
    /// zstd's level (measurements).
    #[arg(long, hide = true, value_name = "N")]
    pub level: Option<i32>,
    /// The size of a dictionary trained now, in bytes (measurements).
    #[arg(long, hide = true, value_name = "BYTES")]
    pub dict_bytes: Option<usize>,
    /// Stop after this many batches, as if killed (tests).
    #[arg(long, hide = true, value_name = "N")]
    pub stop_after_batches: Option<u64>,
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

/// `sessiondb sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The team store: a postgres:// or postgresql:// URL.
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The SQLite store to copy [default: the database, as --db and $SESSIONDB_PATH name it].
    #[arg(long, value_name = "PATH")]
    pub from: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn argv(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    /// `VERBS` lists the verbs of the whole grammar in its order, and each verb built alone
    /// has the arguments and sub-verbs it has there.
    #[test]
    fn verbs_are_the_grammars() {
        let whole = Cli::command();
        let names: Vec<&str> = whole.get_subcommands().map(|c| c.get_name()).collect();
        let table: Vec<&str> = VERBS.iter().map(|(name, _)| *name).collect();
        assert_eq!(table, names);
        let args = |c: &clap::Command| -> Vec<String> {
            c.get_arguments().map(|a| format!("{a:?}")).collect()
        };
        let subs = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands()
                .map(|s| format!("{} {:?}", s.get_name(), args(s)))
                .collect()
        };
        for (name, augment) in VERBS {
            let alone = augment(clap::Command::new(*name));
            let there = whole.find_subcommand(name).expect("listed above");
            assert_eq!(args(&alone), args(there), "{name}");
            assert_eq!(subs(&alone), subs(there), "{name}");
        }
    }

    /// A line the verb alone parses gives what the whole grammar gives.
    #[test]
    fn one_verb_parses_as_the_whole_grammar() {
        for line in [
            "sessiondb sessions --limit 1",
            "sessiondb --db x.db sessions --json --project p --limit 5 --offset 2",
            "sessiondb sessions --db x.db -q --color always",
            "sessiondb info abc --json",
            "sessiondb --db info info abc",
            "sessiondb --color never search two words --limit 3",
            "sessiondb tag s1 --clear",
            "sessiondb tag s1 red",
            "sessiondb config set write_back true",
            "sessiondb hooks install",
            "sessiondb man",
            "sessiondb resume s1 --api",
            "sessiondb messages s1 --json --limit 2",
            "sessiondb export --all --out d",
            "sessiondb import a b",
        ] {
            let whole = Cli::try_parse_from(argv(line)).expect(line);
            let alone = parse_one_verb(&argv(line)).expect(line);
            assert_eq!(format!("{alone:?}"), format!("{whole:?}"), "{line}");
        }
    }

    /// Help, the version, mistakes and a verb-like option value are left to the whole grammar.
    #[test]
    fn the_rest_is_left_to_the_whole_grammar() {
        for line in [
            "sessiondb",
            "sessiondb bogus",
            "sessiondb --version",
            "sessiondb sessions --help",
            "sessiondb help sessions",
            "sessiondb sessions --limit x",
            "sessiondb tag s1",
            "sessiondb --db info sessions",
        ] {
            assert!(parse_one_verb(&argv(line)).is_none(), "{line}");
        }
        let cli = Cli::try_parse_from(argv("sessiondb --db info sessions")).expect("parses");
        assert!(matches!(cli.command, Command::Sessions(_)));
        assert_eq!(cli.global.db, Some(PathBuf::from("info")));
    }
}
