//! `sessiondb rename SESSION TITLE`.

use crate::cli::RenameArgs;
use sessiondb::write_back;
use std::path::Path;

pub fn run(db: &Path, args: RenameArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let session = store.resolve_session(&args.session)?;
    let target = super::write_back_target(&store, &session, &args.write_back)?;
    store.rename_session(&session, &args.title)?;
    crate::style::note(format_args!(
        "renamed {}/{} in {}",
        session.project,
        session.session_id,
        super::shown(db)
    ));
    if let (Some(target), sessiondb::Db::Sqlite(store)) = (target, &store) {
        write_back::apply(store, &target)?;
        crate::style::note(format_args!("written back to {}", target.path.display()));
    }
    Ok(())
}
