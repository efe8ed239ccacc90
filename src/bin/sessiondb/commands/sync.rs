//! `sessiondb sync --to URL [--from PATH] [--json]`.

use crate::cli::SyncArgs;
use crate::human;
use crate::output::{print_json, Bar};
use crate::style;
use sessiondb::pg::sync::{sync, SyncReport};
use sessiondb::pg::url::{is_postgres_url, redact};
use sessiondb::pg::PgStore;
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn run(db: Option<PathBuf>, args: SyncArgs) -> anyhow::Result<()> {
    if !is_postgres_url(&args.to) {
        anyhow::bail!(
            "--to must name a PostgreSQL team store (postgres://… or postgresql://…), not {}",
            human::safe_text(&redact(&args.to))
        );
    }
    let from = match args.from {
        Some(path) => path,
        None => super::database_path(db)?,
    };
    if is_postgres_url(&from.to_string_lossy()) {
        anyhow::bail!(
            "sync copies a local SQLite store: --from (or --db / SESSIONDB_PATH) names {}, a \
             PostgreSQL URL; pass --from PATH",
            redact(&from.to_string_lossy())
        );
    }
    let source = super::open_read(&from)?;
    let target = PgStore::connect(&args.to)?;
    let bar = Bar::new("syncing");
    let report = sync(&source, &target, &bar)?;
    if args.json {
        print_json(&report)?;
    } else if !style::quiet() {
        let mut out = crate::output::stdout();
        summary(&mut out, &report, &from, target.shown())?;
        out.flush()?;
    }
    for conflict in &report.conflicts {
        style::warn(format_args!("{}", human::safe_text(conflict)));
    }
    if !report.conflicts.is_empty() {
        anyhow::bail!(
            "{} not synced (see above)",
            human::plural(report.conflicts.len() as u64, "file", "files")
        );
    }
    Ok(())
}

/// The human summary: what the local store holds, what was sent, and where.
fn summary(out: &mut impl Write, r: &SyncReport, from: &Path, to: &str) -> std::io::Result<()> {
    let mut sent = vec![
        format!("{} copied", r.transcripts_copied),
        format!("{} extended", r.transcripts_extended),
    ];
    if r.transcripts_replaced > 0 {
        sent.push(format!("{} replaced", r.transcripts_replaced));
    }
    sent.push(format!("{} unchanged", r.transcripts_unchanged));
    writeln!(
        out,
        "{} ({}), {} ({} copied, {} unchanged), {} ({} new)",
        human::plural(r.transcripts, "transcript", "transcripts"),
        sent.join(", "),
        human::plural(r.files, "session file", "session files"),
        r.files_copied,
        r.files_unchanged,
        human::plural(r.sessions, "session", "sessions"),
        r.sessions_created
    )?;
    writeln!(
        out,
        "{} and {} sent in {}",
        human::plural(r.rows_sent, "line", "lines"),
        human::size(r.bytes_sent),
        human::seconds(r.seconds)
    )?;
    writeln!(out, "from {} to {}", from.display(), human::safe_text(to))
}
