//! SQLite's answers to the import of a transcript ([`TranscriptTx`]): the statements, in
//! the write transaction the importer holds. The search texts read ahead are kept for the
//! full-text index (`texts`), which SQLite fills after the rows.

use super::rows::{create_transcript, set_project_cwd, ROW_BATCH, STATEMENT_CACHE};
use super::transcript::{FileStamp, LastRow, LedgerEntry, TranscriptTx};
use super::{FileView, Fingerprint, Origin, Parsed, Source};
use crate::error::Result;
use crate::jsonl::Envelope;
use crate::search::PendingTexts;
use crate::usage::record::Fold;
use rusqlite::{params, OptionalExtension, Transaction};

/// A SQLite write transaction, as the importer of a transcript uses it.
pub(crate) struct SqliteTx<'a, 't> {
    tx: &'a Transaction<'t>,
    texts: &'a mut PendingTexts,
    /// Bytes of search text this one put into `texts`.
    text_bytes: usize,
}

/// Search text a file read in pieces may leave waiting before it is indexed, in the
/// file's transaction: the texts of a whole large file would be about its size again.
const PIECE_TEXT_BYTES: usize = 16 * 1024 * 1024;

impl<'a, 't> SqliteTx<'a, 't> {
    pub(crate) fn new(tx: &'a Transaction<'t>, texts: &'a mut PendingTexts) -> Self {
        // The multi-row inserts of every power of two up to a batch, beside the rest.
        tx.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        SqliteTx {
            tx,
            texts,
            text_bytes: 0,
        }
    }
}

impl TranscriptTx for SqliteTx<'_, '_> {
    const SHARED: bool = false;
    const BATCH: usize = ROW_BATCH;

    fn session_of(&mut self, source: &Source) -> Result<i64> {
        match super::located_session(self.tx, source)? {
            Some(session) => Ok(session),
            None => super::upsert_session(self.tx, &source.project, &source.session),
        }
    }

