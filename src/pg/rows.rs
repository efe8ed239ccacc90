//! The team store's row writer: the lines of a transcript as rows with their projected
//! columns and search text, and the side tables a record fills (the reading of those
//! records is shared: [`crate::import::side_of`]). Import, append, fork and sync store
//! lines through it.

use super::decode::RowExt;
use super::prepared;
use crate::error::Result;
use crate::import::{self, Side};
use crate::jsonl::{LineStatus, SearchText};
use postgres::Transaction;
use std::borrow::Cow;

/// Indexed text per column, in bytes: a `tsvector` holds at most 1 MB, and one over it
/// would fail the line's import. Past this a line's text is not searched.
const MAX_INDEXED_TEXT: usize = 200_000;

/// `text` without NUL characters, which PostgreSQL's `text` cannot hold (a JSON string may
/// spell one as `\u0000`): each becomes U+FFFD. The line itself keeps them, byte for byte.
pub(crate) fn without_nul(text: &str) -> Cow<'_, str> {
    if text.contains('\0') {
        Cow::Owned(text.replace('\0', "\u{fffd}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The words a line is searched by (see [`super::search::words`]: no NULs, which
/// PostgreSQL's text cannot hold), cut to what a `tsvector` can hold.
fn indexed_text(text: Option<&str>) -> Option<String> {
    let text = text?;
    let mut end = text.len().min(MAX_INDEXED_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(super::search::words(&text[..end]))
}

/// A line's search vector from the columns `u.indexed`, `u.body` and `u.tools` (as
/// [`search_columns`] gives them): body weighted A, tool text D, NULL for a line that is not
/// searched. Import, `reindex` and `check` use this one expression.
pub(crate) const SEARCH_VECTOR: &str = search_vector!();

/// [`SEARCH_VECTOR`] as a literal, for statements assembled with `concat!` (a prepared
/// statement's text must be `'static`).
macro_rules! search_vector {
    () => {
        "CASE WHEN u.indexed THEN
                setweight(to_tsvector('simple', coalesce(u.body, '')), 'A')
                || setweight(to_tsvector('simple', coalesce(u.tools, '')), 'D')
            END"
    };
}
pub(crate) use search_vector;

/// Whether a line is searched and the words of its two columns, as its search vector is
/// made of them; `ahead` is the text the shared reader already took from it, if any.
pub(crate) fn search_columns(
    status: LineStatus,
    env: &crate::jsonl::Envelope<'_>,
    raw: &[u8],
    ahead: Option<&SearchText>,
) -> (bool, Option<String>, Option<String>) {
    match search_of(status, env, raw, ahead) {
        None => (false, None, None),
        Some(s) => (
            true,
            indexed_text(s.body.as_deref()),
            indexed_text(s.tools.as_deref()),
        ),
    }
}

/// [`search_columns`] of a stored line, read afresh (`reindex`, `check`).
pub(crate) fn search_columns_of(raw: &[u8]) -> (bool, Option<String>, Option<String>) {
    let (status, env) = crate::jsonl::Envelope::parse(raw);
    let ahead = if crate::search::is_indexed(status, &env) {
        crate::jsonl::search_text(raw)
    } else {
        None
    };
    search_columns(status, &env, raw, ahead.as_ref())
}

/// The searchable text of a line the search index takes, by the shared reader; a line
/// longer than [`crate::search::MAX_PARSED_LINE`] is indexed by its first
/// [`crate::search::INDEXED_PREFIX`] bytes (SQLite's V9 rule).
fn search_of(
    status: LineStatus,
    env: &crate::jsonl::Envelope<'_>,
    raw: &[u8],
    ahead: Option<&SearchText>,
) -> Option<SearchText> {
    if !crate::search::is_indexed(status, env) {
        return None;
    }
    if let Some(text) = ahead {
        return Some(text.clone());
    }
    if raw.len() > crate::search::MAX_PARSED_LINE {
        let cut = raw.len().min(crate::search::INDEXED_PREFIX);
        return Some(SearchText {
            body: Some(String::from_utf8_lossy(&raw[..cut]).into_owned()),
            tools: None,
        });
    }
    Some(uncertain_text(raw))
}

/// The searchable text of a line the shared reader leaves to SQLite's JSON functions (a NUL,
/// a duplicate or escaped key): read whole, with each string cut at its first NUL as
/// SQLite's functions cut it.
fn uncertain_text(raw: &[u8]) -> SearchText {
    use serde_json::Value;
    let cut = |s: &str| s.split('\0').next().unwrap_or_default().to_owned();
    let Some(record) = crate::jsonl::parse_record(raw) else {
        return SearchText::default();
    };
    let content = record.get("message").and_then(|m| m.get("content"));
    let blocks = content.and_then(Value::as_array);
    let body = match content {
        Some(Value::String(s)) => Some(cut(s)),
        _ => blocks.map(|b| {
            b.iter()
                .filter(|e| e.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|e| e.get("text").and_then(Value::as_str))
                .map(cut)
                .collect::<Vec<_>>()
                .join("\n")
        }),
    };
    let tools = blocks.map(|b| {
        b.iter()
            .filter_map(|e| match e.get("type").and_then(Value::as_str) {
                Some("tool_use") => Some(format!(
                    "{} {}",
                    e.get("name")
                        .and_then(Value::as_str)
                        .map(cut)
                        .unwrap_or_default(),
                    e.get("input").map(Value::to_string).unwrap_or_default()
                )),
                Some("tool_result") => match e.get("content") {
                    Some(Value::String(s)) => Some(cut(s)),
                    Some(Value::Array(parts)) => Some(
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .map(cut)
                            .collect::<Vec<_>>()
                            .join("\n"),
                    ),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    SearchText { body, tools }
}

/// Stores `lines` from `ordinal` on with their projected columns and search vectors, in
/// one statement, marked `local` when sessiondb wrote them; returns their row ids in line
/// order.
pub(crate) fn insert_lines(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    lines: &[crate::import::Parsed<'_>],
    own_session: &str,
    local: bool,
) -> Result<Vec<i64>> {
    insert_rows(tx, transcript, ordinal, lines, own_session, local, false)
}

/// [`insert_lines`], with each searchable line's vector either computed (`queued` false) or
/// left empty for [`super::search_queue`] to write later (`queued` true: the line's words
/// are then not even cut here, which is most of an append's own work).
pub(crate) fn insert_rows(
    tx: &mut Transaction<'_>,
    transcript: i64,
    ordinal: i64,
    lines: &[crate::import::Parsed<'_>],
    own_session: &str,
    local: bool,
    queued: bool,
) -> Result<Vec<i64>> {
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let n = lines.len();
    let mut ordinals = Vec::with_capacity(n);
    let mut raws: Vec<&[u8]> = Vec::with_capacity(n);
    let mut terminated = Vec::with_capacity(n);
    let mut status = Vec::with_capacity(n);
    let mut text_cols: [Vec<Option<Cow<'_, str>>>; 11] = Default::default();
    let mut bool_cols: [Vec<bool>; 5] = Default::default();
    let mut unknown_fields = Vec::with_capacity(n);
    let mut indexed = Vec::with_capacity(n);
    let mut bodies: Vec<Option<String>> = Vec::with_capacity(n);
    let mut tools: Vec<Option<String>> = Vec::with_capacity(n);
    for (i, (line, st, env, search, _)) in lines.iter().enumerate() {
        ordinals.push(ordinal + i as i64);
        raws.push(line.bytes);
        terminated.push(line.terminated);
        status.push(*st as i16);
        let texts = [
            env.kind.as_deref(),
            env.uuid.as_deref(),
            env.parent_uuid.as_deref(),
            env.logical_parent_uuid.as_deref(),
            crate::import::line_session_id(env, Some(own_session)),
            env.agent_id.as_deref(),
            env.timestamp.as_deref(),
            env.subtype.as_deref(),
            env.message_id.as_deref(),
            env.role.as_deref(),
            env.source_tool_assistant_uuid.as_deref(),
        ];
        for (col, v) in text_cols.iter_mut().zip(texts) {
            col.push(v.map(without_nul));
        }
        let flags = [
            env.is_sidechain,
            env.is_meta,
            env.is_compact_summary,
            env.is_api_error,
            *st == LineStatus::Record && !env.has_known_type(),
        ];
        for (col, v) in bool_cols.iter_mut().zip(flags) {
            col.push(v);
        }
        unknown_fields.push(i64::from(env.unknown_fields));
        let (is_indexed, body, tool) = if queued {
            // An empty vector: both columns empty.
            (crate::search::is_indexed(*st, env), None, None)
        } else {
            search_columns(*st, env, line.bytes, search.as_ref())
        };
        indexed.push(is_indexed);
        bodies.push(body);
        tools.push(tool);
    }
    let [kind, uuid, parent, logical, entry_session, agent, timestamp, subtype, message, role, source_tool] =
        &text_cols;
    let [sidechain, meta, compact, api_error, unknown_type] = &bool_cols;
    let stmt = prepared(
        tx,
        concat!(
            "INSERT INTO rows (transcript_id, ordinal, raw, terminated, status, type, uuid,
            parent_uuid, logical_parent_uuid, is_sidechain, entry_session_id, agent_id, timestamp,
            subtype, message_id, role, is_meta, is_compact_summary, is_api_error,
            source_tool_assistant_uuid, unknown_type, unknown_fields, local, search)
         SELECT $1, u.ordinal, u.raw, u.terminated, u.status, u.type, u.uuid, u.parent_uuid,
            u.logical_parent_uuid, u.is_sidechain, u.entry_session_id, u.agent_id, u.timestamp,
            u.subtype, u.message_id, u.role, u.is_meta, u.is_compact_summary, u.is_api_error,
            u.source_tool_assistant_uuid, u.unknown_type, u.unknown_fields, $23, ",
            search_vector!(),
            "
         FROM unnest($2::bigint[], $3::bytea[], $4::boolean[], $5::smallint[], $6::text[],
                     $7::text[], $8::text[], $9::text[], $10::boolean[], $11::text[],
                     $12::text[], $13::text[], $14::text[], $15::text[], $16::text[],
                     $17::boolean[], $18::boolean[], $19::boolean[], $20::text[],
                     $21::boolean[], $22::bigint[], $24::boolean[], $25::text[], $26::text[])
           AS u(ordinal, raw, terminated, status, type, uuid, parent_uuid, logical_parent_uuid,
                is_sidechain, entry_session_id, agent_id, timestamp, subtype, message_id, role,
                is_meta, is_compact_summary, is_api_error, source_tool_assistant_uuid,
                unknown_type, unknown_fields, indexed, body, tools)
         RETURNING id, ordinal"
        ),
    )?;
    let rows = tx.query(
        &stmt,
        &[
            &transcript,
            &ordinals,
            &raws,
            &terminated,
            &status,
            kind,
            uuid,
            parent,
            logical,
            sidechain,
            entry_session,
            agent,
            timestamp,
            subtype,
            message,
            role,
            meta,
            compact,
            api_error,
            source_tool,
            unknown_type,
            &unknown_fields,
            &local,
            &indexed,
            &bodies,
            &tools,
        ],
    )?;
    let mut ids = vec![0i64; n];
    for r in rows {
        let at = (r.col::<i64>(1)? - ordinal) as usize;
        ids[at] = r.col(0)?;
    }
    Ok(ids)
}

/// Stores a record's usage (line by line: import folds a file's first, see
/// [`TranscriptTx::store_usage`]) and fills its side tables.
pub(crate) fn project_record(
    tx: &mut Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &crate::jsonl::Envelope<'_>,
) -> Result<()> {
    crate::pg::usage::store(tx, transcript, row, bytes, env)?;
    project_sides(tx, transcript, row, bytes, env)
}

/// Fills the side tables for a record (the shared [`crate::import::side_of`]).
pub(crate) fn project_sides(
    tx: &mut Transaction<'_>,
    transcript: i64,
    row: i64,
    bytes: &[u8],
    env: &crate::jsonl::Envelope<'_>,
) -> Result<()> {
    let Some(kind) = env.kind.as_deref() else {
        return Ok(());
    };
    if kind == "user" && env.is_compact_summary {
        let stmt = prepared(tx, "UPDATE compactions SET summary_uuid = $3 WHERE transcript_id = $1 AND boundary_uuid = $2")?;
        tx.execute(
            &stmt,
            &[
                &transcript,
                &env.parent_uuid.as_deref(),
                &env.uuid.as_deref(),
            ],
        )?;
    }
    let Some(side) = import::side_of(bytes, env) else {
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
            let stmt = prepared(tx, "INSERT INTO compactions (row_id, transcript_id, boundary_uuid, logical_parent_uuid,
                    trigger, pre_tokens, head_uuid, anchor_uuid, tail_uuid)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)")?;
            tx.execute(
                &stmt,
                &[
                    &row,
                    &transcript,
                    &env.uuid.as_deref(),
                    &env.logical_parent_uuid.as_deref(),
                    &trigger,
                    &pre_tokens,
                    &head_uuid,
                    &anchor_uuid,
                    &tail_uuid,
                ],
            )?;
        }
        Side::Replacements(replacements) => {
            for (rkind, tool_use_id, replacement) in replacements {
                let stmt = prepared(
                    tx,
                    "INSERT INTO content_replacements (row_id, transcript_id, entry_session_id,
                        agent_id, kind, tool_use_id, replacement)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )?;
                tx.execute(
                    &stmt,
                    &[
                        &row,
                        &transcript,
                        &env.session_id.as_deref(),
                        &env.agent_id.as_deref(),
                        &rkind,
                        &tool_use_id,
                        &replacement.map(|r| r.replace('\0', "\u{fffd}")),
                    ],
                )?;
            }
        }
        Side::FileHistory {
            message_id,
            is_snapshot_update,
        } => {
            let stmt = prepared(tx, "INSERT INTO file_history (row_id, transcript_id, kind, message_id, is_snapshot_update)
                 VALUES ($1, $2, $3, $4, $5)")?;
            tx.execute(
                &stmt,
                &[&row, &transcript, &kind, &message_id, &is_snapshot_update],
            )?;
        }
        Side::Metadata { leaf_uuid, value } => {
            let stmt = prepared(tx, "INSERT INTO metadata (row_id, transcript_id, kind, entry_session_id, leaf_uuid, value)
                 VALUES ($1, $2, $3, $4, $5, $6)")?;
            tx.execute(
                &stmt,
                &[
                    &row,
                    &transcript,
                    &kind,
                    &env.session_id.as_deref(),
                    &leaf_uuid,
                    &value.map(|v| v.replace('\0', "\u{fffd}")),
                ],
            )?;
        }
    }
    Ok(())
}
