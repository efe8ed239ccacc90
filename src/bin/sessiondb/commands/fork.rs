//! `sessiondb fork SESSION [--up-to UUID] [--title T] [--json]`.

use crate::cli::ForkArgs;
use crate::output::print_json;
use sessiondb::fork::ForkOptions;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: ForkArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let source = store.resolve_session(&args.session)?;
    // Only a SQLite store writes the fork for Claude Code on this machine (as rename and
    // tag write back): a team store's session may come from another machine.
    let mode = super::write_back_mode(&args.write_back, super::WriteBack::WhenPresent)?;
    // Warns when the flags or the config ask for a write-back that cannot be made.
    let write_back = super::write_back_target(&store, &source, mode)?.is_some();
    let forked = store.fork(
        &source,
        &ForkOptions {
            up_to: args.up_to,
            title: args.title,
            session_id: args.session_id,
        },
    )?;
    if write_back {
        let path = store.write_back_new(&source, &forked.session)?;
        eprintln!("written for Claude Code to {}", path.display());
    }
    if args.json {
        return print_json(&forked);
    }
    writeln!(std::io::stdout().lock(), "{}", forked.session_id)?;
    crate::style::note(format_args!(
        "forked {}/{} into {} in {}",
        source.project,
        source.session_id,
        forked.session_id,
        super::shown(db)
    ));
    Ok(())
}
