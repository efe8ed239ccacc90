//! `sessiondb append SESSION < entries.jsonl`.

use crate::cli::AppendArgs;
use crate::human::plural;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::record::{self, AppendOptions, Parent};
use sessiondb::write_back;
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
    let target = super::write_back_target(&store, &session, &args.write_back)?;
    let report = store.append_with(&session, &entries, &AppendOptions { parent })?;
    if let (Some(target), sessiondb::Db::Sqlite(store)) = (target, &store) {
        write_back::apply(store, &target)?;
        eprintln!("written back to {}", target.path.display());
    }
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
