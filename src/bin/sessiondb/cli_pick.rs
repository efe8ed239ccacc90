//! The grammar of `sessiondb pick` (beside `cli.rs`, which holds most verbs).

use clap::Args;

/// `sessiondb pick`.
#[derive(Debug, Args)]
pub struct PickArgs {
    /// What to start with in the search line: words, and filters such as `project:myapp`,
    /// `tag:review`, `branch:main`, `host:laptop`, `since:3d`, `until:2026-01-31`.
    pub query: Vec<String>,
}
