//! `sessiondb tag SESSION TAG` and `sessiondb tag SESSION --clear`.

use crate::cli::TagArgs;
use std::path::Path;

pub fn run(db: &Path, args: TagArgs) -> anyhow::Result<()> {
    let store = super::open_db_existing(db)?;
    let session = store.resolve_session(&args.session)?;
    let tag = if args.clear {
        None
    } else {
        args.tag.as_deref()
    };
    let mode = super::write_back_mode(&args.write_back, super::WriteBack::WhenPresent)?;
    super::with_write_back(&store, &session, mode, || {
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
        Ok(())
    })
}
