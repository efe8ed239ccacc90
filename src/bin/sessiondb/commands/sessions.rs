//! `sessiondb sessions [--project P] [--json]`.

use crate::cli::SessionsArgs;
use crate::output::print_json;
use sessiondb::query;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: SessionsArgs) -> anyhow::Result<()> {
    let store = super::open(db)?;
    let project = args.project.as_deref().map(super::project_key);
    let sessions = query::list_sessions(&*store.reader()?, project.as_deref())?;
    if args.json {
        return print_json(&sessions);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<24}  {:<24}  {:>7}  {:<36}  PROJECT",
        "FIRST", "LAST", "ROWS", "SESSION"
    )?;
    for s in sessions {
        writeln!(
            out,
            "{:<24}  {:<24}  {:>7}  {:<36}  {}",
            s.first_timestamp.as_deref().unwrap_or("-"),
            s.last_timestamp.as_deref().unwrap_or("-"),
            s.rows,
            s.session_id,
            s.project
        )?;
    }
    Ok(())
}
