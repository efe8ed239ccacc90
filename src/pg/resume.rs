//! Resume from the team store: the SQL half of [`crate::resume::gather`] in PostgreSQL's
//! dialect (recursive CTEs for the `parentUuid` walk and the bridging through `progress`
//! rows), feeding the shared composition [`crate::resume::resume_with`] and its pure chain
//! and repair functions.

use super::decode::RowExt;
use super::PgStore;
use crate::error::{Error, Result};
use crate::jsonl;
use crate::model::SessionRef;
use crate::resume::gather::LeafRule;
use crate::resume::{
    api_view_with, resume_with, ResumeOptions, ResumeSource, Resumed, StoredReplacement,
    StoredSubagent,
};
use postgres::types::Type;
use postgres::Transaction;
use serde_json::Value;

/// Records that form a chain (the SQLite `ENTRY` condition).
const CHAIN_TYPES: &str = "('user', 'assistant', 'attachment', 'system')";

/// Resumes a stored session (see [`crate::store::Store::resume`]).
///
/// # Errors
/// As [`crate::store::Store::resume`].
pub fn resume(store: &PgStore, session: &SessionRef, options: &ResumeOptions) -> Result<Resumed> {
    store.read(|tx| resume_with(&mut Pg(tx), session, options))
}

/// [`crate::resume::Resumed::into_api_view`] of [`resume`], reading only what the view
/// needs (see [`crate::store::Store::resume_api_view`]): five fewer queries than a full resume.
///
/// # Errors
/// As [`crate::store::Store::resume`].
pub fn resume_api_view(
    store: &PgStore,
    session: &SessionRef,
    options: &ResumeOptions,
) -> Result<Vec<Value>> {
    store.read(|tx| api_view_with(&mut Pg(tx), session, options))
}

/// The session `--continue` picks in a project (see [`crate::store::Store::continue_target`]).
///
/// # Errors
/// [`Error::SessionNotFound`] when the project has no resumable session.
pub fn continue_target(store: &PgStore, project: &str) -> Result<SessionRef> {
    store.read(|tx| {
        let found = tx.query_typed_opt(
            &format!(
                "SELECT s.id, p.key, s.session_id FROM sessions s
                 JOIN projects p ON p.id = s.project_id
                 JOIN transcripts t ON t.session_id = s.id AND t.subpath = ''
                   AND t.superseded_at IS NULL
                 LEFT JOIN LATERAL (SELECT f.mtime_ns FROM source_files f
                     WHERE f.transcript_id = t.id ORDER BY f.id DESC LIMIT 1) f ON true
                 WHERE p.key = $1
                   AND EXISTS (SELECT 1 FROM rows r WHERE r.transcript_id = t.id
                               AND NOT r.is_sidechain AND r.type IN {CHAIN_TYPES})
                 ORDER BY f.mtime_ns DESC NULLS LAST, s.id DESC LIMIT 1"
            ),
            &[(&project, Type::TEXT)],
        )?;
        let r = found.ok_or_else(|| {
            Error::SessionNotFound(format!("no resumable session in project {project}"))
        })?;
        Ok(SessionRef {
            key: r.col(0)?,
            project: r.col(1)?,
            session_id: r.col(2)?,
        })
    })
}

/// The leaf `resume` picks by default (R1), for the record API's parent.
///
/// # Errors
/// Fails on a database error.
pub(crate) fn pick_leaf(tx: &mut Transaction<'_>, transcript: i64) -> Result<Option<String>> {
    Pg(tx).pick_leaf(transcript)
}

/// Whether a chain row with this uuid exists in the transcript.
///
/// # Errors
/// Fails on a database error.
pub(crate) fn has_entry(tx: &mut Transaction<'_>, transcript: i64, uuid: &str) -> Result<bool> {
    Pg(tx).has_entry(transcript, uuid)
}

struct Pg<'a, 'b>(&'a mut Transaction<'b>);

