//! `sessiondb check [--repair] [--json]`.

use crate::cli::CheckArgs;
use crate::human::plural;
use crate::output::outln;
use crate::output::print_json;
use sessiondb::check::CheckReport;
use std::path::Path;

pub fn run(db: &Path, args: CheckArgs) -> anyhow::Result<()> {
    let store = if args.repair {
        super::open_db_existing(db)?
    } else {
        super::open_db_read(db)?
    };
    let report = store.check(args.repair)?;
    let shown = super::shown(db);
    if args.json {
        print_json(&report)?;
    } else {
        print_human(&shown, &report);
    }
    if !report.ok {
        let left = report.remaining.as_ref().unwrap_or(&report.problems).len();
        anyhow::bail!(
            "{} in {}",
            plural(left as u64, "problem", "problems"),
            shown
        );
    }
    Ok(())
}

fn print_human(shown: &str, report: &CheckReport) {
    match report.vectors_checked {
        Some(vectors) => outln!(
            "checked {} and {} in {shown}",
            plural(vectors, "search index entry", "search index entries"),
            plural(
                report.sessions_checked,
                "session listing",
                "session listings"
            ),
        ),
        None => outln!(
            "checked {}, {} and the search index in {shown}",
            plural(report.lines_checked, "line", "lines"),
            plural(
                report.sessions_checked,
                "session listing",
                "session listings"
            ),
        ),
    }
    if report.lines_unsummed > 0 {
        outln!(
            "{} stored before checksums existed were not checked (check --repair sums them)",
            plural(report.lines_unsummed, "line", "lines")
        );
    }
    for problem in &report.problems {
        outln!("problem: {problem}");
    }
    if let Some(repair) = &report.repair {
        for restored in &repair.restored {
            outln!(
                "repaired: line {} of {} read again from {}",
                restored.line.line,
                restored.line.file,
                restored.source.display()
            );
        }
        if repair.summed > 0 {
            outln!(
                "repaired: {} given a checksum",
                plural(repair.summed, "line", "lines")
            );
        }
        if repair.search_index_rebuilt {
            outln!("repaired: search index rebuilt");
        }
        if repair.catalog_rebuilt > 0 {
            outln!(
                "repaired: {} recomputed",
                plural(
                    repair.catalog_rebuilt,
                    "session listing",
                    "session listings"
                )
            );
        }
        for left in &repair.not_repaired {
            outln!("not repaired: {}: {}", left.problem, left.reason);
        }
    }
    if let Some(remaining) = &report.remaining {
        for problem in remaining {
            outln!("still: {problem}");
        }
    }
    if report.ok {
        outln!("ok");
    }
}
