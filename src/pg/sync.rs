//! The team store as a sync's target: its answers to [`crate::sync`]'s questions, in SQL.

use super::decode::RowExt;
use super::import::{upsert_session, PgTx};
use super::{prepared, PgStore};
use crate::error::Result;
use crate::import::transcript::TranscriptTx;
use crate::model::Progress;
use crate::store::Store;
use crate::sync::{
    Fingerprint, LedgerCopy, Outcome, SyncTarget, SyncTx, TargetLine, Unit, UnitKey,
};
use std::collections::HashMap;

pub use crate::sync::SyncReport;

/// Copies every live session file of the local store `source` that the team store lacks
/// (the rules: [`crate::sync`]).
///
/// # Errors
/// Fails on a database error on either side; what was committed before stays.
pub fn sync(source: &Store, target: &PgStore, progress: &dyn Progress) -> Result<SyncReport> {
    crate::sync::sync(source, target, progress)
}

impl SyncTarget for PgStore {
    fn fingerprints(&self) -> Result<HashMap<UnitKey, Fingerprint>> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT p.key, s.session_id, t.subpath, agg.n, agg.bytes, last.digest
                 FROM transcripts t
                 JOIN sessions s ON s.id = t.session_id
                 JOIN projects p ON p.id = s.project_id
                 CROSS JOIN LATERAL (
                    SELECT count(*) AS n,
                           coalesce(sum(length(r.raw) + r.terminated::int), 0)::bigint AS bytes
                    FROM rows r WHERE r.transcript_id = t.id) agg
                 LEFT JOIN LATERAL (
                    SELECT sha256(CASE WHEN r.terminated THEN r.raw || '\\x0a'::bytea
                                       ELSE r.raw END) AS digest
                    FROM rows r WHERE r.transcript_id = t.id
                    ORDER BY r.ordinal DESC LIMIT 1) last ON true
                 WHERE t.superseded_at IS NULL",
                &[],
            )?;
            rows.iter()
                .map(|r| {
                    Ok((
                        (r.col(0)?, r.col(1)?, r.col(2)?),
                        Fingerprint {
                            rows: r.col(3)?,
                            bytes: r.col(4)?,
                            last: r.col(5)?,
                        },
                    ))
                })
                .collect()
        })
    }

    fn file_digests(&self) -> Result<HashMap<UnitKey, Vec<u8>>> {
        self.read(|tx| {
            let rows = tx.query(
                "SELECT p.key, s.session_id, f.relpath, sha256(f.content)
                 FROM session_files f
                 JOIN sessions s ON s.id = f.session_id
                 JOIN projects p ON p.id = s.project_id",
                &[],
            )?;
            rows.iter()
                .map(|r| Ok(((r.col(0)?, r.col(1)?, r.col(2)?), r.col(3)?)))
                .collect()
        })
    }

    fn write_unit<U: Unit>(&self, unit: &U) -> Result<Outcome> {
        let origin = self.origin().clone();
        self.write(|tx| {
            unit.write(&mut PgTx {
                tx,
                origin: &origin,
            })
        })
    }
}

impl SyncTx for PgTx<'_, '_> {
    fn open_session(&mut self, project: &str, session: &str, cwd: Option<&str>) -> Result<i64> {
        let key = upsert_session(self.tx, project, session, self.origin)?;
        if let Some(cwd) = cwd {
            self.set_project_cwd(key, cwd)?;
        }
        Ok(key)
    }

    fn owned(&mut self, session: i64) -> Result<bool> {
        let stmt = prepared(self.tx, "SELECT origin_host FROM sessions WHERE id = $1")?;
        let host: String = self.tx.query_one(&stmt, &[&session])?.col(0)?;
        Ok(host == self.origin.host)
    }

    fn target_lines(&mut self, transcript: i64) -> Result<Vec<TargetLine>> {
        let stmt = prepared(
            self.tx,
            "SELECT ordinal, sha256(raw), terminated, local FROM rows WHERE transcript_id = $1
             ORDER BY ordinal",
        )?;
        self.tx
            .query(&stmt, &[&transcript])?
            .iter()
            .map(|r| {
                Ok(TargetLine {
                    ordinal: r.col(0)?,
                    digest: r.col(1)?,
                    terminated: r.col(2)?,
                    local: r.col(3)?,
                })
            })
            .collect()
    }

    fn set_meta(&mut self, transcript: i64, meta: &[u8]) -> Result<()> {
        let stmt = prepared(
            self.tx,
            "UPDATE transcripts SET meta_json = $2 WHERE id = $1
               AND meta_json IS DISTINCT FROM $2",
        )?;
        self.tx.execute(&stmt, &[&transcript, &meta])?;
        Ok(())
    }

    fn file_digest(&mut self, session: i64, relpath: &str) -> Result<Option<Vec<u8>>> {
        let stmt = prepared(
            self.tx,
            "SELECT sha256(content) FROM session_files WHERE session_id = $1 AND relpath = $2",
        )?;
        self.tx
            .query_opt(&stmt, &[&session, &relpath])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn carry_ledger(
        &mut self,
        l: &LedgerCopy,
        transcript: Option<i64>,
        session_file: Option<i64>,
    ) -> Result<()> {
        let stmt = prepared(
            self.tx,
            "INSERT INTO source_files (host, path, transcript_id, session_file_id, size,
                mtime_ns, imported_bytes, prefix_hash, tail_hash, vanished)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (host, path) DO UPDATE SET
                transcript_id = excluded.transcript_id,
                session_file_id = excluded.session_file_id,
                size = excluded.size, mtime_ns = excluded.mtime_ns,
                imported_bytes = excluded.imported_bytes, prefix_hash = excluded.prefix_hash,
                tail_hash = excluded.tail_hash, vanished = excluded.vanished",
        )?;
        self.tx.execute(
            &stmt,
            &[
                &self.origin.host,
                &l.path,
                &transcript,
                &session_file,
                &l.size,
                &l.mtime_ns,
                &l.imported_bytes,
                &l.prefix_hash,
                &l.tail_hash,
                &l.vanished,
            ],
        )?;
        Ok(())
    }

    fn refresh_catalog(&mut self, session: i64, written_at: Option<i64>) -> Result<()> {
        super::catalog::refresh_session(self.tx, session, written_at)
    }
}