impl Pg<'_, '_> {
    /// R1 (see [`crate::resume::gather::pick_leaf`]): the newest chain row in file order
    /// that no chain row names as parent, after bridging through `progress` rows.
    ///
    /// One statement: the bridging test is a correlated recursive query, so the planner
    /// walks the transcript backwards by ordinal and stops at the first row that passes
    /// (0.1 ms on the largest session of the bench tree), where listing every childless
    /// row first and testing each in a query of its own took a hash anti-join over the
    /// whole transcript (5.5 ms there) and a round trip per candidate.
    fn pick_leaf(&mut self, transcript: i64) -> Result<Option<String>> {
        let sql = format!(
            "SELECT r.uuid FROM rows r
             WHERE r.transcript_id = $1 AND r.type IN {CHAIN_TYPES}
               AND r.uuid IS NOT NULL AND NOT r.is_sidechain
               AND NOT EXISTS (SELECT 1 FROM rows c WHERE c.transcript_id = $1
                   AND c.parent_uuid = r.uuid AND c.type IN {CHAIN_TYPES}
                   AND c.uuid IS NOT NULL AND NOT c.is_sidechain)
               AND NOT EXISTS (
                   WITH RECURSIVE down(uuid) AS (
                       SELECT p.uuid FROM rows p WHERE p.transcript_id = $1
                          AND p.parent_uuid = r.uuid AND p.type = 'progress'
                          AND p.uuid IS NOT NULL
                       UNION
                       SELECT c.uuid FROM down JOIN rows c
                           ON c.transcript_id = $1 AND c.parent_uuid = down.uuid
                        WHERE c.type = 'progress' AND c.uuid IS NOT NULL)
                   SELECT 1 FROM down JOIN rows e
                       ON e.transcript_id = $1 AND e.parent_uuid = down.uuid
                    WHERE e.type IN {CHAIN_TYPES} AND e.uuid IS NOT NULL
                      AND NOT e.is_sidechain)
             ORDER BY r.ordinal DESC LIMIT 1"
        );
        self.0
            .query_typed_opt(&sql, &[(&transcript, Type::INT8)])?
            .map(|r| r.col(0))
            .transpose()
    }
}

/// The `parentUuid` walk from `$2`, not above `$3` when given, as `on_walk`: the ids of the
/// rows on it. `UNION` drops revisited uuids, so a cycle ends the walk.
macro_rules! walk_cte {
    () => {
        "WITH RECURSIVE walk(uuid) AS (
            SELECT $2::text
            UNION
            SELECT r.parent_uuid FROM walk JOIN rows r
                ON r.transcript_id = $1 AND r.uuid = walk.uuid
             WHERE r.parent_uuid IS NOT NULL
               AND ((r.type IN ('user', 'assistant', 'attachment', 'system') AND NOT r.is_sidechain)
                    OR r.type = 'progress')
               AND ($3::text IS NULL OR walk.uuid <> $3)),
        on_walk(id) AS (
            SELECT r.id FROM walk JOIN rows r ON r.transcript_id = $1 AND r.uuid = walk.uuid
             WHERE (r.type IN ('user', 'assistant', 'attachment', 'system') AND NOT r.is_sidechain)
                OR r.type = 'progress')"
    };
}

/// The ids of the rows on a walk (see [`walk_cte`]).
const WALK: &str = concat!(walk_cte!(), " SELECT id FROM on_walk");

/// [`WALK`]'s rows (`id`, then two nulls), and after them the preserved segments of the
/// compact boundaries on the walk (R2: a null, then the segment's tail and head uuids): the
/// walk and the question that follows it in one round trip.
const WALK_AND_SEGMENTS: &str = concat!(
    walk_cte!(),
    " SELECT id, NULL::text, NULL::text FROM on_walk
      UNION ALL
      SELECT NULL, c.tail_uuid, c.head_uuid FROM compactions c
       WHERE c.transcript_id = $1 AND c.tail_uuid IS NOT NULL AND c.head_uuid IS NOT NULL
         AND c.row_id IN (SELECT id FROM on_walk)"
);

/// Every row the chain rules may read, for a walk that does not reach a root (see
/// [`crate::resume::gather`]).
const ALL_CONVERSATION_ROWS: &str = "SELECT r.ordinal, r.raw FROM rows r
     WHERE r.transcript_id = $1
       AND (r.type IN ('user', 'assistant', 'attachment', 'system', 'progress')
            OR ($2 AND r.id IN (SELECT row_id FROM content_replacements WHERE transcript_id = $1)))
     ORDER BY r.ordinal";

/// Whether the walk through these rows ended before a root (see the SQLite `WALK_DANGLES`).
const WALK_DANGLES: &str = "SELECT NOT EXISTS (SELECT 1 FROM rows
     WHERE id = ANY($1::bigint[]) AND (parent_uuid IS NULL OR parent_uuid = ''))";

