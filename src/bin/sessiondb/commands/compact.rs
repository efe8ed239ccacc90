//! `sessiondb compact [--no-vacuum] [--json]`.

use crate::cli::CompactArgs;
use crate::output::{print_json, Bar};
use sessiondb::compact::CompactOptions;
use std::path::Path;

pub fn run(db: &Path, args: CompactArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let mut options = CompactOptions {
        vacuum: !args.no_vacuum,
        stop_after_batches: args.stop_after_batches,
        ..CompactOptions::default()
    };
    if let Some(bytes) = args.train_min_bytes {
        options.tuning.train_min_bytes = bytes;
    }
    if let Some(level) = args.level {
        options.tuning.level = level;
    }
    if let Some(bytes) = args.dict_bytes {
        options.tuning.dict_bytes = bytes;
    }
    if let Some(lines) = args.batch_lines {
        options.batch_lines = lines.max(1);
    }
    let bar = Bar::lines("compacting");
    let report = store.compact(&options, &bar)?;
    if args.json {
        return print_json(&report);
    }
    let shown = super::shown(db);
    let Some(_) = report.dictionary else {
        crate::style::note(format_args!(
            "{shown} holds too few lines to train a compression dictionary on; nothing to do"
        ));
        return Ok(());
    };
    crate::style::note(format_args!(
        "compressed {} in {shown}: {} MB → {} MB{}",
        crate::human::plural(report.lines_compressed, "line", "lines"),
        report.bytes_before >> 20,
        report.bytes_after >> 20,
        if report.trained {
            " (with a dictionary trained now)"
        } else {
            ""
        }
    ));
    if report.interrupted {
        crate::style::note(format_args!("stopped early; run compact again to go on"));
    } else if report.vacuumed {
        crate::style::note(format_args!(
            "database file {} MB → {} MB",
            report.file_bytes_before >> 20,
            report.file_bytes_after >> 20
        ));
    }
    Ok(())
}
