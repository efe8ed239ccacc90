//! `sessiondb agents SESSION [--json]`.

use crate::cli::AgentsArgs;
use crate::output::print_json;
use sessiondb::{query, sdk};
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: AgentsArgs) -> anyhow::Result<()> {
    let store = super::open_read(db)?;
    let conn = store.reader()?;
    let session = query::resolve_session(&conn, &args.session)?;
    let agents = sdk::list_subagents(&conn, &session)?;
    if args.json {
        return print_json(&agents);
    }
    let mut out = std::io::stdout().lock();
    for id in agents {
        writeln!(out, "{id}")?;
    }
    Ok(())
}
