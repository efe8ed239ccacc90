//! `sessiondb fork SESSION [--up-to UUID] [--title T] [--json]`.

use crate::cli::ForkArgs;
use crate::output::print_json;
use sessiondb::fork::ForkOptions;
use sessiondb::query;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: ForkArgs) -> anyhow::Result<()> {
    let store = super::open_existing(db)?;
    let source = query::resolve_session(&*store.reader()?, &args.session)?;
    let forked = store.fork(
        &source,
        &ForkOptions {
            up_to: args.up_to,
            title: args.title,
            session_id: args.session_id,
        },
    )?;
    if args.json {
        return print_json(&forked);
    }
    writeln!(std::io::stdout().lock(), "{}", forked.session_id)?;
    crate::style::note(format_args!(
        "forked {}/{} into {} in {}",
        source.project,
        source.session_id,
        forked.session_id,
        db.display()
    ));
    Ok(())
}
