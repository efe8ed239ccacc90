//! `sessiondb import [PATH…]`.

use crate::cli::ImportArgs;
use crate::output::{print_json, Bar};
use anyhow::Context;
use sessiondb::import::import_paths;
use std::path::Path;

pub fn run(db: &Path, args: ImportArgs) -> anyhow::Result<()> {
    let paths = if args.paths.is_empty() {
        let dir = sessiondb::paths::default_projects_dir()
            .context("no PATH given and neither CLAUDE_CONFIG_DIR nor HOME is set")?;
        vec![dir]
    } else {
        args.paths
    };
    for path in &paths {
        if !path.exists() {
            anyhow::bail!("{} does not exist", path.display());
        }
    }
    let store = super::open(db)?;
    let bar = Bar::new("importing");
    let report = import_paths(&store, &paths, &bar)?;
    if args.json {
        print_json(&report)?;
    } else {
        println!(
            "{} files ({} imported, {} unchanged, {} rewritten, {} failed), {} sessions",
            report.files,
            report.files_imported,
            report.files_unchanged,
            report.files_rewritten,
            report.files_failed,
            report.sessions
        );
        println!(
            "{} rows, {} new; {} malformed lines, {} unknown record types, {} unknown fields",
            report.rows,
            report.new_rows,
            report.malformed_lines,
            report.unknown_types,
            report.unknown_fields
        );
        println!(
            "{:.1} MB read in {:.2} s ({:.1} MB/s){}",
            report.bytes_read as f64 / 1e6,
            report.seconds,
            report.mb_per_s,
            if report.vanished_files > 0 {
                format!(
                    "; {} source files vanished (rows kept)",
                    report.vanished_files
                )
            } else {
                String::new()
            }
        );
        if report.symlinks_skipped > 0 {
            println!(
                "{} symbolic links inside the scanned folders skipped (not followed)",
                report.symlinks_skipped
            );
        }
    }
    for line in &report.malformed {
        eprintln!("warning: {line}: not a JSON object (kept verbatim, skipped on resume)");
    }
    if report.malformed_lines > report.malformed.len() as u64 {
        eprintln!(
            "warning: {} more malformed lines",
            report.malformed_lines - report.malformed.len() as u64
        );
    }
    for error in &report.errors {
        eprintln!("error: {error}");
    }
    if report.bad_names > 0 {
        return Err(sessiondb::Error::BadName(format!(
            "{} files refused for their names (see above); {} files could not be imported",
            report.bad_names, report.files_failed
        ))
        .into());
    }
    if report.files_failed > 0 {
        anyhow::bail!("{} files could not be imported", report.files_failed);
    }
    Ok(())
}
