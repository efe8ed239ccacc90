//! `sessiondb rename SESSION TITLE`.

use crate::cli::RenameArgs;
use sessiondb::{metadata, query};
use std::path::Path;

pub fn run(db: &Path, args: RenameArgs) -> anyhow::Result<()> {
    let store = super::open_existing(db)?;
    let session = query::resolve_session(&*store.reader()?, &args.session)?;
    super::with_write_back(&store, &session, &args.write_back, || {
        metadata::rename_session(&store, &session, &args.title)?;
        crate::style::note(format_args!(
            "renamed {}/{} in {}",
            session.project,
            session.session_id,
            db.display()
        ));
        Ok(())
    })
}
