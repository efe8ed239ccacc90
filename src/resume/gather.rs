//! The SQL half of resume: choose the leaf and gather only the rows the pure chain
//! functions need, using the projected columns. Only the gathered rows are parsed.
//!
//! The gathered set is the one [`super::chain::build_chain`] documents as sufficient: the
//! `parentUuid` walk from the leaf (legacy `progress` rows included, for bridging), the
//! preserved segments of compact boundaries on that walk, every assistant row sharing a
//! `message.id` with those rows, the user rows hanging off those assistants (tool results),
//! and the transcript's `content-replacement` rows.
//!
//! When the walk does not reach a root (a parent is missing, or the walk comes back to a
//! record it passed), the CLI goes on by timestamp (see [`super::chain`]), which may reach
//! any record: then every conversation row of the transcript is gathered instead.

use crate::error::Result;
use crate::{integrity, jsonl};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

/// An upper bound on any walk, so a corrupt file cannot make a query run away.
const MAX_WALK: i64 = 5_000_000;

const ENTRY: &str = "type IN ('user', 'assistant', 'attachment', 'system') AND uuid IS NOT NULL AND is_sidechain = 0";

/// Leaf candidates, newest first: chain rows that no chain row names as parent. The ordinal
/// index is forced so the scan starts at the end of the file and stops at the first hit.
fn leaf_candidates_sql() -> String {
    format!(
        "SELECT r.uuid FROM rows r INDEXED BY idx_rows_transcript_ordinal
         WHERE r.transcript_id = ?1 AND r.{ENTRY_R}
           AND NOT EXISTS (SELECT 1 FROM rows c WHERE c.transcript_id = ?1 AND c.parent_uuid = r.uuid
                           AND c.{ENTRY_C})
         ORDER BY r.ordinal DESC",
        ENTRY_R = ENTRY.replace(" AND ", " AND r."),
        ENTRY_C = ENTRY.replace(" AND ", " AND c."),
    )
}

/// Whether a row is a parent only through legacy `progress` rows (spec §5.3 bridging).
fn bridged_child_sql() -> String {
    format!(
        "WITH RECURSIVE down(uuid) AS (
            SELECT uuid FROM rows INDEXED BY idx_rows_transcript_parent
             WHERE transcript_id = ?1 AND parent_uuid = ?2 AND type = 'progress' AND uuid IS NOT NULL
            UNION
            SELECT c.uuid FROM down CROSS JOIN rows c INDEXED BY idx_rows_transcript_parent
                ON c.transcript_id = ?1 AND c.parent_uuid = down.uuid
             WHERE c.type = 'progress' AND c.uuid IS NOT NULL
            LIMIT {MAX_WALK})
         SELECT EXISTS (SELECT 1 FROM down CROSS JOIN rows e INDEXED BY idx_rows_transcript_parent
                            ON e.transcript_id = ?1 AND e.parent_uuid = down.uuid
                         WHERE e.{ENTRY_E})",
        ENTRY_E = ENTRY.replace(" AND ", " AND e."),
    )
}

/// How the record a resume ends at is chosen when none is named. Claude Code versions and
/// entry points differ (spec §5.5, oracle R1); the default is the newest observed CLI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LeafRule {
    /// CLI 2.1.332 (the oracle), every entry point: the newest chain record in file order
    /// that no chain record names as its parent.
    #[default]
    FileOrder,
    /// CLI 2.1.88 `--resume <id>` (`getLastSessionLog`): the non-sidechain message with the
    /// newest timestamp, of any type.
    NewestMessage,
    /// CLI 2.1.88 `--continue` and the picker (`loadFullLog`): every childless message is
    /// walked up to its nearest user/assistant message; the newest of those by timestamp.
    NewestTurn,
}

/// Chooses the leaf by `rule` (see [`LeafRule`]). Timestamps compare as ISO-8601 text, as
/// Claude Code writes them; a tie goes to the earlier line, and a row whose timestamp does
/// not start with a year never wins.
///
/// # Errors
/// Fails on a database error.
pub fn pick_leaf_by(conn: &Connection, transcript: i64, rule: LeafRule) -> Result<Option<String>> {
    let sql = match rule {
        LeafRule::FileOrder => return pick_leaf(conn, transcript),
        LeafRule::NewestMessage => NEWEST_MESSAGE,
        LeafRule::NewestTurn => NEWEST_TURN,
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row([transcript], |r| r.get(0))
        .optional()?)
}

