//! SQLite's row writer: the lines of a transcript as rows of `rows` with their projected
//! columns, and the side tables a record fills (see [`super::sides`]). Import, `append`,
//! fork and the metadata writes store lines through it.

use super::sides::{side_of, Side};
use super::Parsed;
use crate::error::Result;
use crate::jsonl::{self, Envelope, LineStatus};
use rusqlite::{params, OptionalExtension, Transaction};

pub(super) fn create_transcript(
    tx: &Transaction<'_>,
    session: i64,
    subpath: &str,
    agent_id: Option<&str>,
) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO transcripts (session_id, subpath, agent_id) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![session, subpath, agent_id])?;
    Ok(tx.last_insert_rowid())
}

pub(super) fn set_project_cwd(tx: &Transaction<'_>, session: i64, cwd: &str) -> Result<()> {
    tx.prepare_cached(
        "UPDATE projects SET cwd = ?2
         WHERE id = (SELECT project_id FROM sessions WHERE id = ?1) AND cwd IS NULL",
    )?
    .execute(params![session, cwd])?;
    Ok(())
}

/// Lines per multi-row `INSERT` of import. Every statement that inserts into `rows` opens
/// a statement journal (the table has triggers), which copies each page it touches first:
/// one statement per line made that a large share of import time.
pub(super) const ROW_BATCH: usize = 64;

/// Import's prepared statements: the multi-row inserts of every power of two up to
/// [`ROW_BATCH`] beside the per-file and per-record ones.
pub(super) const STATEMENT_CACHE: usize = 64;

/// The columns [`insert_rows`] binds per line.
const ROW_PARAMS: usize = 26;

/// Where the lines [`insert_rows`] stores come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Read from a source file.
    Imported,
    /// Written by sessiondb (append, tag, rename, fork, a SessionStore append): carried over
    /// when a re-import replaces the transcript (see [`carry_local_rows`]).
    Local,
}

/// Stores `lines` with their projected columns under ids `first..`, in statements of
/// [`ROW_BATCH`] or fewer lines (powers of two, so that few distinct statements are cached).
/// A line's `sessionId` is projected only when it differs from its session's own id (see
/// [`line_session_id`]).
pub(crate) fn insert_rows(
    tx: &Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    first: i64,
    lines: &[(jsonl::Line<'_>, LineStatus, Envelope<'_>)],
    origin: Origin,
) -> Result<()> {
    let own = own_session_id(tx, transcript)?;
    insert_rows_of(
        tx,
        transcript,
        ordinal,
        first,
        lines,
        origin,
        own.as_deref(),
    )
}

/// A line as [`insert_rows_of`] stores it: its bytes, status and projection.
pub(crate) trait RowLine {
    /// The line, its status and its projection.
    fn parts(&self) -> (&jsonl::Line<'_>, LineStatus, &Envelope<'_>);
    /// The line compressed for storage, when it was (on import's loading thread); `None`
    /// stores it as it is (see [`crate::codec`]).
    fn packed(&self) -> Option<&crate::codec::Packed> {
        None
    }
}

impl RowLine for (jsonl::Line<'_>, LineStatus, Envelope<'_>) {
    fn parts(&self) -> (&jsonl::Line<'_>, LineStatus, &Envelope<'_>) {
        (&self.0, self.1, &self.2)
    }
}

impl RowLine for Parsed<'_> {
    fn parts(&self) -> (&jsonl::Line<'_>, LineStatus, &Envelope<'_>) {
        (&self.0, self.1, &self.2)
    }
    fn packed(&self) -> Option<&crate::codec::Packed> {
        self.4.as_ref()
    }
}

/// [`insert_rows`] for a transcript of the session whose id is `own`.
pub(crate) fn insert_rows_of(
    tx: &Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    first: i64,
    lines: &[impl RowLine],
    origin: Origin,
    own: Option<&str>,
) -> Result<()> {
    let mut done = 0;
    while done < lines.len() {
        let n = (lines.len() - done).min(ROW_BATCH);
        let n = 1 << n.ilog2();
        let one = format!("({})", vec!["?"; ROW_PARAMS].join(", "));
        let sql = format!(
            "INSERT INTO rows (id, transcript_id, ordinal, raw, terminated, status, type, uuid,
                parent_uuid, logical_parent_uuid, is_sidechain, entry_session_id, agent_id,
                timestamp, subtype, message_id, role, is_meta, is_compact_summary, is_api_error,
                source_tool_assistant_uuid, unknown_type, unknown_fields, local, checksum, dict)
                VALUES {}",
            vec![one; n].join(", ")
        );
        let mut stmt = tx.prepare_cached(&sql)?;
        for (k, row_line) in lines[done..done + n].iter().enumerate() {
            let (line, status, env) = row_line.parts();
            let i = done + k;
            let at = k * ROW_PARAMS;
            let unknown_type = status == LineStatus::Record && !env.has_known_type();
            stmt.raw_bind_parameter(at + 1, first + i as i64)?;
            stmt.raw_bind_parameter(at + 2, transcript)?;
            stmt.raw_bind_parameter(at + 3, ordinal + i as i64)?;
            let packed = row_line.packed();
            stmt.raw_bind_parameter(at + 4, packed.map_or(line.bytes, |p| p.bytes.as_slice()))?;
            stmt.raw_bind_parameter(at + 5, line.terminated)?;
            stmt.raw_bind_parameter(at + 6, status as i64)?;
            stmt.raw_bind_parameter(at + 7, env.kind.as_deref())?;
            stmt.raw_bind_parameter(at + 8, env.uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 9, env.parent_uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 10, env.logical_parent_uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 11, env.is_sidechain)?;
            stmt.raw_bind_parameter(at + 12, line_session_id(env, own))?;
            stmt.raw_bind_parameter(at + 13, env.agent_id.as_deref())?;
            stmt.raw_bind_parameter(at + 14, env.timestamp.as_deref())?;
            stmt.raw_bind_parameter(at + 15, env.subtype.as_deref())?;
            stmt.raw_bind_parameter(at + 16, env.message_id.as_deref())?;
            stmt.raw_bind_parameter(at + 17, env.role.as_deref())?;
            stmt.raw_bind_parameter(at + 18, env.is_meta)?;
            stmt.raw_bind_parameter(at + 19, env.is_compact_summary)?;
            stmt.raw_bind_parameter(at + 20, env.is_api_error)?;
            stmt.raw_bind_parameter(at + 21, env.source_tool_assistant_uuid.as_deref())?;
            stmt.raw_bind_parameter(at + 22, unknown_type)?;
            stmt.raw_bind_parameter(at + 23, env.unknown_fields)?;
            stmt.raw_bind_parameter(at + 24, origin == Origin::Local)?;
            stmt.raw_bind_parameter(at + 25, crate::integrity::line_checksum(line.bytes))?;
            stmt.raw_bind_parameter(at + 26, packed.map(|p| p.dict))?;
        }
        stmt.raw_execute()?;
        done += n;
    }
    Ok(())
}

