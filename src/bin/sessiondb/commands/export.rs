//! `sessiondb export SESSION [-o FILE]` and `sessiondb export --all --out DIR [--project P]`.

use crate::cli::ExportArgs;
use crate::human::plural;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::export::{self, OnDamage};
use sessiondb::integrity::DamagedLine;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: ExportArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    if args.all {
        let dir = args.out.context("--all needs --out DIR")?;
        let project = args.project.as_deref().map(super::project_key);
        let report = store.export_tree(&dir, project.as_deref(), args.force)?;
        if args.json {
            print_json(&report)?;
        } else {
            crate::style::note(format_args!(
                "{}, {}, {} written to {} from {}",
                plural(report.sessions, "session", "sessions"),
                plural(report.files, "file", "files"),
                crate::human::size(report.bytes),
                dir.display(),
                super::shown(db)
            ));
        }
        warn_damaged(&report.damaged);
        for skipped in &report.skipped {
            eprintln!("warning: {skipped}");
        }
        if !report.skipped.is_empty() {
            anyhow::bail!(
                "{} stored files were not exported (see the warnings above)",
                report.skipped.len()
            );
        }
        return Ok(());
    }
    let arg = args.session.context("name a SESSION or pass --all")?;
    let session = store.resolve_session(&arg)?;
    let mut damaged = Vec::new();
    let on_damage = |damaged| {
        if args.force {
            OnDamage::Keep(damaged)
        } else {
            OnDamage::Fail
        }
    };
    match args.output {
        Some(file) => {
            let bytes = export::write_transcript_file(&file, |out| {
                store.export_session(&session, out, on_damage(&mut damaged))
            })
            .with_context(|| format!("cannot write {}", file.display()))?;
            if args.json {
                print_json(&serde_json::json!({
                    "session_id": session.session_id,
                    "project": session.project,
                    "path": file,
                    "bytes": bytes,
                }))?;
            }
        }
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let written = store.export_session(&session, &mut out, on_damage(&mut damaged));
            out.flush()?;
            written?;
        }
    }
    warn_damaged(&damaged);
    Ok(())
}

/// `--force` wrote these lines as stored: each gets a warning naming it.
fn warn_damaged(damaged: &[DamagedLine]) {
    for line in damaged {
        eprintln!("warning: {line}; exported as stored (--force)");
    }
}
