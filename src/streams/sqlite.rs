//! The SessionStore protocol's questions answered in SQLite's SQL, inside one of the
//! store's transactions.

use super::{BatchLine, StoredSummary, StreamInfo, StreamStore, StreamTx, Watermark};
use crate::catalog;
use crate::error::Result;
use crate::import::{insert_rows, project_record, upsert_session, Origin};
use crate::record;
use crate::store::Store;
use rusqlite::{params, OptionalExtension, Transaction};
use std::collections::HashSet;

impl StreamStore for Store {
    fn write_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        self.write(|tx| f(&mut Sqlite(tx)))
    }

    fn read_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        let mut conn = self.reader()?;
        let tx = conn.transaction()?;
        f(&mut Sqlite(&tx))
    }
}

/// The SQLite statements of the protocol, inside one of the store's transactions.
struct Sqlite<'a, 'b>(&'a Transaction<'b>);

const SELECT_SESSION: &str = "SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
     WHERE p.key = ?1 AND s.session_id = ?2";

const SELECT_LIVE_TRANSCRIPT: &str = "SELECT id FROM transcripts
     WHERE session_id = ?1 AND subpath = ?2 AND superseded_at IS NULL";

impl StreamTx for Sqlite<'_, '_> {
    fn session(&mut self, project_key: &str, session_id: &str) -> Result<Option<i64>> {
        Ok(self
            .0
            .prepare_cached(SELECT_SESSION)?
            .query_row(params![project_key, session_id], |r| r.get(0))
            .optional()?)
    }

    fn upsert_session(&mut self, project_key: &str, session_id: &str) -> Result<i64> {
        upsert_session(self.0, project_key, session_id)
    }

    fn live_stream(&mut self, session: i64, subpath: &str) -> Result<Option<i64>> {
        Ok(self
            .0
            .prepare_cached(SELECT_LIVE_TRANSCRIPT)?
            .query_row(params![session, subpath], |r| r.get(0))
            .optional()?)
    }

    fn create_stream(
        &mut self,
        session: i64,
        subpath: &str,
        agent_id: Option<&str>,
    ) -> Result<i64> {
        self.0
            .prepare_cached(
                "INSERT INTO transcripts (session_id, subpath, agent_id) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![session, subpath, agent_id])?;
        Ok(self.0.last_insert_rowid())
    }

    fn next_ordinal(&mut self, transcript: i64) -> Result<i64> {
        record::write::next_ordinal(&mut record::SqliteLines(self.0), transcript)
    }

    fn stored_uuids(&mut self, transcript: i64, uuids: &[&str]) -> Result<HashSet<String>> {
        let list = serde_json::to_string(uuids)?;
        let found = self
            .0
            .prepare_cached(
                "SELECT uuid FROM rows
                 WHERE transcript_id = ?1 AND uuid IN (SELECT value FROM json_each(?2))",
            )?
            .query_map(params![transcript, list], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(found)
    }

    fn insert(
        &mut self,
        _session_id: &str,
        transcript: i64,
        ordinal: i64,
        batch: &[BatchLine<'_>],
    ) -> Result<()> {
        let tx = self.0;
        // Multi-row inserts under explicit ids, as import stores lines: one statement (and
        // statement journal) per 64 lines instead of one per line. Their few distinct
        // statements stay prepared.
        tx.set_prepared_statement_cache_capacity(64);
        let first: i64 = tx
            .prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM rows")?
            .query_row([], |r| r.get(0))?;
        insert_rows(tx, transcript, ordinal, first, batch, Origin::Local)?;
        for (row, (line, _, env)) in (first..).zip(batch) {
            project_record(tx, transcript, row, line.bytes, env)?;
        }
        Ok(())
    }

    fn set_project_cwd(&mut self, session: i64, cwd: &str) -> Result<()> {
        self.0
            .prepare_cached(
                "UPDATE projects SET cwd = ?2
                 WHERE id = (SELECT project_id FROM sessions WHERE id = ?1) AND cwd IS NULL",
            )?
            .execute(params![session, cwd])?;
        Ok(())
    }

    fn set_agent_meta(&mut self, transcript: i64, meta: &[u8]) -> Result<()> {
        self.0
            .prepare_cached("UPDATE transcripts SET meta_json = ?2 WHERE id = ?1")?
            .execute(params![transcript, meta])?;
        Ok(())
    }

    fn api_mtime(&mut self, transcript: i64) -> Result<i64> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT coalesce((SELECT mtime FROM store_streams WHERE transcript_id = ?1), 0)",
            )?
            .query_row([transcript], |r| r.get(0))?)
    }

