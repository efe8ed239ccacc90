//! `sessiondb sessions [--project P] [--tag T] [--name TEXT] [--branch B] [--since T]
//! [--until T] [--limit N] [--offset N] [--all] [--json]`.

use crate::cli::SessionsArgs;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::query::{self, SessionFilter};
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: SessionsArgs) -> anyhow::Result<()> {
    let store = super::open_read(db)?;
    let directory = args.project.as_deref().and_then(super::project_directory);
    let filter = SessionFilter {
        project: args.project.as_deref().map(super::project_key),
        directory,
        tag: args.tag,
        name: args.name,
        branch: args.branch,
        since: args.since.as_deref().map(parse_time).transpose()?,
        until: args.until.as_deref().map(parse_time).transpose()?,
        limit: args.limit,
        offset: args.offset,
        include_hidden: args.all,
    };
    let sessions = query::list_sessions(&*store.reader()?, &filter)?;
    if args.json {
        return print_json(&sessions);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<20}  {:<36}  {:>5}  {:<12}  TITLE",
        "MODIFIED", "SESSION", "MSGS", "TAG"
    )?;
    for s in sessions {
        let modified = sessiondb::time::format_ms(s.last_modified);
        writeln!(
            out,
            "{:<20}  {:<36}  {:>5}  {:<12}  {}",
            &modified[..19],
            s.session_id,
            s.message_count,
            s.tag.as_deref().unwrap_or("-"),
            s.summary.as_deref().unwrap_or("-")
        )?;
    }
    Ok(())
}

/// `--since`/`--until`: an RFC 3339 time or date, epoch milliseconds, or an age such as
/// `3d`, `12h`, `30m`, `2w` (that long before now).
pub fn parse_time(text: &str) -> anyhow::Result<i64> {
    sessiondb::time::parse_time_filter(text)
        .with_context(|| format!("{text:?} is not a time (try 2026-01-31, 3d or 12h)"))
}