const NEWEST_MESSAGE: &str = "SELECT uuid FROM rows
    WHERE transcript_id = ?1 AND type IN ('user', 'assistant', 'attachment', 'system')
      AND uuid IS NOT NULL AND is_sidechain = 0 AND timestamp GLOB '[0-9][0-9][0-9][0-9]-*'
    ORDER BY timestamp DESC, ordinal ASC LIMIT 1";

const NEWEST_TURN: &str = "WITH RECURSIVE
    terminal(uuid) AS (
        SELECT r.uuid FROM rows r
         WHERE r.transcript_id = ?1 AND r.type IN ('user', 'assistant', 'attachment', 'system')
           AND r.uuid IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM rows c WHERE c.transcript_id = ?1 AND c.parent_uuid = r.uuid
                           AND c.type IN ('user', 'assistant', 'attachment', 'system'))),
    up(uuid, type, parent, depth) AS (
        SELECT r.uuid, r.type, r.parent_uuid, 0 FROM terminal t
          CROSS JOIN rows r INDEXED BY idx_rows_transcript_uuid ON r.transcript_id = ?1 AND r.uuid = t.uuid
        UNION
        SELECT r.uuid, r.type, r.parent_uuid, up.depth + 1 FROM up
          CROSS JOIN rows r INDEXED BY idx_rows_transcript_uuid ON r.transcript_id = ?1 AND r.uuid = up.parent
         WHERE up.type NOT IN ('user', 'assistant') AND up.depth < 100000)
    SELECT r.uuid FROM up
      CROSS JOIN rows r INDEXED BY idx_rows_transcript_uuid ON r.transcript_id = ?1 AND r.uuid = up.uuid
     WHERE up.type IN ('user', 'assistant') AND r.is_sidechain = 0
       AND r.timestamp GLOB '[0-9][0-9][0-9][0-9]-*'
     ORDER BY r.timestamp DESC, r.ordinal ASC LIMIT 1";

/// R1: the newest row in file order, among chain rows, that no chain row names as its
/// parent (after progress bridging). `None` for a transcript without chain rows.
///
/// # Errors
/// Fails on a database error.
pub fn pick_leaf(conn: &Connection, transcript: i64) -> Result<Option<String>> {
    let mut candidates = conn.prepare_cached(&leaf_candidates_sql())?;
    let mut bridged = conn.prepare_cached(&bridged_child_sql())?;
    let mut rows = candidates.query([transcript])?;
    while let Some(row) = rows.next()? {
        let uuid: String = row.get(0)?;
        let has_child: bool = bridged.query_row(params![transcript, uuid], |r| r.get(0))?;
        if !has_child {
            return Ok(Some(uuid));
        }
    }
    Ok(None)
}

/// The `parentUuid` walk from `start`, cycle-safe (UNION drops revisited uuids) and bounded.
/// With `stop`, the walk does not go above that uuid (a preserved segment's head). The join
/// order (CROSS JOIN: one walk row, then an index lookup) and the uuid index are forced:
/// left alone, the planner scanned the transcript's rows at every step, which made the
/// walk quadratic.
fn walk_sql() -> String {
    format!(
        "WITH RECURSIVE walk(uuid) AS (
            SELECT ?2
            UNION
            SELECT r.parent_uuid FROM walk
              CROSS JOIN rows r INDEXED BY idx_rows_transcript_uuid
                ON r.transcript_id = ?1 AND r.uuid = walk.uuid
             WHERE r.parent_uuid IS NOT NULL AND {ON_WALK}
               AND (?3 IS NULL OR walk.uuid <> ?3)
            LIMIT {MAX_WALK})
         SELECT r.id FROM walk CROSS JOIN rows r INDEXED BY idx_rows_transcript_uuid
             ON r.transcript_id = ?1 AND r.uuid = walk.uuid
          WHERE {ON_WALK}"
    )
}

