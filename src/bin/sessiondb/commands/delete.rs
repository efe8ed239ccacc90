//! `sessiondb delete SESSION [--yes]`: asks on a terminal, refuses without one unless --yes.

use crate::cli::DeleteArgs;
use crate::human::plural;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

pub fn run(db: &Path, args: DeleteArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let session = store.resolve_session(&args.session)?;
    let info = store.session_info(&session, None)?;
    if !args.yes {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            anyhow::bail!(
                "refusing to delete {}/{} without confirmation: pass --yes",
                session.project,
                session.session_id
            );
        }
        let mut err = std::io::stderr().lock();
        write!(
            err,
            "Delete {}/{} ({}; {}, {}) from {}? [y/N] ",
            session.project,
            session.session_id,
            crate::human::one_line(info.title().unwrap_or("untitled")),
            plural(info.message_count as u64, "message", "messages"),
            plural(info.subagent_count as u64, "sub-agent", "sub-agents"),
            super::shown(db)
        )?;
        err.flush()?;
        let mut answer = String::new();
        stdin.lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
            anyhow::bail!("not deleted");
        }
    }
    let report = store.delete_session(&session)?;
    crate::style::note(format_args!(
        "deleted {}/{} from {}: {}, {}, {} (source files on disk are untouched)",
        report.project,
        report.session_id,
        super::shown(db),
        plural(report.transcripts as u64, "transcript", "transcripts"),
        plural(report.rows as u64, "line", "lines"),
        plural(report.files as u64, "file", "files")
    ));
    Ok(())
}
