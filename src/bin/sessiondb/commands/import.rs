//! `sessiondb import [PATH…]`.

use crate::cli::ImportArgs;
use crate::human;
use crate::output::{print_json, Bar};
use crate::style;
use anyhow::Context;
use sessiondb::model::ImportReport;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `import` and `watch` read: the PATHs given, else Claude Code's projects folder;
/// each must exist (a mistyped path is an error, not an empty import).
pub fn roots(paths: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
    let roots = if paths.is_empty() {
        let dir = sessiondb::paths::default_projects_dir()
            .context("no PATH given and neither CLAUDE_CONFIG_DIR nor HOME is set")?;
        vec![dir]
    } else {
        paths
    };
    for root in &roots {
        if !root.exists() {
            anyhow::bail!("{} does not exist", root.display());
        }
    }
    Ok(roots)
}

pub fn run(db: &Path, args: ImportArgs) -> anyhow::Result<()> {
    let paths = roots(args.paths)?;
    let store = super::open_db(db)?;
    let bar = Bar::new("importing");
    let report = store.import_paths(&paths, &bar)?;
    if args.json {
        print_json(&report)?;
    } else if !style::quiet() {
        let mut out = crate::output::stdout();
        summary(&mut out, &report, &super::shown(db))?;
        out.flush()?;
    }
    for line in &report.malformed {
        style::warn(format_args!(
            "{line}: not a JSON object (kept verbatim, skipped on resume)"
        ));
    }
    let listed = report.malformed.len() as u64;
    if report.malformed_lines > listed {
        style::warn(format_args!(
            "{} more",
            human::plural(
                report.malformed_lines - listed,
                "malformed line",
                "malformed lines"
            )
        ));
    }
    for named in &report.named_by_records {
        style::note(format_args!(
            "{}: the file name is not a session id; stored as session {}, the id its records \
             carry",
            named.path.display(),
            named.session_id
        ));
    }
    for file in &report.suspicious_files {
        style::warn(format_args!(
            "{}: {} of {} {} not JSON — is this a transcript? (stored as it is)",
            file.path.display(),
            file.malformed,
            file.lines,
            if file.lines == 1 {
                "line is"
            } else {
                "lines are"
            }
        ));
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
        anyhow::bail!(
            "{} could not be imported",
            human::plural(report.files_failed, "file", "files")
        );
    }
    if report.files == 0 {
        anyhow::bail!(
            "nothing importable found in {}: no .jsonl transcripts",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if report.files_imported > 0 && report.suspicious_files.len() as u64 == report.files_imported {
        anyhow::bail!("nothing importable found: no file that was read looks like a transcript");
    }
    Ok(())
}

/// The human summary: what was found, what was stored, how fast, and where.
fn summary(out: &mut impl Write, r: &ImportReport, db: &str) -> std::io::Result<()> {
    let mut found = vec![
        format!("{} imported", r.files_imported),
        format!("{} unchanged", r.files_unchanged),
    ];
    if r.files_rewritten > 0 {
        found.push(format!("{} rewritten", r.files_rewritten));
    }
    if r.files_failed > 0 {
        found.push(format!("{} failed", r.files_failed));
    }
    writeln!(
        out,
        "{} ({}), {}",
        human::plural(r.files, "file", "files"),
        found.join(", "),
        human::plural(r.sessions, "session", "sessions")
    )?;
    let mut odd = vec![human::plural(
        r.malformed_lines,
        "malformed line",
        "malformed lines",
    )];
    if r.unknown_types > 0 {
        odd.push(human::plural(
            r.unknown_types,
            "record of a kind sessiondb does not know yet",
            "records of kinds sessiondb does not know yet",
        ));
    }
    if r.unknown_fields > 0 {
        odd.push(human::plural(
            r.unknown_fields,
            "field sessiondb does not know yet",
            "fields sessiondb does not know yet",
        ));
    }
    // Said in the words of the transcripts (lines, records, fields), not of the schema.
    let kept = if r.unknown_types + r.unknown_fields > 0 {
        " (all kept as written)"
    } else {
        ""
    };
    writeln!(
        out,
        "{}, {} new; {}{kept}",
        human::plural(r.rows, "line", "lines"),
        r.new_rows,
        odd.join(", ")
    )?;
    let vanished = if r.vanished_files > 0 {
        format!(
            "; {} gone from disk (their lines are kept)",
            human::plural(r.vanished_files, "source file", "source files")
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "{} read in {} ({}){vanished}",
        human::size(r.bytes_read),
        human::seconds(r.seconds),
        human::rate(r.mb_per_s)
    )?;
    if r.symlinks_skipped > 0 {
        writeln!(
            out,
            "{} inside the scanned folders skipped (not followed)",
            human::plural(r.symlinks_skipped, "symbolic link", "symbolic links")
        )?;
    }
    writeln!(out, "database {db}")
}
