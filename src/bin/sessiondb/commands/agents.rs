//! `sessiondb agents SESSION [--json]`.

use crate::cli::AgentsArgs;
use crate::output::print_json;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: AgentsArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    let session = store.resolve_session(&args.session)?;
    let agents = store.list_subagents(&session)?;
    if args.json {
        return print_json(&agents);
    }
    let mut out = std::io::stdout().lock();
    for id in agents {
        writeln!(out, "{id}")?;
    }
    Ok(())
}
