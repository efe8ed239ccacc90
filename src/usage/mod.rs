//! Usage and cost (docs/usage.md): a projection of every billed API response, kept at import
//! in the transaction that stores its line, and the reports `sessiondb stats` prints.
//!
//! - [`record`]: a line → its responses, and the dedupe rule (pure).
//! - [`pricing`]: the prices, as data.
//! - [`report`]: responses → rows of a report (pure).
//! - [`sqlite`] and [`pg`]: the projection on each engine (one hook each, the rebuild, the read).

#[cfg(feature = "postgres")]
pub mod pg;
pub mod pricing;
pub mod record;
pub mod report;
pub mod sqlite;

use pricing::Tokens;

/// One stored response, as the reports read it.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRow {
    /// The session id (sub-agents' responses carry their parent's).
    pub session: String,
    /// The project folder name.
    pub project: String,
    /// The session's cwd, where known.
    pub project_cwd: Option<String>,
    /// The session's tag.
    pub tag: Option<String>,
    /// The machine the session came from (team store only).
    pub host: Option<String>,
    /// The sub-agent that made the request, `None` for the main agent.
    pub agent: Option<String>,
    /// The model.
    pub model: String,
    /// When, epoch milliseconds.
    pub timestamp_ms: i64,
    /// The git branch the record names.
    pub branch: Option<String>,
    /// The counts.
    pub tokens: Tokens,
    /// The record's own `costUSD`.
    pub recorded_cost_usd: Option<f64>,
}

/// Which stored responses a read returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// All of them.
    All,
    /// Those at or after this time, epoch ms.
    Since(i64),
    /// Those of the session with this id.
    Session(String),
}
