//! `sessiondb restore SESSION [--config-dir DIR] [--cwd PATH] [--as-new]`.

use crate::cli_setup::RestoreArgs;
use crate::output::print_json;
use anyhow::Context;
use sessiondb::model::SessionRef;
use sessiondb::restore::{self, RestoreOptions, RestoreReport};
use sessiondb::Db;
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn run(db: &Path, args: RestoreArgs) -> anyhow::Result<()> {
    let store = super::open_db(db)?;
    let session = store.resolve_session(&args.session)?;
    let report = restore_session(
        &store,
        &session,
        args.target.config_dir,
        args.target.cwd,
        args.as_new,
        false,
    )?;
    if args.json {
        return print_json(&report);
    }
    if report.forked_from.is_some() {
        // The new id is the answer: print it alone on standard output.
        writeln!(std::io::stdout().lock(), "{}", report.session_id)?;
    }
    describe(&report);
    Ok(())
}

/// Restores a session into `config_dir` (default: Claude Code's); shared with `launch`.
pub fn restore_session(
    store: &Db,
    session: &SessionRef,
    config_dir: Option<PathBuf>,
    cwd: Option<PathBuf>,
    as_new: bool,
    import_newer: bool,
) -> anyhow::Result<RestoreReport> {
    let config_dir = match config_dir {
        Some(dir) => dir,
        None => restore::default_config_dir()
            .context("no --config-dir given and neither CLAUDE_CONFIG_DIR nor HOME is set")?,
    };
    let options = RestoreOptions {
        config_dir,
        cwd,
        as_new,
        import_newer,
    };
    Ok(store.restore(session, &options)?)
}

/// A short account on standard error.
pub fn describe(report: &RestoreReport) {
    if let Some(source) = &report.forked_from {
        eprintln!(
            "a different file was in the way: restored {source} as the new session {}",
            report.session_id
        );
    }
    if report.imported_first > 0 {
        eprintln!(
            "imported what Claude Code wrote since the last import ({} {})",
            report.imported_first,
            if report.imported_first == 1 {
                "file"
            } else {
                "files"
            }
        );
    }
    eprintln!(
        "restored {} to {} ({} files written, {} already there)",
        report.session_id,
        report.project_dir.display(),
        report.written,
        report.unchanged
    );
    if let (Some(from), Some(to)) = (&report.recorded_cwd, &report.cwd) {
        eprintln!(
            "cwd {} -> {} in {} records",
            from.escape_debug(),
            to.escape_debug(),
            report.rewritten_records
        );
    }
}
