//! `sessiondb reindex [--json]`.

use crate::cli::ReindexArgs;
use crate::output::print_json;
use std::path::Path;

pub fn run(db: &Path, args: ReindexArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let report = store.reindex()?;
    if args.json {
        return print_json(&report);
    }
    crate::style::note(format_args!(
        "{} indexed, {} recomputed in {}",
        crate::human::plural(report.indexed as u64, "record", "records"),
        crate::human::plural(
            report.sessions as u64,
            "session listing",
            "session listings"
        ),
        super::shown(db)
    ));
    Ok(())
}
