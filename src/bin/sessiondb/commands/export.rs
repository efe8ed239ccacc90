//! `sessiondb export SESSION [-o FILE]` and `sessiondb export --all --out DIR [--project P]`.

use crate::cli::ExportArgs;
use crate::human::plural;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::export;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: ExportArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    if args.all {
        let dir = args.out.context("--all needs --out DIR")?;
        let project = args.project.as_deref().map(super::project_key);
        let report = store.export_tree(&dir, project.as_deref())?;
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
    match args.output {
        Some(file) => {
            let bytes = export::write_atomically(&file, |out| store.export_session(&session, out))
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
            store.export_session(&session, &mut out)?;
            out.flush()?;
        }
    }
    Ok(())
}
