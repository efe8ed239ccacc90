//! The checksum stored with every line (migration V10), and what a damaged line is called.
//!
//! SQLite checks the structure of its pages, not the bytes of a value: a bit flipped inside
//! a stored line passes `PRAGMA integrity_check`. Every write of a line stores
//! [`line_checksum`] of its bytes beside it, and every reader that hands the bytes out
//! (export, resume, `sessiondb check`) compares them with [`verify`]. The hash is XXH3-64:
//! it is there to catch accidental damage, not an attacker (who could rewrite both), and at
//! several GB/s it adds nothing measurable to import or resume.
//!
//! A line stored before V10 has no checksum (NULL): it is not checked until `sessiondb check
//! --repair` sums it.

use crate::error::Result;
pub use crate::model::DamagedLine;
use rusqlite::Connection;

/// The checksum of a stored line's bytes (without its `\n`), as SQLite stores it: the
/// XXH3-64 hash, its bits read as a signed integer.
pub fn line_checksum(raw: &[u8]) -> i64 {
    i64::from_ne_bytes(xxhash_rust::xxh3::xxh3_64(raw).to_ne_bytes())
}

/// Whether `raw` matches the checksum stored with it; a line without one (stored before
/// migration V10) is taken as it is.
pub fn verify(raw: &[u8], checksum: Option<i64>) -> bool {
    checksum.is_none_or(|sum| sum == line_checksum(raw))
}

/// Names the damaged row `row_id`: its session, file and line number (counted from the
/// bytes of the lines before it, as a stored run of blank lines holds several).
///
/// # Errors
/// Fails on a database error, or when the row does not exist.
pub fn locate(conn: &Connection, row_id: i64) -> Result<DamagedLine> {
    let (transcript, ordinal, project, session_id, subpath, superseded): (
        i64,
        i64,
        String,
        String,
        String,
        bool,
    ) = conn
        .prepare_cached(
            "SELECT r.transcript_id, r.ordinal, p.key, s.session_id, t.subpath,
                    t.superseded_at IS NOT NULL
             FROM rows r JOIN transcripts t ON t.id = r.transcript_id
             JOIN sessions s ON s.id = t.session_id JOIN projects p ON p.id = s.project_id
             WHERE r.id = ?1",
        )?
        .query_row([row_id], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })?;
    let (line, _) = position(conn, transcript, ordinal)?;
    let file = if subpath.is_empty() {
        format!("{project}/{session_id}.jsonl")
    } else {
        format!("{project}/{session_id}/{subpath}.jsonl")
    };
    Ok(DamagedLine {
        project,
        session_id,
        file,
        line,
        superseded,
        row_id,
    })
}

/// Where the line at `ordinal` starts in its file: its line number (from 1) and byte offset,
/// from the lengths of the lines stored before it.
///
/// # Errors
/// Fails on a database error.
pub fn position(conn: &Connection, transcript: i64, ordinal: i64) -> Result<(u64, u64)> {
    let mut stmt = conn.prepare_cached(
        "SELECT line(raw, dict) AS raw, terminated FROM rows WHERE transcript_id = ?1 AND ordinal < ?2
         ORDER BY ordinal",
    )?;
    let mut rows = stmt.query(rusqlite::params![transcript, ordinal])?;
    let (mut line, mut offset) = (1u64, 0u64);
    while let Some(row) = rows.next()? {
        let raw = row.get_ref(0)?.as_bytes().map_err(rusqlite::Error::from)?;
        let terminated: bool = row.get(1)?;
        line += raw.iter().filter(|&&b| b == b'\n').count() as u64 + u64::from(terminated);
        offset += raw.len() as u64 + u64::from(terminated);
    }
    Ok((line, offset))
}

/// Checks one row read by a reader: `Ok` when its bytes match, else the error naming it.
///
/// # Errors
/// [`crate::error::Error::Damaged`] when the bytes do not match; a database error while naming it.
pub fn check_row(conn: &Connection, row_id: i64, raw: &[u8], checksum: Option<i64>) -> Result<()> {
    if verify(raw, checksum) {
        return Ok(());
    }
    Err(crate::error::Error::Damaged(Box::new(locate(
        conn, row_id,
    )?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_byte_changes_the_checksum_and_none_is_unchecked() {
        let line = br#"{"type":"user","message":{"content":"hi"}}"#;
        let sum = line_checksum(line);
        assert!(verify(line, Some(sum)));
        let mut flipped = line.to_vec();
        flipped[20] ^= 0x01;
        assert!(!verify(&flipped, Some(sum)));
        assert!(verify(&flipped, None));
        assert_ne!(line_checksum(b""), line_checksum(b"\n"));
    }
}
