//! The team store's answers to the line writer ([`LineTx`]): appends, renames, tags and
//! forks write through the shared rules of [`crate::record::write`].
//!
//! The uuid rule across processes: the session's row is locked (`SELECT … FOR UPDATE`) for
//! the whole transaction, so the check "is this uuid recorded" and the insert that follows
//! are never interleaved with another writer of the same session, on any machine. A second
//! writer waits for the first to commit and then sees its lines.

use super::decode::RowExt;
use super::{prepared, PgStore};
use crate::error::{Error, Result};
use crate::jsonl::Envelope;
use crate::model::SessionRef;
use crate::record::write::{self, LineTx, NewLine};
use crate::record::{AppendOptions, AppendReport};
use postgres::Transaction;
use serde_json::Value;

/// Appends a batch of entries to a session (see [`crate::store::Store::append_with`]).
///
/// # Errors
/// As [`crate::store::Store::append_with`].
pub fn append_with(
    store: &PgStore,
    session: &SessionRef,
    entries: &[Value],
    options: &AppendOptions,
) -> Result<AppendReport> {
    write::check_batch(session, entries)?;
    store.write(|tx| write::append(&mut PgLines(tx), session, entries, options))
}

/// The line writer over one team-store transaction.
pub(crate) struct PgLines<'a, 't>(pub &'a mut Transaction<'t>);

impl LineTx for PgLines<'_, '_> {
    fn lock_session(&mut self, session: &SessionRef) -> Result<()> {
        let stmt = prepared(self.0, "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE")?;
        self.0
            .query_opt(&stmt, &[&session.key])?
            .ok_or_else(|| Error::SessionNotFound(session.session_id.clone()))?;
        Ok(())
    }

    fn main_transcript(&mut self, session: i64) -> Result<Option<i64>> {
        let stmt = prepared(
            self.0,
            "SELECT id FROM transcripts WHERE session_id = $1 AND subpath = ''
               AND superseded_at IS NULL",
        )?;
        self.0
            .query_opt(&stmt, &[&session])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn create_main_transcript(&mut self, session: i64) -> Result<i64> {
        super::import::create_transcript(self.0, session, "", None)
    }

    fn last_row(&mut self, transcript: i64) -> Result<Option<(i64, i64, bool)>> {
        let stmt = prepared(
            self.0,
            "SELECT id, ordinal, terminated FROM rows WHERE transcript_id = $1
             ORDER BY ordinal DESC LIMIT 1",
        )?;
        self.0
            .query_opt(&stmt, &[&transcript])?
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
            .transpose()
    }

    fn terminate_row(&mut self, row: i64) -> Result<()> {
        let stmt = prepared(self.0, "UPDATE rows SET terminated = true WHERE id = $1")?;
        self.0.execute(&stmt, &[&row])?;
        Ok(())
    }

    /// Their words are cut later, by the search queue's catch-up
    /// ([`super::search_queue`]).
    fn insert_local(
        &mut self,
        transcript: i64,
        ordinal: i64,
        lines: &[NewLine<'_>],
        own: &str,
    ) -> Result<Vec<i64>> {
        let parsed: Vec<crate::import::Parsed<'_>> = lines
            .iter()
            .map(|(line, status, env)| (*line, *status, env.clone(), None, None))
            .collect();
        super::search_queue::insert_local_lines(self.0, transcript, ordinal, &parsed, own)
    }

    fn project_record(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()> {
        super::rows::project_record(self.0, transcript, row, bytes, env)
    }

    fn touch_catalog(&mut self, session: i64, written_ms: i64) -> Result<()> {
        super::catalog::refresh_session(self.0, session, Some(written_ms))
    }

    fn last_message(&mut self, transcript: i64) -> Result<Option<Vec<u8>>> {
        let stmt = prepared(
            self.0,
            "SELECT raw FROM rows WHERE transcript_id = $1 AND status = 0
               AND type IN ('user', 'assistant', 'attachment', 'system') AND NOT is_sidechain
             ORDER BY ordinal DESC LIMIT 1",
        )?;
        self.0
            .query_opt(&stmt, &[&transcript])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn recorded(&mut self, transcript: i64, uuid: &str) -> Result<bool> {
        let stmt = prepared(
            self.0,
            "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = $1 AND uuid = $2
               AND type IN ('user', 'assistant', 'attachment', 'system', 'progress'))",
        )?;
        self.0.query_one(&stmt, &[&transcript, &uuid])?.col(0)
    }

    fn current_leaf(&mut self, transcript: i64) -> Result<Option<String>> {
        super::resume::pick_leaf(self.0, transcript)
    }

    fn has_entry(&mut self, transcript: i64, uuid: &str) -> Result<bool> {
        super::resume::has_entry(self.0, transcript, uuid)
    }
}