/// The rows around the seeds (see the SQLite `NEIGHBOURS`).
const NEIGHBOURS: &str = "WITH RECURSIVE seeds(id) AS (SELECT unnest($2::bigint[])),
    groups(id, uuid) AS (
        SELECT r.id, r.uuid FROM rows r
         WHERE r.transcript_id = $1 AND r.type = 'assistant' AND r.message_id IN (
            SELECT s.message_id FROM rows s JOIN seeds ON s.id = seeds.id
             WHERE s.type = 'assistant' AND s.message_id IS NOT NULL)),
    bridged(id, uuid) AS (
        SELECT id, uuid FROM groups WHERE uuid IS NOT NULL
        UNION
        SELECT c.id, c.uuid FROM bridged JOIN rows c
            ON c.transcript_id = $1 AND c.parent_uuid = bridged.uuid
         WHERE c.type IN ('progress', 'attachment', 'system') AND c.uuid IS NOT NULL),
    results(id) AS (
        SELECT r.id FROM rows r WHERE r.transcript_id = $1 AND r.type = 'user'
           AND r.parent_uuid IN (SELECT uuid FROM bridged)
        UNION
        SELECT r.id FROM rows r WHERE r.transcript_id = $1 AND r.type = 'user'
           AND r.source_tool_assistant_uuid IN (SELECT uuid FROM groups WHERE uuid IS NOT NULL)),
    tails(id, uuid) AS (
        SELECT r.id, r.uuid FROM rows r WHERE r.id IN (SELECT id FROM results) AND r.uuid IS NOT NULL
        UNION
        SELECT c.id, c.uuid FROM tails JOIN rows c
            ON c.transcript_id = $1 AND c.parent_uuid = tails.uuid
         WHERE c.type IN ('progress', 'attachment') AND c.uuid IS NOT NULL)
    SELECT r.ordinal, r.raw FROM rows r WHERE r.id IN (
        SELECT id FROM seeds UNION SELECT id FROM groups UNION SELECT id FROM bridged
        UNION SELECT id FROM results UNION SELECT id FROM tails
        UNION SELECT c.id FROM rows c WHERE c.transcript_id = $1
           AND c.parent_uuid IN (SELECT uuid FROM tails)
        UNION SELECT row_id FROM content_replacements WHERE $3 AND transcript_id = $1)
    ORDER BY r.ordinal";

impl ResumeSource for Pg<'_, '_> {
    fn main_transcript(&mut self, session: &SessionRef) -> Result<Option<i64>> {
        super::export::main_transcript(self.0, session)
    }

    fn has_entry(&mut self, transcript: i64, uuid: &str) -> Result<bool> {
        Ok(self
            .0
            .query_typed_opt(
                &format!(
                    "SELECT 1 FROM rows WHERE transcript_id = $1 AND uuid = $2
                       AND type IN {CHAIN_TYPES} AND NOT is_sidechain LIMIT 1"
                ),
                &[(&transcript, Type::INT8), (&uuid, Type::TEXT)],
            )?
            .is_some())
    }

    fn pick_leaf_by(&mut self, transcript: i64, rule: LeafRule) -> Result<Option<String>> {
        // Timestamps compare as ISO-8601 text, byte by byte (COLLATE "C"), as in SQLite.
        let sql = match rule {
            LeafRule::FileOrder => return self.pick_leaf(transcript),
            LeafRule::NewestMessage => format!(
                "SELECT uuid FROM rows
                 WHERE transcript_id = $1 AND type IN {CHAIN_TYPES} AND uuid IS NOT NULL
                   AND NOT is_sidechain AND timestamp ~ '^[0-9]{{4}}-'
                 ORDER BY timestamp COLLATE \"C\" DESC, ordinal ASC LIMIT 1"
            ),
            LeafRule::NewestTurn => format!(
                "WITH RECURSIVE
                 terminal(uuid) AS (
                    SELECT r.uuid FROM rows r
                     WHERE r.transcript_id = $1 AND r.type IN {CHAIN_TYPES} AND r.uuid IS NOT NULL
                       AND NOT EXISTS (SELECT 1 FROM rows c WHERE c.transcript_id = $1
                           AND c.parent_uuid = r.uuid AND c.type IN {CHAIN_TYPES})),
                 up(uuid, type, parent, depth) AS (
                    SELECT r.uuid, r.type, r.parent_uuid, 0 FROM terminal t
                      JOIN rows r ON r.transcript_id = $1 AND r.uuid = t.uuid
                    UNION
                    SELECT r.uuid, r.type, r.parent_uuid, up.depth + 1 FROM up
                      JOIN rows r ON r.transcript_id = $1 AND r.uuid = up.parent
                     WHERE up.type NOT IN ('user', 'assistant') AND up.depth < 100000)
                 SELECT r.uuid FROM up JOIN rows r ON r.transcript_id = $1 AND r.uuid = up.uuid
                  WHERE up.type IN ('user', 'assistant') AND NOT r.is_sidechain
                    AND r.timestamp ~ '^[0-9]{{4}}-'
                  ORDER BY r.timestamp COLLATE \"C\" DESC, r.ordinal ASC LIMIT 1"
            ),
        };
        self.0
            .query_typed_opt(&sql, &[(&transcript, Type::INT8)])?
            .map(|r| r.col(0))
            .transpose()
    }