    fn catalog_mtime(&mut self, session: i64) -> Result<i64> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT coalesce((SELECT last_modified FROM catalog WHERE session_key = ?1), 0)",
            )?
            .query_row([session], |r| r.get(0))?)
    }

    fn set_api_mtime(&mut self, transcript: i64, mtime: i64) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO store_streams (transcript_id, mtime) VALUES (?1, ?2)
                 ON CONFLICT (transcript_id) DO UPDATE SET mtime = excluded.mtime",
            )?
            .execute(params![transcript, mtime])?;
        Ok(())
    }

    fn refresh_catalog(&mut self, session: i64, written: Option<i64>) -> Result<()> {
        match written {
            Some(at) => catalog::touch_session(self.0, session, at),
            None => catalog::refresh_session(self.0, session),
        }
    }

    fn each_line(
        &mut self,
        transcript: i64,
        after_ordinal: i64,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<i64> {
        let mut stmt = self.0.prepare_cached(
            "SELECT ordinal, line(raw, dict) AS raw, id, checksum FROM rows
             WHERE transcript_id = ?1 AND ordinal > ?2 AND status = 0 ORDER BY ordinal",
        )?;
        let mut rows = stmt.query(params![transcript, after_ordinal])?;
        let mut last = after_ordinal;
        while let Some(row) = rows.next()? {
            last = row.get(0)?;
            let bytes = match row.get_ref(1)? {
                rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b,
                _ => continue,
            };
            crate::integrity::check_row(self.0, row.get(2)?, bytes, row.get(3)?)?;
            f(bytes);
        }
        Ok(last)
    }

    fn max_ordinal(&mut self, transcript: i64) -> Result<Option<i64>> {
        Ok(self
            .0
            .prepare_cached("SELECT max(ordinal) FROM rows WHERE transcript_id = ?1")?
            .query_row([transcript], |r| r.get(0))?)
    }

    fn summary(&mut self, session: i64) -> Result<Option<StoredSummary>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT mtime, data, folded_transcript, folded_ordinal FROM store_summaries
                 WHERE session_key = ?1",
            )?
            .query_row([session], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    Watermark {
                        transcript: r.get(2)?,
                        ordinal: r.get(3)?,
                    },
                ))
            })
            .optional()?)
    }

    fn put_summary(
        &mut self,
        session: i64,
        mtime: i64,
        data: &str,
        through: Watermark,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO store_summaries
                    (session_key, mtime, data, folded_transcript, folded_ordinal)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (session_key) DO UPDATE SET mtime = excluded.mtime,
                    data = excluded.data, folded_transcript = excluded.folded_transcript,
                    folded_ordinal = excluded.folded_ordinal",
            )?
            .execute(params![
                session,
                mtime,
                data,
                through.transcript,
                through.ordinal
            ])?;
        Ok(())
    }

    fn main_streams(&mut self, project_key: &str) -> Result<Vec<StreamInfo>> {
        let out = self
            .0
            .prepare_cached(
                "SELECT s.session_id, max(coalesce(ss.mtime, 0), coalesce(c.last_modified, 0))
                 FROM sessions s JOIN projects p ON p.id = s.project_id
                 JOIN transcripts t ON t.session_id = s.id AND t.subpath = ''
                      AND t.superseded_at IS NULL
                 LEFT JOIN store_streams ss ON ss.transcript_id = t.id
                 LEFT JOIN catalog c ON c.session_key = s.id
                 WHERE p.key = ?1 ORDER BY s.id",
            )?
            .query_map([project_key], |r| {
                Ok(StreamInfo {
                    session_id: r.get(0)?,
                    mtime: r.get(1)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(out)
    }

    fn summaries(&mut self, project_key: &str, f: &mut dyn FnMut(&str, i64, &str)) -> Result<()> {
        let mut stmt = self.0.prepare_cached(
            "SELECT s.session_id, m.mtime, m.data FROM store_summaries m
             JOIN sessions s ON s.id = m.session_key JOIN projects p ON p.id = s.project_id
             WHERE p.key = ?1 ORDER BY s.id",
        )?;
        let mut rows = stmt.query([project_key])?;
        while let Some(row) = rows.next()? {
            let session_id: String = row.get(0)?;
            let data: String = row.get(2)?;
            f(&session_id, row.get(1)?, &data);
        }
        Ok(())
    }

    fn subpaths(&mut self, project_key: &str, session_id: &str) -> Result<Vec<String>> {
        let out = self
            .0
            .prepare_cached(
                "SELECT t.subpath FROM transcripts t
                 JOIN sessions s ON s.id = t.session_id JOIN projects p ON p.id = s.project_id
                 WHERE p.key = ?1 AND s.session_id = ?2 AND t.subpath <> ''
                   AND t.superseded_at IS NULL
                 ORDER BY t.id",
            )?
            .query_map(params![project_key, session_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(out)
    }

    fn delete_session(&mut self, session: i64) -> Result<u64> {
        let tx = self.0;
        let streams: i64 = tx
            .prepare_cached("SELECT count(*) FROM transcripts WHERE session_id = ?1")?
            .query_row([session], |r| r.get(0))?;
        tx.prepare_cached(
            "DELETE FROM source_files WHERE transcript_id IN
                (SELECT id FROM transcripts WHERE session_id = ?1)
             OR session_file_id IN (SELECT id FROM session_files WHERE session_id = ?1)",
        )?
        .execute([session])?;
        tx.prepare_cached("DELETE FROM sessions WHERE id = ?1")?
            .execute([session])?;
        Ok(streams as u64)
    }

    fn delete_stream(&mut self, session: i64, subpath: &str) -> Result<u64> {
        let tx = self.0;
        let streams = tx
            .prepare_cached("DELETE FROM transcripts WHERE session_id = ?1 AND subpath = ?2")?
            .execute(params![session, subpath])?;
        let sidecar = format!("{subpath}.meta.json");
        tx.prepare_cached(
            "DELETE FROM source_files WHERE session_file_id IN
                (SELECT id FROM session_files WHERE session_id = ?1 AND relpath = ?2)",
        )?
        .execute(params![session, sidecar])?;
        tx.prepare_cached("DELETE FROM session_files WHERE session_id = ?1 AND relpath = ?2")?
            .execute(params![session, sidecar])?;
        Ok(streams as u64)
    }
}
