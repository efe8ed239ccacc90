//! `sessiondb tag SESSION TAG` and `sessiondb tag SESSION --clear`.

use crate::cli::TagArgs;
use sessiondb::write_back;
use std::path::Path;

pub fn run(db: &Path, args: TagArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let session = store.resolve_session(&args.session)?;
    let tag = if args.clear {
        None
    } else {
        args.tag.as_deref()
    };
    let target = super::write_back_target(&store, &session, &args.write_back)?;
    store.tag_session(&session, tag)?;
    let what = if tag.is_some() {
        "tagged"
    } else {
        "cleared the tag of"
    };
    crate::style::note(format_args!(
        "{what} {}/{} in {}",
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
