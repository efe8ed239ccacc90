//! `sessiondb append SESSION < entries.jsonl`.

use crate::cli::AppendArgs;
use crate::human::plural;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::record::{self, AppendOptions, Parent};
use std::io::Read;
use std::path::Path;

pub fn run(db: &Path, args: AppendArgs) -> anyhow::Result<()> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .context("cannot read entries from standard input")?;
    // Checked before the database is touched: a bad line stores nothing.
    let entries = record::parse_batch(&input).context("standard input")?;
    let store = super::open_db(db)?;
    let session = store.resolve_session(&args.session)?;
    let parent = match (args.parent, args.root) {
        (Some(uuid), _) => Parent::Uuid(uuid),
        (None, true) => Parent::Root,
        (None, false) => Parent::Leaf,
    };
    let mode = super::write_back_mode(&args.write_back, super::WriteBack::Off)?;
    let report = super::with_write_back(&store, &session, mode, || {
        Ok(store.append_with(&session, &entries, &AppendOptions { parent })?)
    })?;
    if args.json {
        return print_json(&report);
    }
    crate::style::note(format_args!(
        "appended {} ({}, {} already recorded) to {}/{} in {}",
        plural(report.written, "line", "lines"),
        plural(report.messages, "message", "messages"),
        report.duplicates,
        report.project,
        report.session_id,
        super::shown(db)
    ));
    Ok(())
}
