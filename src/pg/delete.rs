//! The team store's answers to a delete ([`DeleteTx`]): the order and the rule are the
//! shared [`crate::delete`].

use super::decode::RowExt;
use super::{prepared, PgStore};
use crate::delete::{DeleteStore, DeleteTx, Held, StoredLine};
use crate::error::Result;
use crate::jsonl::Envelope;
use postgres::Transaction;

impl DeleteStore for PgStore {
    fn write_delete<T>(&self, f: impl FnOnce(&mut dyn DeleteTx) -> Result<T>) -> Result<T> {
        self.write(|tx| f(&mut PgDelete(tx)))
    }
}

/// A delete's questions over one team-store transaction.
struct PgDelete<'a, 't>(&'a mut Transaction<'t>);

impl DeleteTx for PgDelete<'_, '_> {
    /// Gone already: nothing to lock, and nothing to delete, as on SQLite.
    fn lock_session(&mut self, session: i64) -> Result<()> {
        self.0.execute(
            "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE",
            &[&session],
        )?;
        Ok(())
    }

    fn held(&mut self, session: i64) -> Result<Held> {
        let r = self.0.query_one(
            "SELECT (SELECT count(*) FROM transcripts WHERE session_id = $1),
                    (SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                      WHERE t.session_id = $1),
                    (SELECT count(*) FROM session_files WHERE session_id = $1)",
            &[&session],
        )?;
        Ok(Held {
            transcripts: r.col(0)?,
            rows: r.col(1)?,
            files: r.col(2)?,
        })
    }

    fn forget_sources(&mut self, session: i64) -> Result<()> {
        self.0.execute(
            "DELETE FROM source_files WHERE transcript_id IN
                (SELECT id FROM transcripts WHERE session_id = $1)
             OR session_file_id IN (SELECT id FROM session_files WHERE session_id = $1)",
            &[&session],
        )?;
        Ok(())
    }

    fn counted_in(&mut self, session: i64) -> Result<Vec<String>> {
        let stmt = prepared(
            self.0,
            "SELECT DISTINCT message_id FROM usage_responses
             WHERE session_id = $1 AND message_id IS NOT NULL",
        )?;
        self.0
            .query(&stmt, &[&session])?
            .iter()
            .map(|r| r.col(0))
            .collect()
    }

    fn project_of(&mut self, session: i64) -> Result<Option<i64>> {
        self.0
            .query_opt("SELECT project_id FROM sessions WHERE id = $1", &[&session])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn remove_session(&mut self, session: i64) -> Result<()> {
        self.0
            .execute("DELETE FROM sessions WHERE id = $1", &[&session])?;
        Ok(())
    }

    /// Only sessions it can lock at once are read (`FOR SHARE SKIP LOCKED`): one that
    /// another writer holds may be going away (its rows would break the foreign key), and
    /// waiting for it could deadlock two deletes.
    fn other_copies(&mut self, project: i64, messages: &[String]) -> Result<Vec<StoredLine>> {
        let stmt = prepared(
            self.0,
            "WITH kept AS (SELECT id FROM sessions WHERE project_id = $1 FOR SHARE SKIP LOCKED)
             SELECT r.id, r.transcript_id, r.raw FROM kept s
             JOIN transcripts t ON t.session_id = s.id
             JOIN rows r ON r.transcript_id = t.id
             WHERE r.message_id = ANY($2::text[])
               AND r.status = 0 AND r.type IN ('assistant', 'progress')
             ORDER BY r.id",
        )?;
        self.0
            .query(&stmt, &[&project, &messages])?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?)))
            .collect()
    }

    fn store_usage(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()> {
        super::usage::store(self.0, transcript, row, bytes, env)
    }
}