    fn gather(
        &mut self,
        transcript: i64,
        leaf: &str,
        with_replacements: bool,
    ) -> Result<Vec<Value>> {
        let none: Option<&str> = None;
        let mut seeds: Vec<i64> = Vec::new();
        // Preserved segments of the compact boundaries on the walk (R2).
        let mut segments: Vec<(String, String)> = Vec::new();
        for r in self.0.query_typed(
            WALK_AND_SEGMENTS,
            &[
                (&transcript, Type::INT8),
                (&leaf, Type::TEXT),
                (&none, Type::TEXT),
            ],
        )? {
            match r.col::<Option<i64>>(0)? {
                Some(id) => seeds.push(id),
                None => segments.push((r.col(1)?, r.col(2)?)),
            }
        }
        let dangles: bool = self
            .0
            .query_typed_one(WALK_DANGLES, &[(&seeds, Type::INT8_ARRAY)])?
            .col(0)?;
        if dangles {
            let rows = self.0.query_typed(
                ALL_CONVERSATION_ROWS,
                &[(&transcript, Type::INT8), (&with_replacements, Type::BOOL)],
            )?;
            return records(&rows, 1);
        }
        for (tail, head) in segments {
            let more = self.0.query_typed(
                WALK,
                &[
                    (&transcript, Type::INT8),
                    (&tail, Type::TEXT),
                    (&Some(head), Type::TEXT),
                ],
            )?;
            for r in &more {
                seeds.push(r.col(0)?);
            }
        }
        seeds.sort_unstable();
        seeds.dedup();
        let rows = self.0.query_typed(
            NEIGHBOURS,
            &[
                (&transcript, Type::INT8),
                (&seeds, Type::INT8_ARRAY),
                (&with_replacements, Type::BOOL),
            ],
        )?;
        records(&rows, 1)
    }

    fn last_metadata(
        &mut self,
        transcript: i64,
        session_id: &str,
    ) -> Result<Vec<(String, Option<String>)>> {
        self.0
            .query_typed(
                "SELECT DISTINCT ON (m.kind) m.kind, m.value FROM metadata m
                 WHERE m.transcript_id = $1 AND m.kind <> 'summary'
                   AND (m.entry_session_id = $2 OR m.entry_session_id IS NULL)
                 ORDER BY m.kind, m.row_id DESC",
                &[(&transcript, Type::INT8), (&session_id, Type::TEXT)],
            )?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?)))
            .collect()
    }

    fn summary_at(&mut self, transcript: i64, leaf: &str) -> Result<Option<String>> {
        Ok(self
            .0
            .query_typed_opt(
                "SELECT value FROM metadata WHERE transcript_id = $1 AND kind = 'summary'
                   AND leaf_uuid = $2 ORDER BY row_id DESC LIMIT 1",
                &[(&transcript, Type::INT8), (&leaf, Type::TEXT)],
            )?
            .map(|r| r.col::<Option<String>>(0))
            .transpose()?
            .flatten())
    }

    fn file_history_records(&mut self, transcript: i64) -> Result<Vec<Value>> {
        let rows = self.0.query_typed(
            "SELECT r.raw FROM file_history f JOIN rows r ON r.id = f.row_id
         WHERE f.transcript_id = $1 ORDER BY r.ordinal",
            &[(&transcript, Type::INT8)],
        )?;
        records(&rows, 0)
    }

    fn replacements(&mut self, session: i64, session_id: &str) -> Result<Vec<StoredReplacement>> {
        self.0
            .query_typed(
                "SELECT c.kind, c.tool_use_id, c.replacement, c.agent_id
                 FROM content_replacements c JOIN transcripts t ON t.id = c.transcript_id
                 WHERE t.session_id = $1 AND t.superseded_at IS NULL
                   AND (c.agent_id IS NOT NULL OR c.entry_session_id = $2
                        OR c.entry_session_id IS NULL)
                 ORDER BY c.id",
                &[(&session, Type::INT8), (&session_id, Type::TEXT)],
            )?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?, r.col(3)?)))
            .collect()
    }

    fn subagents(&mut self, session: i64) -> Result<Vec<StoredSubagent>> {
        self.0
            .query_typed(
                "SELECT t.agent_id, t.subpath, t.meta_json,
                    (SELECT count(*) FROM rows r WHERE r.transcript_id = t.id)
                 FROM transcripts t WHERE t.session_id = $1 AND t.subpath <> ''
                   AND t.superseded_at IS NULL
                 ORDER BY t.subpath COLLATE \"C\"",
                &[(&session, Type::INT8)],
            )?
            .iter()
            .map(|r| Ok((r.col(0)?, r.col(1)?, r.col(2)?, r.col(3)?)))
            .collect()
    }
}

/// The records of `rows`' column `idx` (stored lines), without the lines that do not parse
/// as a record.
fn records(rows: &[postgres::Row], idx: usize) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for r in rows {
        if let Some(record) = jsonl::parse_record(r.col::<&[u8]>(idx)?) {
            out.push(record);
        }
    }
    Ok(out)
}
