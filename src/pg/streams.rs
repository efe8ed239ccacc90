//! The Agent SDK's `SessionStore` protocol on a team store: the statements that answer
//! [`crate::streams`]' rules on PostgreSQL.
//!
//! A write first locks the session's row (`SELECT … FOR UPDATE`, taken by
//! [`super::import::upsert_session`] for an append, and by [`StreamTx::session`] in a write
//! transaction): two appends to one session, from any `serve` process on any machine, take
//! turns, so "is this uuid stored" and the insert after it see no other writer in between,
//! and the summary's compare-and-swap is decided by one writer at a time.

use super::decode::RowExt;
use super::PgStore;
use crate::error::Result;
use crate::import::Parsed;
use crate::streams::{BatchLine, StoredSummary, StreamInfo, StreamStore, StreamTx, Watermark};
use postgres::fallible_iterator::FallibleIterator;
use postgres::Transaction;
use std::collections::HashSet;

impl StreamStore for PgStore {
    fn write_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        let origin = self.origin().clone();
        self.write(|tx| {
            f(&mut Pg {
                tx,
                origin: &origin,
                write: true,
            })
        })
    }

    fn read_streams<T>(&self, f: impl FnOnce(&mut dyn StreamTx) -> Result<T>) -> Result<T> {
        let origin = self.origin().clone();
        self.read(|tx| {
            f(&mut Pg {
                tx,
                origin: &origin,
                write: false,
            })
        })
    }
}

struct Pg<'a, 'b> {
    tx: &'a mut Transaction<'b>,
    /// Who a new session is recorded as coming from.
    origin: &'a super::Origin,
    /// A write transaction locks the session rows it looks up.
    write: bool,
}

