//! The lines that name a phrase, newest first and unranked (the MCP `files` tool): no
//! score and no snippet, so that a path named in thousands of lines costs one index walk
//! and a join per line, not a BM25 sort and a snippet each.

use crate::error::Result;
use rusqlite::{params, Connection};

/// A line whose indexed text (either column) holds the phrase.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mention {
    /// The line's key in the store, for [`each_line`].
    pub line: i64,
    /// The session id.
    pub session_id: String,
    /// The project folder.
    pub project: String,
    /// The session's title (the catalog's `summary`).
    pub title: Option<String>,
    /// The sub-agent whose transcript holds the line, if not the main one.
    pub agent_id: Option<String>,
    /// `user` or `assistant`.
    pub role: String,
    /// The record's timestamp.
    pub timestamp: Option<String>,
    /// The record's uuid.
    pub uuid: Option<String>,
}

/// The newest `cap` lines (in storage order) of live transcripts whose indexed text holds
/// every word of `text` (as [`super::search`] reads it, tool text included), in project
/// `project` if given, newest first. FTS5 walks its index backwards, so the cap also bounds
/// the joins.
///
/// # Errors
/// Fails on a database error (never on what the user typed).
pub fn mentions(
    conn: &Connection,
    text: &str,
    project: Option<&str>,
    cap: usize,
) -> Result<Vec<Mention>> {
    let Some(query) = super::fts_query(text, true) else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT rows_fts.rowid, s.session_id, p.key, c.summary, t.agent_id, r.type, r.timestamp,
                r.uuid
         FROM rows_fts
         JOIN rows r ON r.id = rows_fts.rowid
         JOIN transcripts t ON t.id = r.transcript_id AND t.superseded_at IS NULL
         JOIN sessions s ON s.id = t.session_id
         JOIN projects p ON p.id = s.project_id
         LEFT JOIN catalog c ON c.session_key = s.id
         WHERE rows_fts MATCH ?1
           AND (?2 IS NULL OR p.key = ?2
                OR (length(?2) > 200 AND substr(p.key, 1, length(?2)) = ?2))
         ORDER BY rows_fts.rowid DESC LIMIT {cap}"
    );
    let found = conn
        .prepare_cached(&sql)?
        .query_map(params![query, project], |r| {
            Ok(Mention {
                line: r.get(0)?,
                session_id: r.get(1)?,
                project: r.get(2)?,
                title: r.get(3)?,
                agent_id: r.get(4)?,
                role: r.get(5)?,
                timestamp: r.get(6)?,
                uuid: r.get(7)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(found)
}

/// Calls `each` with the stored bytes of each of these lines that exists (in the order
/// given), for a caller that reads a few fields of each without a copy of the line.
///
/// # Errors
/// Fails on a database error.
pub fn each_line(conn: &Connection, lines: &[i64], each: &mut dyn FnMut(i64, &[u8])) -> Result<()> {
    let mut raw = conn.prepare_cached("SELECT line(raw, dict) AS raw FROM rows WHERE id = ?1")?;
    for &line in lines {
        let mut rows = raw.query([line])?;
        if let Some(row) = rows.next()? {
            if let Ok(bytes) = row.get_ref(0)?.as_bytes() {
                each(line, bytes);
            }
        }
    }
    Ok(())
}
