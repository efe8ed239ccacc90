//! `sessiondb reindex [--json]`.

use crate::cli::ReindexArgs;
use crate::output::print_json;
use sessiondb::search;
use std::path::Path;

pub fn run(db: &Path, args: ReindexArgs) -> anyhow::Result<()> {
    let store = super::open_existing(db)?;
    let report = search::reindex(&store)?;
    if args.json {
        return print_json(&report);
    }
    println!(
        "{} records indexed, {} catalog entries recomputed",
        report.indexed, report.sessions
    );
    Ok(())
}