/// The session id of the session a transcript belongs to.
fn own_session_id(tx: &Transaction<'_>, transcript: i64) -> Result<Option<String>> {
    Ok(tx
        .prepare_cached(
            "SELECT s.session_id FROM transcripts t JOIN sessions s ON s.id = t.session_id
             WHERE t.id = ?1",
        )?
        .query_row([transcript], |r| r.get(0))
        .optional()?)
}

/// What `rows.entry_session_id` holds for a line: its `sessionId` when that differs from
/// `own`, the id of the session the line is stored under, and NULL when it is the same or
/// absent. Nearly every line repeats its session's id; storing it once per line was 1 % of
/// the database, and no query needs it (the line itself keeps it, byte for byte).
pub(crate) fn line_session_id<'e>(env: &'e Envelope<'_>, own: Option<&str>) -> Option<&'e str> {
    env.session_id.as_deref().filter(|id| Some(*id) != own)
}

/// Stores a record's usage (line by line: import folds a file's first, see
/// [`transcript::TranscriptTx::store_usage`]) and fills its side tables.
pub(crate) fn project_record(
    tx: &Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &Envelope<'_>,
) -> Result<()> {
    crate::usage::sqlite::store(tx, transcript, row, bytes, env)?;
    project_sides(tx, transcript, row, bytes, env)
}

/// Fills the side tables for the records that have one: metadata, compactions, content
/// replacements and file history (see [`side_of`]).
pub(crate) fn project_sides(
    tx: &Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &Envelope<'_>,
) -> Result<()> {
    let Some(kind) = env.kind.as_deref() else {
        return Ok(());
    };
    if kind == "user" && env.is_compact_summary {
        tx.prepare_cached(
            "UPDATE compactions SET summary_uuid = ?3 WHERE transcript_id = ?1 AND boundary_uuid = ?2",
        )?
        .execute(params![transcript, env.parent_uuid.as_deref(), env.uuid.as_deref()])?;
    }
    let Some(side) = side_of(bytes, env) else {
        return Ok(());
    };
    match side {
        Side::Compaction {
            trigger,
            pre_tokens,
            head_uuid,
            anchor_uuid,
            tail_uuid,
        } => {
            tx.prepare_cached(
                "INSERT INTO compactions (row_id, transcript_id, boundary_uuid, logical_parent_uuid,
                    trigger, pre_tokens, head_uuid, anchor_uuid, tail_uuid)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                row,
                transcript,
                env.uuid.as_deref(),
                env.logical_parent_uuid.as_deref(),
                trigger,
                pre_tokens,
                head_uuid,
                anchor_uuid,
                tail_uuid,
            ])?;
        }
        Side::Replacements(replacements) => {
            for (kind, tool_use_id, replacement) in replacements {
                tx.prepare_cached(
                    "INSERT INTO content_replacements
                        (row_id, transcript_id, entry_session_id, agent_id, kind, tool_use_id, replacement)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?
                .execute(params![
                    row,
                    transcript,
                    env.session_id.as_deref(),
                    env.agent_id.as_deref(),
                    kind,
                    tool_use_id,
                    replacement,
                ])?;
            }
        }
        Side::FileHistory {
            message_id,
            is_snapshot_update,
        } => {
            tx.prepare_cached(
                "INSERT INTO file_history (row_id, transcript_id, kind, message_id, is_snapshot_update)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![row, transcript, kind, message_id, is_snapshot_update])?;
        }
        Side::Metadata { leaf_uuid, value } => {
            tx.prepare_cached(
                "INSERT INTO metadata (row_id, transcript_id, kind, entry_session_id, leaf_uuid, value)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                row,
                transcript,
                kind,
                env.session_id.as_deref(),
                leaf_uuid,
                value,
            ])?;
        }
    }
    Ok(())
}
