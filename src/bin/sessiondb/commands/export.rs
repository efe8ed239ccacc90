//! `sessiondb export SESSION [-o FILE]` and `sessiondb export --all --out DIR [--project P]`.

use crate::cli::ExportArgs;
use crate::human::plural;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::{export, query};
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: ExportArgs) -> anyhow::Result<()> {
    let store = super::open_read(db)?;
    if args.all {
        let dir = args.out.context("--all needs --out DIR")?;
        let project = args.project.as_deref().map(super::project_key);
        let report = export::export_tree(&store, &dir, project.as_deref())?;
        if args.json {
            print_json(&report)?;
        } else {
            crate::style::note(format_args!(
                "{}, {}, {} written to {} from {}",
                plural(report.sessions, "session", "sessions"),
                plural(report.files, "file", "files"),
                crate::human::size(report.bytes),
                dir.display(),
                db.display()
            ));
        }
        return Ok(());
    }
    let arg = args.session.context("name a SESSION or pass --all")?;
    let session = query::resolve_session(&*store.reader()?, &arg)?;
    match args.output {
        Some(file) => {
            let bytes = export::write_atomically(&file, |out| {
                export::export_session(&store, &session, out)
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
            export::export_session(&store, &session, &mut out)?;
            out.flush()?;
        }
    }
    Ok(())
}
