//! Renaming, tagging and deleting sessions in the team store: the same records as
//! [`crate::metadata`] builds, appended as local lines.

use super::decode::RowExt;
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
    store.write(|tx| {
        // The session's row first, as every writer of a session locks it (an import locks
        // it, then its ledger entries in `source_files`, which are deleted below). Gone
        // already: nothing to delete, as on SQLite.
        tx.execute(
            "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE",
            &[&session.key],
        )?;
        let r = tx.query_one(
            "SELECT (SELECT count(*) FROM transcripts WHERE session_id = $1),
                    (SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                      WHERE t.session_id = $1),
                    (SELECT count(*) FROM session_files WHERE session_id = $1)",
            &[&session.key],
        )?;
        let (transcripts, rows, files) = (r.col(0)?, r.col(1)?, r.col(2)?);
        tx.execute(
            "DELETE FROM source_files WHERE transcript_id IN
                (SELECT id FROM transcripts WHERE session_id = $1)
             OR session_file_id IN (SELECT id FROM session_files WHERE session_id = $1)",
            &[&session.key],
        )?;
        let counted = super::usage::counted_in(tx, session.key)?;
        let project: Option<i64> = tx
            .query_opt(
                "SELECT project_id FROM sessions WHERE id = $1",
                &[&session.key],
            )?
            .map(|r| r.col(0))
            .transpose()?;
        tx.execute("DELETE FROM sessions WHERE id = $1", &[&session.key])?;
        // Responses counted in this session and held by another copy stay counted.
        if let Some(project) = project {
            super::usage::count_other_copies(tx, project, &counted)?;
        }
        Ok(DeleteReport {
            session_id: session.session_id.clone(),
            project: session.project.clone(),
            transcripts,
            rows,
            files,
        })
    })
}
