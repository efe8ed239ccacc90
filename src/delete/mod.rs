//! Removing a session, once for both engines: what goes (its transcripts, rows, session
//! files, side tables, ledger entries, catalog row and index entries) and what stays
//! counted (a response whose counted copy was the deleted session's goes to a copy that
//! stays, as a rebuild would give it). Each engine answers the [`DeleteTx`] questions in
//! SQL inside its write transaction ([`DeleteStore`]); this module holds the order.

mod sqlite;

use crate::error::Result;
use crate::jsonl::Envelope;
use crate::model::SessionRef;
use crate::store::Store;
use serde::Serialize;

/// What [`delete_session`] removed.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct DeleteReport {
    /// The session id.
    pub session_id: String,
    /// The project folder.
    pub project: String,
    /// Transcripts removed (main, sub-agents and superseded versions).
    pub transcripts: i64,
    /// Stored lines removed.
    pub rows: i64,
    /// Other session files removed (tool results, sidecars).
    pub files: i64,
}

/// How much a session holds: its transcripts, their rows, its other session files.
pub(crate) struct Held {
    pub transcripts: i64,
    pub rows: i64,
    pub files: i64,
}

/// A stored line that may hold a response: its row id, transcript and bytes.
pub(crate) type StoredLine = (i64, i64, Vec<u8>);

/// What a delete asks an engine, in the engine's write transaction. `session` is always
/// the session's key (`sessions.id`).
pub(crate) trait DeleteTx {
    /// Makes every other writer of the session wait until this transaction ends (the team
    /// store locks the session's row, as every writer of a session does first; SQLite's
    /// write transaction already excludes them). A session gone already is no error.
    fn lock_session(&mut self, session: i64) -> Result<()>;
    /// How much the session holds.
    fn held(&mut self, session: i64) -> Result<Held>;
    /// Removes the ledger entries of the session's transcripts and files.
    fn forget_sources(&mut self, session: i64) -> Result<()>;
    /// The message ids of the responses whose counted copy is the session's.
    fn counted_in(&mut self, session: i64) -> Result<Vec<String>>;
    /// The session's project, `None` when the session is gone.
    fn project_of(&mut self, session: i64) -> Result<Option<i64>>;
    /// Removes the session's row and, through the schema's cascades, all it holds.
    fn remove_session(&mut self, session: i64) -> Result<()>;
    /// The well-formed `assistant` and `progress` lines of `project`'s sessions that hold
    /// one of `messages`, in row order. The team store reads only sessions it can lock at
    /// once (one another writer holds may be going away; a copy skipped so gets its
    /// response back with `reindex`).
    fn other_copies(&mut self, project: i64, messages: &[String]) -> Result<Vec<StoredLine>>;
    /// Stores a line's responses by the import's rule (see [`crate::usage::record`]).
    fn store_usage(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()>;
}

/// A store a session can be deleted from: it runs a delete in one write transaction.
pub(crate) trait DeleteStore {
    /// Runs `f` in one write transaction, committed only when it succeeds.
    fn write_delete<T>(&self, f: impl FnOnce(&mut dyn DeleteTx) -> Result<T>) -> Result<T>;
}

/// Removes a session with its sub-agent transcripts, session files, side tables, ledger
/// entries, catalog row and index entries, in one transaction. Source files on disk are
/// not touched (a later import of a tree that still holds them brings them back).
///
/// # Errors
/// Fails on a database error.
pub fn delete_session(store: &Store, session: &SessionRef) -> Result<DeleteReport> {
    delete_with(store, session)
}

/// [`delete_session`] on any engine.
pub(crate) fn delete_with(store: &impl DeleteStore, session: &SessionRef) -> Result<DeleteReport> {
    store.write_delete(|tx| {
        // The session's row first, as every writer of a session locks it (an import locks
        // it, then its ledger entries, which are deleted below).
        tx.lock_session(session.key)?;
        let held = tx.held(session.key)?;
        tx.forget_sources(session.key)?;
        let counted = tx.counted_in(session.key)?;
        let project = tx.project_of(session.key)?;
        tx.remove_session(session.key)?;
        // Responses counted in this session and held by another copy stay counted.
        if let Some(project) = project {
            count_other_copies(tx, project, &counted)?;
        }
        Ok(DeleteReport {
            session_id: session.session_id.clone(),
            project: session.project.clone(),
            transcripts: held.transcripts,
            rows: held.rows,
            files: held.files,
        })
    })
}

/// Stores again, by the import's rule, the lines of project `project` that hold one of
/// `messages` (responses whose counted copy went with a deleted session): a fork's
/// original, a resumed copy, or the fork whose original was deleted then counts them, as a
/// rebuild would. Copies in other projects come back with `reindex`.
fn count_other_copies(tx: &mut dyn DeleteTx, project: i64, messages: &[String]) -> Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    for (row, transcript, raw) in tx.other_copies(project, messages)? {
        let (_, env) = Envelope::parse(&raw);
        tx.store_usage(transcript, row, &raw, &env)?;
    }
    Ok(())
}
