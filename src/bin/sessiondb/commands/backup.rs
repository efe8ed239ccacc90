//! `sessiondb backup DEST [--json]`.

use crate::cli::BackupArgs;
use crate::output::print_json;
use std::path::Path;

pub fn run(db: &Path, args: BackupArgs) -> anyhow::Result<()> {
    let store = super::open_read(db)?;
    let report = sessiondb::backup::backup(&store, &args.dest)?;
    if args.json {
        return print_json(&report);
    }
    eprintln!(
        "backed up {} to {} ({} bytes)",
        report.source.display(),
        report.destination.display(),
        report.bytes
    );
    Ok(())
}