/// Rows a walk passes through: chain rows, and legacy `progress` rows (bridged whatever
/// their `isSidechain`, as the loader does).
const ON_WALK: &str =
    "((r.type IN ('user', 'assistant', 'attachment', 'system') AND r.is_sidechain = 0)
    OR r.type = 'progress')";

/// Rows around the seeds: assistant siblings by `message.id`, the user rows they parent
/// (parallel tool results) directly or through legacy `progress` rows, attachment or system
/// rows (which are gathered too: bridging, and results chained below an attachment written
/// between a reply's records, issue 25), the attachment and progress rows chained below
/// those results and their children (the CLI sends such attachments with the results when
/// no branch goes on below them), and optionally the content-replacement rows.
const NEIGHBOURS: &str = "WITH RECURSIVE seeds(id) AS (SELECT value FROM json_each(?2)),
    groups(id, uuid) AS (
        SELECT r.id, r.uuid FROM rows r INDEXED BY idx_rows_transcript_message
         WHERE r.transcript_id = ?1 AND r.type = 'assistant' AND r.message_id IN (
            SELECT s.message_id FROM rows s JOIN seeds ON s.id = seeds.id
             WHERE s.type = 'assistant' AND s.message_id IS NOT NULL)),
    bridged(id, uuid) AS (
        SELECT id, uuid FROM groups WHERE uuid IS NOT NULL
        UNION
        SELECT c.id, c.uuid FROM bridged
          CROSS JOIN rows c INDEXED BY idx_rows_transcript_parent
            ON c.transcript_id = ?1 AND c.parent_uuid = bridged.uuid
         WHERE c.type IN ('progress', 'attachment', 'system') AND c.uuid IS NOT NULL),
    results(id) AS (
        SELECT r.id FROM rows r WHERE r.transcript_id = ?1 AND r.type = 'user'
           AND r.parent_uuid IN (SELECT uuid FROM bridged)
        UNION
        SELECT r.id FROM rows r WHERE r.transcript_id = ?1 AND r.type = 'user'
           AND r.source_tool_assistant_uuid IN (SELECT uuid FROM groups WHERE uuid IS NOT NULL)),
    tails(id, uuid) AS (
        SELECT r.id, r.uuid FROM rows r WHERE r.id IN (SELECT id FROM results) AND r.uuid IS NOT NULL
        UNION
        SELECT c.id, c.uuid FROM tails
          CROSS JOIN rows c INDEXED BY idx_rows_transcript_parent
            ON c.transcript_id = ?1 AND c.parent_uuid = tails.uuid
         WHERE c.type IN ('progress', 'attachment') AND c.uuid IS NOT NULL)
    SELECT r.ordinal, line(r.raw, r.dict) AS raw, r.id, r.checksum FROM rows r WHERE r.id IN (
        SELECT id FROM seeds UNION SELECT id FROM groups UNION SELECT id FROM bridged
        UNION SELECT id FROM results UNION SELECT id FROM tails
        UNION SELECT c.id FROM rows c WHERE c.transcript_id = ?1
           AND c.parent_uuid IN (SELECT uuid FROM tails)
        UNION SELECT row_id FROM content_replacements WHERE ?3 AND transcript_id = ?1)";

/// Every row the chain rules may read, for a walk that does not reach a root.
const ALL_CONVERSATION_ROWS: &str = "SELECT r.ordinal, line(r.raw, r.dict) AS raw, r.id, r.checksum FROM rows r
     WHERE r.transcript_id = ?1
       AND (r.type IN ('user', 'assistant', 'attachment', 'system', 'progress')
            OR (?2 AND r.id IN (SELECT row_id FROM content_replacements WHERE transcript_id = ?1)))";

/// Whether the walk through these rows ended before a root (no row on it without a
/// parent): at a parent that is not stored, or where it came back to itself.
const WALK_DANGLES: &str = "SELECT NOT EXISTS (SELECT 1 FROM rows
     WHERE id IN (SELECT value FROM json_each(?1)) AND (parent_uuid IS NULL OR parent_uuid = ''))";

