//! The grammar of `sessiondb stats` and `sessiondb statusline`, the token usage and cost
//! reports (beside `cli.rs`, which holds the store's verbs). Kept apart because their
//! report names and cost modes follow ccusage's, a contract of their own.

use clap::Args;
use std::path::PathBuf;

/// A report of `sessiondb stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsReport {
    /// Per day (`YYYY-MM-DD`).
    Daily,
    /// Per ISO week (`YYYY-Www`).
    Weekly,
    /// Per month (`YYYY-MM`).
    Monthly,
    /// Per session (sub-agents counted in their parent session).
    Session,
    /// Per project.
    Project,
    /// Per model.
    Model,
    /// Per 5-hour usage window; the open one with its burn rate and projection.
    Blocks,
}

/// Where costs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CostModeArg {
    /// The record's costUSD where it has one, else computed from the tokens.
    Auto,
    /// Always computed from the tokens and the pricing table.
    Calculate,
    /// The record's costUSD only (0 where it has none).
    Display,
}

/// `sessiondb stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The reports, in order [default: daily].
    #[arg(value_enum, value_name = "REPORT")]
    pub reports: Vec<StatsReport>,
    /// Only days at or after this one (YYYY-MM-DD or YYYYMMDD, in --timezone).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only days at or before this one (inclusive).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// The time zone days are cut in (an IANA name such as Europe/Paris, or UTC) [default:
    /// TZ, else the system's].
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,
    /// Only projects whose folder name or cwd contains P.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub project: Option<String>,
    /// Only responses made on this git branch.
    #[arg(long, value_name = "B")]
    pub branch: Option<String>,
    /// Only sessions with this tag.
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
    /// Only sessions from this machine (team store).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Per-model rows inside each row.
    #[arg(long)]
    pub breakdown: bool,
    /// Where costs come from.
    #[arg(long, value_enum, default_value_t = CostModeArg::Auto)]
    pub mode: CostModeArg,
    /// A pricing table to use instead of the embedded one (the same JSON shape).
    #[arg(long, value_name = "FILE")]
    pub pricing: Option<PathBuf>,
    /// Print JSON: a list of rows (an object of lists by report name when several reports
    /// are asked for).
    #[arg(long)]
    pub json: bool,
}

/// `sessiondb statusline`.
#[derive(Debug, Args)]
pub struct StatuslineArgs {
    /// A pricing table to use instead of the embedded one.
    #[arg(long, value_name = "FILE")]
    pub pricing: Option<PathBuf>,
}
