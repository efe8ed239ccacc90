//! Fork on the team store: the statements behind [`crate::fork::ForkBackend`]; which lines
//! a fork holds and how they are written is the shared [`crate::fork::fork_with`], so a
//! fork stores the same bytes on both backends.

use super::decode::RowExt;
use super::PgStore;
use crate::error::{Error, Result};
use crate::fork::{fork_with, used_id, ForkBackend, ForkOptions, ForkOrigin, Forked, NewFork};
use crate::model::SessionRef;
use crate::resume::{ResumeOptions, Resumed};

/// Forks a stored session (see [`crate::store::Store::fork`]).
///
/// # Errors
/// As [`crate::store::Store::fork`].
pub fn fork(store: &PgStore, source: &SessionRef, options: &ForkOptions) -> Result<Forked> {
    fork_with(store, source, options)
}

/// The origin of a session made by [`fork`] (see [`crate::fork::fork_origin`]).
///
/// # Errors
/// Fails on a database error.
pub fn fork_origin(
    tx: &mut postgres::Transaction<'_>,
    session: &SessionRef,
) -> Result<Option<ForkOrigin>> {
    tx.query_opt(
        "SELECT source_project, source_session_id, up_to_uuid, leaf_uuid, created_at
         FROM forks WHERE session_key = $1",
        &[&session.key],
    )?
    .map(|r| {
        Ok(ForkOrigin {
            project: r.col(0)?,
            session_id: r.col(1)?,
            up_to: r.col(2)?,
            leaf_uuid: r.col(3)?,
            created_at: r.col(4)?,
        })
    })
    .transpose()
}

impl ForkBackend for PgStore {
    fn resume(&self, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
        super::resume::resume(self, session, options)
    }

    fn last_metadata(
        &self,
        source: &SessionRef,
        kinds: &[&str],
        keyed_by: &str,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let found: Vec<(String, Vec<u8>)> = self.read(|tx| {
            tx.query(
                "SELECT DISTINCT ON (m.kind) m.kind, r.raw
                 FROM transcripts t
                 JOIN metadata m ON m.transcript_id = t.id
                 JOIN rows r ON r.id = m.row_id
                 WHERE t.session_id = $1 AND t.subpath = '' AND t.superseded_at IS NULL
                   AND m.kind = ANY($2)
                   AND (m.entry_session_id = $3 OR m.entry_session_id IS NULL)
                 ORDER BY m.kind, m.row_id DESC",
                &[&source.key, &kinds, &keyed_by],
            )?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .collect()
        })?;
        Ok(kinds
            .iter()
            .map(|k| {
                found
                    .iter()
                    .find(|(kind, _)| kind == k)
                    .map(|(_, raw)| raw.clone())
            })
            .collect())
    }

    fn stored_lines(&self, source: &SessionRef, uuids: &[&str]) -> Result<Vec<Option<Vec<u8>>>> {
        let found: std::collections::HashMap<String, Vec<u8>> = self.read(|tx| {
            tx.query(
                "SELECT DISTINCT ON (r.uuid) r.uuid, r.raw
                 FROM transcripts t JOIN rows r ON r.transcript_id = t.id
                 WHERE t.session_id = $1 AND t.subpath = '' AND t.superseded_at IS NULL
                   AND r.uuid = ANY($2) AND r.status = 0
                 ORDER BY r.uuid, r.ordinal DESC",
                &[&source.key, &uuids],
            )?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .collect()
        })?;
        Ok(uuids.iter().map(|u| found.get(*u).cloned()).collect())
    }

    fn write_fork(&self, source: &SessionRef, fork: &NewFork<'_>) -> Result<i64> {
        let origin = self.origin().clone();
        self.write(|tx| {
            let project: i64 = tx
                .query_opt(
                    "SELECT project_id FROM sessions WHERE id = $1",
                    &[&source.key],
                )?
                .ok_or_else(|| Error::SessionNotFound(source.session_id.clone()))?
                .col(0)?;
            let key: Option<i64> = tx
                .query_opt(
                    "INSERT INTO sessions (project_id, session_id, origin_host, origin_user)
                     VALUES ($1, $2, $3, $4)
                     ON CONFLICT (project_id, session_id) DO NOTHING
                     RETURNING id",
                    &[&project, &fork.session_id, &origin.host, &origin.user],
                )?
                .map(|r| r.col(0))
                .transpose()?;
            let Some(key) = key else {
                return Err(used_id(fork.session_id, source));
            };
            let transcript = super::import::create_transcript(tx, key, "", None)?;
            crate::record::write::write_line_bytes(
                &mut super::record::PgLines(tx),
                transcript,
                fork.session_id,
                fork.lines,
            )?;
            tx.execute(
                "INSERT INTO forks (session_key, source_session_key, source_project,
                    source_session_id, up_to_uuid, leaf_uuid, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &key,
                    &source.key,
                    &source.project,
                    &source.session_id,
                    &fork.up_to,
                    &fork.leaf_uuid,
                    &fork.created_at,
                ],
            )?;
            super::catalog::refresh_session(tx, key, Some(fork.created_at))?;
            Ok(key)
        })
    }
}
