//! SQLite's answers to the line writer ([`LineTx`]), in the store's write transaction
//! (IMMEDIATE: no other writer runs beside it, so a session needs no lock of its own).

use super::write::{LineTx, NewLine};
use crate::catalog;
use crate::error::Result;
use crate::import::{insert_rows, project_record, Origin};
use crate::jsonl::Envelope;
use crate::model::SessionRef;
use crate::resume::gather;
use rusqlite::{params, OptionalExtension, Transaction};

/// The line writer over one SQLite write transaction.
pub(crate) struct SqliteLines<'a, 't>(pub &'a Transaction<'t>);

impl LineTx for SqliteLines<'_, '_> {
    fn lock_session(&mut self, _session: &SessionRef) -> Result<()> {
        Ok(())
    }

    fn main_transcript(&mut self, session: i64) -> Result<Option<i64>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT id FROM transcripts WHERE session_id = ?1 AND subpath = ''
                   AND superseded_at IS NULL",
            )?
            .query_row([session], |r| r.get(0))
            .optional()?)
    }

    fn create_main_transcript(&mut self, session: i64) -> Result<i64> {
        self.0
            .prepare_cached("INSERT INTO transcripts (session_id, subpath) VALUES (?1, '')")?
            .execute([session])?;
        Ok(self.0.last_insert_rowid())
    }

    fn last_row(&mut self, transcript: i64) -> Result<Option<(i64, i64, bool)>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT id, ordinal, terminated FROM rows WHERE transcript_id = ?1
                 ORDER BY ordinal DESC LIMIT 1",
            )?
            .query_row([transcript], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?)
    }

    fn terminate_row(&mut self, row: i64) -> Result<()> {
        self.0
            .prepare_cached("UPDATE rows SET terminated = 1 WHERE id = ?1")?
            .execute([row])?;
        Ok(())
    }

    /// The search index is filled by the `rows` triggers' queue, as for every write.
    fn insert_local(
        &mut self,
        transcript: i64,
        ordinal: i64,
        lines: &[NewLine<'_>],
        _own: &str,
    ) -> Result<Vec<i64>> {
        // Multi-row inserts, as import stores lines: one statement journal per 64 lines.
        self.0.set_prepared_statement_cache_capacity(64);
        let first: i64 = self
            .0
            .prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM rows")?
            .query_row([], |r| r.get(0))?;
        insert_rows(self.0, transcript, ordinal, first, lines, Origin::Local)?;
        Ok((first..first + lines.len() as i64).collect())
    }

    fn project_record(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()> {
        project_record(self.0, transcript, row, bytes, env)
    }

    fn touch_catalog(&mut self, session: i64, written_ms: i64) -> Result<()> {
        catalog::touch_session(self.0, session, written_ms)
    }

    fn last_message(&mut self, transcript: i64) -> Result<Option<Vec<u8>>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT line(raw, dict) AS raw FROM rows WHERE transcript_id = ?1 AND status = 0
                   AND type IN ('user', 'assistant', 'attachment', 'system') AND is_sidechain = 0
                 ORDER BY ordinal DESC LIMIT 1",
            )?
            .query_row([transcript], |r| r.get(0))
            .optional()?)
    }

    fn recorded(&mut self, transcript: i64, uuid: &str) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = ?1 AND uuid = ?2
                   AND type IN ('user', 'assistant', 'attachment', 'system', 'progress'))",
            )?
            .query_row(params![transcript, uuid], |r| r.get(0))?)
    }

    /// [`gather::pick_leaf`], with a fast path: the newest chain row, when no row names it
    /// as parent, is that leaf (two index lookups instead of a scan).
    fn current_leaf(&mut self, transcript: i64) -> Result<Option<String>> {
        let newest: Option<String> = self
            .0
            .prepare_cached(
                "SELECT uuid FROM rows INDEXED BY idx_rows_transcript_ordinal
                 WHERE transcript_id = ?1 AND type IN ('user', 'assistant', 'attachment', 'system')
                   AND uuid IS NOT NULL AND is_sidechain = 0
                 ORDER BY ordinal DESC LIMIT 1",
            )?
            .query_row([transcript], |r| r.get(0))
            .optional()?;
        let Some(newest) = newest else {
            return Ok(None);
        };
        let has_child: bool = self
            .0
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM rows WHERE transcript_id = ?1 AND parent_uuid = ?2)",
            )?
            .query_row(params![transcript, newest], |r| r.get(0))?;
        if !has_child {
            return Ok(Some(newest));
        }
        gather::pick_leaf(self.0, transcript)
    }

    fn has_entry(&mut self, transcript: i64, uuid: &str) -> Result<bool> {
        gather::has_entry(self.0, transcript, uuid)
    }
}
