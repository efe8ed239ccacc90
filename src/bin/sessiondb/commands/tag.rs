//! `sessiondb tag SESSION TAG` and `sessiondb tag SESSION --clear`.

use crate::cli::TagArgs;
use sessiondb::{metadata, query};
use std::path::Path;

pub fn run(db: &Path, args: TagArgs) -> anyhow::Result<()> {
    let store = super::open_existing(db)?;
    let session = query::resolve_session(&*store.reader()?, &args.session)?;
    let tag = if args.clear {
        None
    } else {
        args.tag.as_deref()
    };
    super::with_write_back(&store, &session, &args.write_back, || {
        metadata::tag_session(&store, &session, tag)?;
        let what = if tag.is_some() {
            "tagged"
        } else {
            "cleared the tag of"
        };
        crate::style::note(format_args!(
            "{what} {}/{} in {}",
            session.project,
            session.session_id,
            db.display()
        ));
        Ok(())
    })
}
