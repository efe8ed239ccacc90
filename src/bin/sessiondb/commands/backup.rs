//! `sessiondb backup DEST [--json]`: SQLite's online backup of a store file, or `pg_dump`'s
//! custom format of a team store.

use crate::cli::BackupArgs;
use crate::output::print_json;
use std::path::Path;

pub fn run(db: &Path, args: BackupArgs) -> anyhow::Result<()> {
    if super::is_team_store(db) {
        let url = db.to_str().expect("a team store URL is UTF-8");
        let report = sessiondb::pg::backup::backup(url, &args.dest)?;
        if args.json {
            return print_json(&report);
        }
        note_stale(report.stale_temporaries_removed);
        eprintln!(
            "backed up {} to {} ({} bytes, pg_dump's custom format: pg_restore reads it back)",
            report.source,
            report.destination.display(),
            report.bytes
        );
        return Ok(());
    }
    let store = super::open_read(db)?;
    let report = sessiondb::backup::backup(&store, &args.dest)?;
    if args.json {
        return print_json(&report);
    }
    note_stale(report.stale_temporaries_removed);
    eprintln!(
        "backed up {} to {} ({} bytes)",
        report.source.display(),
        report.destination.display(),
        report.bytes
    );
    Ok(())
}

/// Says when earlier, killed backups' temporary files were removed.
fn note_stale(removed: u64) {
    if removed > 0 {
        eprintln!(
            "removed {} left beside the destination by a backup that was killed",
            crate::human::plural(removed, "temporary file", "temporary files")
        );
    }
}