impl StreamTx for Pg<'_, '_> {
    fn session(&mut self, project_key: &str, session_id: &str) -> Result<Option<i64>> {
        let sql = if self.write {
            "SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE p.key = $1 AND s.session_id = $2 FOR UPDATE OF s"
        } else {
            "SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE p.key = $1 AND s.session_id = $2"
        };
        let sql = super::prepared(self.tx, sql)?;
        self.tx
            .query_opt(&sql, &[&project_key, &session_id])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn upsert_session(&mut self, project_key: &str, session_id: &str) -> Result<i64> {
        // A stream's session usually exists: one statement finds and locks it, where the
        // import's upsert takes three round trips for a session that exists.
        let sql = super::prepared(
            self.tx,
            "SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE p.key = $1 AND s.session_id = $2 FOR UPDATE OF s",
        )?;
        if let Some(row) = self.tx.query_opt(&sql, &[&project_key, &session_id])? {
            return row.col(0);
        }
        super::import::upsert_session(self.tx, project_key, session_id, self.origin)
    }

    fn live_stream(&mut self, session: i64, subpath: &str) -> Result<Option<i64>> {
        let sql = super::prepared(
            self.tx,
            "SELECT id FROM transcripts
             WHERE session_id = $1 AND subpath = $2 AND superseded_at IS NULL",
        )?;
        self.tx
            .query_opt(&sql, &[&session, &subpath])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn create_stream(
        &mut self,
        session: i64,
        subpath: &str,
        agent_id: Option<&str>,
    ) -> Result<i64> {
        super::import::create_transcript(self.tx, session, subpath, agent_id)
    }

    fn next_ordinal(&mut self, transcript: i64) -> Result<i64> {
        crate::record::write::next_ordinal(&mut super::record::PgLines(self.tx), transcript)
    }

    fn stored_uuids(&mut self, transcript: i64, uuids: &[&str]) -> Result<HashSet<String>> {
        let sql = super::prepared(
            self.tx,
            "SELECT uuid FROM rows WHERE transcript_id = $1 AND uuid = ANY($2)",
        )?;
        self.tx
            .query(&sql, &[&transcript, &uuids])?
            .into_iter()
            .map(|r| r.col(0))
            .collect()
    }

    fn next_and_stored(
        &mut self,
        transcript: i64,
        uuids: &[&str],
    ) -> Result<(i64, HashSet<String>)> {
        let sql = super::prepared(
            self.tx,
            "SELECT l.id, l.ordinal, l.terminated,
                ARRAY(SELECT uuid FROM rows WHERE transcript_id = $1 AND uuid = ANY($2))
             FROM (SELECT 1) one
             LEFT JOIN LATERAL (SELECT id, ordinal, terminated FROM rows
                 WHERE transcript_id = $1 ORDER BY ordinal DESC LIMIT 1) l ON true",
        )?;
        let r = self.tx.query_one(&sql, &[&transcript, &uuids])?;
        let (Some(id), Some(ordinal), Some(terminated)) = (
            r.col::<Option<i64>>(0)?,
            r.col::<Option<i64>>(1)?,
            r.col::<Option<bool>>(2)?,
        ) else {
            return Ok((0, HashSet::new()));
        };
        if !terminated {
            crate::record::write::LineTx::terminate_row(&mut super::record::PgLines(self.tx), id)?;
        }
        let stored: Vec<String> = r.col(3)?;
        Ok((ordinal + 1, stored.into_iter().collect()))
    }

    fn insert(
        &mut self,
        session_id: &str,
        transcript: i64,
        ordinal: i64,
        batch: &[BatchLine<'_>],
    ) -> Result<()> {
        // Their words are cut later, by the search queue's catch-up.
        let parsed: Vec<Parsed<'_>> = batch
            .iter()
            .map(|(line, status, env)| (*line, *status, env.clone(), None, None))
            .collect();
        let ids = super::search_queue::insert_local_lines(
            self.tx, transcript, ordinal, &parsed, session_id,
        )?;
        for (row, (line, _, env)) in ids.into_iter().zip(batch) {
            super::rows::project_record(self.tx, transcript, row, line.bytes, env)?;
        }
        Ok(())
    }

    fn set_project_cwd(&mut self, session: i64, cwd: &str) -> Result<()> {
        self.tx.execute(
            "UPDATE projects SET cwd = $2
             WHERE id = (SELECT project_id FROM sessions WHERE id = $1) AND cwd IS NULL",
            &[&session, &super::rows::without_nul(cwd).as_ref()],
        )?;
        Ok(())
    }

    fn set_agent_meta(&mut self, transcript: i64, meta: &[u8]) -> Result<()> {
        self.tx.execute(
            "UPDATE transcripts SET meta_json = $2 WHERE id = $1",
            &[&transcript, &meta],
        )?;
        Ok(())
    }

    fn api_mtime(&mut self, transcript: i64) -> Result<i64> {
        let sql = super::prepared(
            self.tx,
            "SELECT mtime FROM store_streams WHERE transcript_id = $1",
        )?;
        self.tx
            .query_opt(&sql, &[&transcript])?
            .map_or(Ok(0), |r| r.col(0))
    }

    fn catalog_mtime(&mut self, session: i64) -> Result<i64> {
        let sql = super::prepared(
            self.tx,
            "SELECT last_modified FROM catalog WHERE session_key = $1",
        )?;
        self.tx
            .query_opt(&sql, &[&session])?
            .map_or(Ok(0), |r| r.col(0))
    }

    fn stream_mtime(&mut self, session: i64, transcript: i64, main: bool) -> Result<i64> {
        let sql = super::prepared(
            self.tx,
            "SELECT CASE WHEN $3 THEN greatest(a.mtime,
                    coalesce((SELECT last_modified FROM catalog WHERE session_key = $2), 0))
                ELSE a.mtime END
             FROM (SELECT coalesce((SELECT mtime FROM store_streams WHERE transcript_id = $1),
                     0) AS mtime) a",
        )?;
        self.tx
            .query_one(&sql, &[&transcript, &session, &main])?
            .col(0)
    }

    fn set_api_mtime(&mut self, transcript: i64, mtime: i64) -> Result<()> {
        let sql = super::prepared(
            self.tx,
            "INSERT INTO store_streams (transcript_id, mtime) VALUES ($1, $2)
             ON CONFLICT (transcript_id) DO UPDATE SET mtime = excluded.mtime",
        )?;
        self.tx.execute(&sql, &[&transcript, &mtime])?;
        Ok(())
    }

    fn refresh_catalog(&mut self, session: i64, written: Option<i64>) -> Result<()> {
        super::catalog::refresh_session(self.tx, session, written)
    }

    fn each_line(
        &mut self,
        transcript: i64,
        after_ordinal: i64,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<i64> {
        // A team store keeps no checksums of its own (see `Db::export_session`).
        let mut rows = self.tx.query_raw(
            "SELECT ordinal, raw FROM rows
             WHERE transcript_id = $1 AND ordinal > $2 AND status = 0 ORDER BY ordinal",
            [
                &transcript as &(dyn postgres::types::ToSql + Sync),
                &after_ordinal,
            ],
        )?;
        let mut last = after_ordinal;
        while let Some(row) = rows.next()? {
            last = row.col(0)?;
            f(row.col::<&[u8]>(1)?);
        }
        Ok(last)
    }

    fn max_ordinal(&mut self, transcript: i64) -> Result<Option<i64>> {
        self.tx
            .query_one(
                "SELECT max(ordinal) FROM rows WHERE transcript_id = $1",
                &[&transcript],
            )?
            .col(0)
    }

    fn summary(&mut self, session: i64) -> Result<Option<StoredSummary>> {
        self.tx
            .query_opt(
                "SELECT mtime, data, folded_transcript, folded_ordinal FROM store_summaries
                 WHERE session_key = $1",
                &[&session],
            )?
            .map(|r| {
                Ok((
                    r.col(0)?,
                    r.col(1)?,
                    Watermark {
                        transcript: r.col(2)?,
                        ordinal: r.col(3)?,
                    },
                ))
            })
            .transpose()
    }

    fn put_summary(
        &mut self,
        session: i64,
        mtime: i64,
        data: &str,
        through: Watermark,
    ) -> Result<()> {
        self.tx.execute(
            "INSERT INTO store_summaries
                (session_key, mtime, data, folded_transcript, folded_ordinal)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (session_key) DO UPDATE SET mtime = excluded.mtime,
                data = excluded.data, folded_transcript = excluded.folded_transcript,
                folded_ordinal = excluded.folded_ordinal",
            &[
                &session,
                &mtime,
                &data,
                &through.transcript,
                &through.ordinal,
            ],
        )?;
        Ok(())
    }

    fn main_streams(&mut self, project_key: &str) -> Result<Vec<StreamInfo>> {
        self.tx
            .query(
                "SELECT s.session_id,
                    greatest(coalesce(ss.mtime, 0), coalesce(c.last_modified, 0))
                 FROM sessions s JOIN projects p ON p.id = s.project_id
                 JOIN transcripts t ON t.session_id = s.id AND t.subpath = ''
                      AND t.superseded_at IS NULL
                 LEFT JOIN store_streams ss ON ss.transcript_id = t.id
                 LEFT JOIN catalog c ON c.session_key = s.id
                 WHERE p.key = $1 ORDER BY s.id",
                &[&project_key],
            )?
            .into_iter()
            .map(|r| {
                Ok(StreamInfo {
                    session_id: r.col(0)?,
                    mtime: r.col(1)?,
                })
            })
            .collect()
    }

    fn summaries(&mut self, project_key: &str, f: &mut dyn FnMut(&str, i64, &str)) -> Result<()> {
        let mut rows = self.tx.query_raw(
            "SELECT s.session_id, m.mtime, m.data FROM store_summaries m
             JOIN sessions s ON s.id = m.session_key JOIN projects p ON p.id = s.project_id
             WHERE p.key = $1 ORDER BY s.id",
            [&project_key as &(dyn postgres::types::ToSql + Sync)],
        )?;
        while let Some(row) = rows.next()? {
            f(row.col(0)?, row.col(1)?, row.col(2)?);
        }
        Ok(())
    }

    fn subpaths(&mut self, project_key: &str, session_id: &str) -> Result<Vec<String>> {
        self.tx
            .query(
                "SELECT t.subpath FROM transcripts t
                 JOIN sessions s ON s.id = t.session_id JOIN projects p ON p.id = s.project_id
                 WHERE p.key = $1 AND s.session_id = $2 AND t.subpath <> ''
                   AND t.superseded_at IS NULL
                 ORDER BY t.id",
                &[&project_key, &session_id],
            )?
            .into_iter()
            .map(|r| r.col(0))
            .collect()
    }

    fn delete_session(&mut self, session: i64) -> Result<u64> {
        let streams: i64 = self
            .tx
            .query_one(
                "SELECT count(*) FROM transcripts WHERE session_id = $1",
                &[&session],
            )?
            .col(0)?;
        self.tx.execute(
            "DELETE FROM source_files WHERE transcript_id IN
                (SELECT id FROM transcripts WHERE session_id = $1)
             OR session_file_id IN (SELECT id FROM session_files WHERE session_id = $1)",
            &[&session],
        )?;
        self.tx
            .execute("DELETE FROM sessions WHERE id = $1", &[&session])?;
        Ok(streams as u64)
    }

    fn delete_stream(&mut self, session: i64, subpath: &str) -> Result<u64> {
        let streams = self.tx.execute(
            "DELETE FROM transcripts WHERE session_id = $1 AND subpath = $2",
            &[&session, &subpath],
        )?;
        let sidecar = format!("{subpath}.meta.json");
        self.tx.execute(
            "DELETE FROM source_files WHERE session_file_id IN
                (SELECT id FROM session_files WHERE session_id = $1 AND relpath = $2)",
            &[&session, &sidecar],
        )?;
        self.tx.execute(
            "DELETE FROM session_files WHERE session_id = $1 AND relpath = $2",
            &[&session, &sidecar],
        )?;
        Ok(streams)
    }
}
