//! `sessiondb rename SESSION TITLE`.

use crate::cli::RenameArgs;
use sessiondb::{metadata, query, write_back};
use std::path::Path;

pub fn run(db: &Path, args: RenameArgs) -> anyhow::Result<()> {
    let store = super::open_existing(db)?;
    let session = query::resolve_session(&*store.reader()?, &args.session)?;
    let target = if super::write_back_wanted(&args.write_back)? {
        Some(write_back::check(&store, &session)?)
    } else {
        None
    };
    metadata::rename_session(&store, &session, &args.title)?;
    crate::style::note(format_args!(
        "renamed {}/{} in {}",
        session.project,
        session.session_id,
        db.display()
    ));
    if let Some(target) = target {
        write_back::apply(&store, &target)?;
        crate::style::note(format_args!("written back to {}", target.path.display()));
    }
    Ok(())
}
