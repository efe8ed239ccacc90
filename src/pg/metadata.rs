//! Renaming, tagging and deleting sessions in the team store: the same records as
//! [`crate::metadata`] builds, appended as local lines; delete's steps are the shared ones
//! (see [`crate::metadata::delete_session`]).

use super::PgStore;
use crate::error::Result;
use crate::metadata::{rename_line, tag_record, DeleteReport};
use crate::model::SessionRef;
use postgres::Transaction;

/// Appends one record line to the session's main transcript and refreshes the catalog, in
/// the caller's transaction ([`crate::record::write::append_line`]; the session's row is
/// locked first, so two writers of one session on different machines take turns).
///
/// # Errors
/// [`crate::Error::Invalid`] when the session has no non-empty main transcript; database
/// errors.
pub fn append_line(tx: &mut Transaction<'_>, session: &SessionRef, line: &str) -> Result<i64> {
    crate::record::write::append_line(&mut super::record::PgLines(tx), session, line)
}

/// Sets a session's custom title (see [`crate::metadata::rename_session`]).
///
/// # Errors
/// As [`crate::metadata::rename_session`].
pub fn rename_session(store: &PgStore, session: &SessionRef, title: &str) -> Result<String> {
    let line = rename_line(session, title)?;
    store.write(|tx| append_line(tx, session, &line))?;
    Ok(line)
}

/// Sets or clears a session's tag (see [`crate::metadata::tag_session`]).
///
/// # Errors
/// As [`crate::metadata::tag_session`].
pub fn tag_session(store: &PgStore, session: &SessionRef, tag: Option<&str>) -> Result<String> {
    let line = tag_record(session, tag)?;
    store.write(|tx| append_line(tx, session, &line))?;
    Ok(line)
}

/// Removes a session with everything stored for it (see
/// [`crate::metadata::delete_session`]).
///
/// # Errors
/// Fails on a database error.
pub fn delete_session(store: &PgStore, session: &SessionRef) -> Result<DeleteReport> {
    crate::delete::delete_with(store, session)
}