    fn session_file(&mut self, session: i64, relpath: &str) -> Result<Option<(i64, Vec<u8>)>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT id, content FROM session_files WHERE session_id = ?1 AND relpath = ?2",
            )?
            .query_row(params![session, relpath], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    fn store_session_file(&mut self, session: i64, relpath: &str, content: &[u8]) -> Result<i64> {
        let id = self
            .tx
            .prepare_cached(
                "INSERT INTO session_files (session_id, relpath, content) VALUES (?1, ?2, ?3)
                 ON CONFLICT (session_id, relpath) DO UPDATE SET content = excluded.content
                 RETURNING id",
            )?
            .query_row(params![session, relpath, content], |r| r.get(0))?;
        if let Some(sidechain) = relpath.strip_suffix(".meta.json") {
            self.tx
                .prepare_cached(
                    "UPDATE transcripts SET meta_json = ?3
                     WHERE session_id = ?1 AND subpath = ?2 AND superseded_at IS NULL",
                )?
                .execute(params![session, sidechain, content])?;
        }
        Ok(id)
    }

    fn live_transcript(&mut self, session: i64, subpath: &str) -> Result<Option<i64>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT id FROM transcripts
                 WHERE session_id = ?1 AND subpath = ?2 AND superseded_at IS NULL",
            )?
            .query_row(params![session, subpath], |r| r.get(0))
            .optional()?)
    }

    fn ledger_entry(&mut self, transcript: i64, path: &str) -> Result<Option<LedgerEntry>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT imported_bytes, prefix_hash, tail_hash FROM source_files
                 WHERE transcript_id = ?1 ORDER BY path = ?2 DESC, rowid DESC LIMIT 1",
            )?
            .query_row(params![transcript, path], |r| {
                Ok(LedgerEntry {
                    imported_bytes: r.get::<_, i64>(0)? as usize,
                    fingerprint: Fingerprint::read(r.get(1)?, r.get(2)?),
                    ours: true,
                })
            })
            .optional()?)
    }

    fn last_row(&mut self, transcript: i64) -> Result<Option<LastRow>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT id, ordinal, terminated, iif(dict IS NULL, length(raw), line_len(raw, dict)) FROM rows
                 WHERE transcript_id = ?1 ORDER BY ordinal DESC LIMIT 1",
            )?
            .query_row([transcript], |r| {
                Ok(LastRow {
                    id: r.get(0)?,
                    ordinal: r.get(1)?,
                    terminated: r.get(2)?,
                    len: r.get::<_, i64>(3)? as usize,
                })
            })
            .optional()?)
    }

    fn delete_row(&mut self, row: i64) -> Result<()> {
        self.tx
            .prepare_cached("DELETE FROM rows WHERE id = ?1")?
            .execute([row])?;
        Ok(())
    }

    fn terminate_row(&mut self, row: i64) -> Result<()> {
        self.tx
            .prepare_cached("UPDATE rows SET terminated = 1 WHERE id = ?1")?
            .execute([row])?;
        Ok(())
    }

    fn lines_of(&mut self, transcript: i64, local: bool) -> Result<Vec<Vec<u8>>> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT line(raw, dict) AS raw FROM rows WHERE transcript_id = ?1 AND local = ?2 ORDER BY ordinal",
            )?
            .query_map(params![transcript, local], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn supersede(&mut self, transcript: i64) -> Result<()> {
        self.tx
            .prepare_cached(
                "UPDATE transcripts SET superseded_at = strftime('%Y-%m-%dT%H:%M:%fZ')
                 WHERE id = ?1",
            )?
            .execute([transcript])?;
        Ok(())
    }

    fn create_transcript(
        &mut self,
        session: i64,
        subpath: &str,
        agent_id: Option<&str>,
    ) -> Result<i64> {
        create_transcript(self.tx, session, subpath, agent_id)
    }

    fn insert_lines(
        &mut self,
        transcript: i64,
        ordinal: i64,
        lines: &mut [Parsed<'_>],
        own: &str,
        local: bool,
    ) -> Result<Vec<i64>> {
        let first: i64 = self
            .tx
            .prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM rows")?
            .query_row([], |r| r.get(0))?;
        let origin = if local {
            Origin::Local
        } else {
            Origin::Imported
        };
        super::insert_rows_of(
            self.tx,
            transcript,
            ordinal,
            first,
            lines,
            origin,
            Some(own),
        )?;
        let ids: Vec<i64> = (first..first + lines.len() as i64).collect();
        for ((_, _, _, search, _), row) in lines.iter_mut().zip(&ids) {
            if let Some(text) = search.take() {
                self.text_bytes += text.body.as_ref().map_or(0, String::len)
                    + text.tools.as_ref().map_or(0, String::len);
                self.texts.insert(*row, text);
            }
        }
        Ok(ids)
    }

    fn set_project_cwd(&mut self, session: i64, cwd: &str) -> Result<()> {
        set_project_cwd(self.tx, session, cwd)
    }

    fn project_sides(
        &mut self,
        transcript: i64,
        row: i64,
        bytes: &[u8],
        env: &Envelope<'_>,
    ) -> Result<()> {
        super::project_sides(self.tx, transcript, row, bytes, env)
    }

    fn store_usage(&mut self, session: i64, usage: &Fold<'_>) -> Result<()> {
        crate::usage::sqlite::store_folded(self.tx, session, usage)
    }

    fn copy_sidecar(&mut self, session: i64, relpath: &str, transcript: i64) -> Result<()> {
        self.tx
            .prepare_cached(
                "UPDATE transcripts SET meta_json =
                    (SELECT content FROM session_files WHERE session_id = ?1 AND relpath = ?2)
                 WHERE id = ?3",
            )?
            .execute(params![session, relpath, transcript])?;
        Ok(())
    }

    fn piece_written(&mut self) -> Result<()> {
        if self.text_bytes > PIECE_TEXT_BYTES {
            crate::search::index_pending_with(self.tx, self.texts)?;
            self.text_bytes = 0;
        }
        Ok(())
    }

    fn write_ledger(
        &mut self,
        stamp: &FileStamp<'_>,
        transcript: Option<i64>,
        session_file: Option<i64>,
        file: &FileView<'_>,
        imported: usize,
    ) -> Result<()> {
        super::write_ledger(self.tx, stamp, transcript, session_file, file, imported)
    }
}
