//! `sessiondb rename SESSION TITLE`.

use crate::cli::RenameArgs;
use std::path::Path;

pub fn run(db: &Path, args: RenameArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let session = store.resolve_session(&args.session)?;
    let mode = super::write_back_mode(&args.write_back, super::WriteBack::WhenPresent)?;
    super::with_write_back(&store, &session, mode, || {
        store.rename_session(&session, &args.title)?;
        crate::style::note(format_args!(
            "renamed {}/{} in {}",
            session.project,
            session.session_id,
            super::shown(db)
        ));
        Ok(())
    })
}