/// How much of each gathered record is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Records {
    /// Every field, as stored.
    Full,
    /// Enough for the API view: `toolUseResult` (the tool's output as the UI showed it,
    /// never sent to the model, and most of a transcript's bytes) stands in as a value of
    /// the same truthiness, which is all the repair pass reads of it.
    ApiView,
}

impl Records {
    fn parse(self, raw: &[u8]) -> Option<Value> {
        match self {
            Records::Full => jsonl::parse_record(raw),
            Records::ApiView => jsonl::parse_record_skipping(raw, "toolUseResult"),
        }
    }
}

/// Gathers and parses the rows needed to build the chain that ends at `leaf`, in file order.
///
/// # Errors
/// [`crate::error::Error::Damaged`] when a gathered line no longer matches its checksum; a
/// database error.
pub fn gather(
    conn: &Connection,
    transcript: i64,
    leaf: &str,
    with_replacements: bool,
    records_as: Records,
) -> Result<Vec<Value>> {
    let mut walk = conn.prepare_cached(&walk_sql())?;
    let mut seeds: Vec<i64> = walk
        .query_map(params![transcript, leaf, Option::<&str>::None], |r| {
            r.get(0)
        })?
        .collect::<rusqlite::Result<_>>()?;
    let dangles: bool = conn
        .prepare_cached(WALK_DANGLES)?
        .query_row([serde_json::to_string(&seeds)?], |r| r.get(0))?;
    if dangles {
        let mut stmt = conn.prepare_cached(ALL_CONVERSATION_ROWS)?;
        let rows = stmt.query(params![transcript, with_replacements])?;
        return parse_in_file_order(conn, rows, records_as);
    }
    // Preserved segments of the compact boundaries on the walk (R2).
    let segments: Vec<(String, String)> = {
        let mut stmt = conn.prepare_cached(
            "SELECT c.tail_uuid, c.head_uuid FROM compactions c JOIN rows r ON r.id = c.row_id
             WHERE c.transcript_id = ?1 AND c.tail_uuid IS NOT NULL AND c.head_uuid IS NOT NULL
               AND r.id IN (SELECT value FROM json_each(?2))",
        )?;
        let ids = serde_json::to_string(&seeds)?;
        let found = stmt
            .query_map(params![transcript, ids], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        found
    };
    for (tail, head) in segments {
        let ids: Vec<i64> = walk
            .query_map(params![transcript, tail, head], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        seeds.extend(ids);
    }
    seeds.sort_unstable();
    seeds.dedup();
    let ids = serde_json::to_string(&seeds)?;
    let mut stmt = conn.prepare_cached(NEIGHBOURS)?;
    let rows = stmt.query(params![transcript, ids, with_replacements])?;
    parse_in_file_order(conn, rows, records_as)
}

/// Checks and parses rows of (ordinal, raw, id, checksum), into file order.
fn parse_in_file_order(
    conn: &Connection,
    mut rows: rusqlite::Rows<'_>,
    records_as: Records,
) -> Result<Vec<Value>> {
    let mut records = Vec::new();
    while let Some(row) = rows.next()? {
        let ordinal: i64 = row.get(0)?;
        let raw = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
        integrity::check_row(conn, row.get(2)?, raw, row.get(3)?)?;
        if let Some(record) = records_as.parse(raw) {
            records.push((ordinal, record));
        }
    }
    // Into file order here rather than by the query: an ORDER BY copied every gathered line
    // into SQLite's sorter. The rows come in id order, nearly always file order already,
    // which a stable sort checks in one pass.
    records.sort_by_key(|(ordinal, _)| *ordinal);
    Ok(records.into_iter().map(|(_, record)| record).collect())
}

/// Whether a chain row with this uuid exists in the transcript (for `--at`).
///
/// # Errors
/// Fails on a database error.
pub fn has_entry(conn: &Connection, transcript: i64, uuid: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT 1 FROM rows WHERE transcript_id = ?1 AND uuid = ?2 AND {ENTRY} LIMIT 1"
        ))?
        .query_row(params![transcript, uuid], |_| Ok(()))
        .optional()?
        .is_some())
}
