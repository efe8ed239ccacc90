//! SQLite's answers to a delete ([`DeleteTx`]), in the store's write transaction
//! (IMMEDIATE: no other writer runs beside it, so a session needs no lock of its own).

use super::{DeleteStore, DeleteTx, Held, StoredLine};
use crate::error::Result;
use crate::jsonl::Envelope;
use crate::store::Store;
use rusqlite::{params, OptionalExtension, Transaction};

impl DeleteStore for Store {
    fn write_delete<T>(&self, f: impl FnOnce(&mut dyn DeleteTx) -> Result<T>) -> Result<T> {
        self.write(|tx| f(&mut SqliteDelete(tx)))
    }
}

/// A delete's questions over one SQLite write transaction.
struct SqliteDelete<'a, 't>(&'a Transaction<'t>);

impl DeleteTx for SqliteDelete<'_, '_> {
    fn lock_session(&mut self, _session: i64) -> Result<()> {
        Ok(())
    }

    fn held(&mut self, session: i64) -> Result<Held> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT (SELECT count(*) FROM transcripts WHERE session_id = ?1),
                        (SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                          WHERE t.session_id = ?1),
                        (SELECT count(*) FROM session_files WHERE session_id = ?1)",
            )?
            .query_row([session], |r| {
                Ok(Held {
                    transcripts: r.get(0)?,
                    rows: r.get(1)?,
                    files: r.get(2)?,
                })
            })?)
    }

    fn forget_sources(&mut self, session: i64) -> Result<()> {
        self.0
            .prepare_cached(
                "DELETE FROM source_files WHERE transcript_id IN
                    (SELECT id FROM transcripts WHERE session_id = ?1)
                 OR session_file_id IN (SELECT id FROM session_files WHERE session_id = ?1)",
            )?
            .execute([session])?;
        Ok(())
    }

    fn counted_in(&mut self, session: i64) -> Result<Vec<String>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT DISTINCT message_id FROM usage_responses
             WHERE session_id = ?1 AND message_id IS NOT NULL",
        )?;
        let ids = stmt.query_map([session], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }

    fn project_of(&mut self, session: i64) -> Result<Option<i64>> {
        Ok(self
            .0
            .prepare_cached("SELECT project_id FROM sessions WHERE id = ?1")?
            .query_row([session], |r| r.get(0))
            .optional()?)
    }

    fn remove_session(&mut self, session: i64) -> Result<()> {
        self.0
            .prepare_cached("DELETE FROM sessions WHERE id = ?1")?
            .execute([session])?;
        Ok(())
    }

    /// Reads each transcript's lines through its (transcript, message id) index.
    fn other_copies(&mut self, project: i64, messages: &[String]) -> Result<Vec<StoredLine>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT r.id, r.transcript_id, line(r.raw, r.dict) AS raw FROM sessions s
             JOIN transcripts t ON t.session_id = s.id
             JOIN rows r ON r.transcript_id = t.id
             WHERE s.project_id = ?1 AND r.message_id IN (SELECT value FROM json_each(?2))
               AND r.status = 0 AND r.type IN ('assistant', 'progress')
             ORDER BY r.id",
        )?;
        let lines = stmt.query_map(params![project, serde_json::to_string(messages)?], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(lines.collect::<rusqlite::Result<_>>()?)
    }

    fn store_usage(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()> {
        crate::usage::sqlite::store(self.0, transcript, row, bytes, env)
    }
}
