//! SQLite's answers to an export ([`ExportSource`]): the rows of a transcript, each checked
//! against its checksum ([`crate::integrity`]), read without the memory map.

use super::{ExportSource, OnDamage, Recorded};
use crate::error::{Error, Result};
use crate::integrity;
use crate::model::SessionRef;
use rusqlite::{Connection, OptionalExtension};
use std::io::Write;

/// Writes the rows of one transcript to `out` in file order; returns the bytes written.
///
/// # Errors
/// [`Error::Damaged`] at the first line that does not match its checksum (the lines before
/// it have been written to `out`); a database or write error.
pub fn write_transcript(conn: &Connection, transcript: i64, out: &mut dyn Write) -> Result<u64> {
    write_rows(conn, transcript, out, &mut |_| None, OnDamage::Fail)
}

/// [`write_transcript`] with a choice of what to do with a damaged line.
///
/// # Errors
/// As [`write_transcript`]; with [`OnDamage::Keep`], damaged lines are no error.
pub fn write_transcript_checked(
    conn: &Connection,
    transcript: i64,
    out: &mut dyn Write,
    on_damage: OnDamage<'_>,
) -> Result<u64> {
    write_rows(conn, transcript, out, &mut |_| None, on_damage)
}

/// [`write_transcript`] with a change on the way out: `map` gets each line that is a JSON
/// object and returns its replacement, or `None` to keep it (restore's cwd rewrite).
///
/// # Errors
/// As [`write_transcript`].
pub fn write_transcript_mapped(
    conn: &Connection,
    transcript: i64,
    out: &mut dyn Write,
    map: &mut dyn FnMut(&[u8]) -> Option<Vec<u8>>,
) -> Result<u64> {
    write_rows(conn, transcript, out, map, OnDamage::Fail)
}

fn write_rows(
    conn: &Connection,
    transcript: i64,
    out: &mut dyn Write,
    map: &mut dyn FnMut(&[u8]) -> Option<Vec<u8>>,
    mut on_damage: OnDamage<'_>,
) -> Result<u64> {
    let mut stmt = conn.prepare_cached(
        "SELECT line(raw, dict) AS raw, terminated, status, id, checksum FROM rows WHERE transcript_id = ?1
         ORDER BY ordinal",
    )?;
    let mut rows = stmt.query([transcript])?;
    let mut written = 0u64;
    while let Some(row) = rows.next()? {
        let raw = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
        let terminated: bool = row.get(1)?;
        let status: i64 = row.get(2)?;
        if !integrity::verify(raw, row.get(4)?) {
            let damaged = integrity::locate(conn, row.get(3)?)?;
            match &mut on_damage {
                OnDamage::Fail => return Err(Error::Damaged(Box::new(damaged))),
                OnDamage::Keep(list) => list.push(damaged),
            }
        }
        let mapped = if status == crate::jsonl::LineStatus::Record as i64 {
            map(raw)
        } else {
            None
        };
        let raw = mapped.as_deref().unwrap_or(raw);
        out.write_all(raw).map_err(|e| Error::io("<output>", e))?;
        written += raw.len() as u64;
        if terminated {
            out.write_all(b"\n").map_err(|e| Error::io("<output>", e))?;
            written += 1;
        }
    }
    Ok(written)
}

/// A read connection without its memory map for the time of an export (issue 28, item
/// 17). Export reads every page of a transcript once, in order: through the map
/// ([`crate::schema::configure_reader`]) each page read stays in the process's resident
/// memory until the map is gone, so exporting a 1 GB transcript showed 1.26 GB resident.
/// Read with `pread` into SQLite's small page cache instead, the resident memory stays at
/// a few megabytes plus the largest line. The map is given back when the export ends.
pub(super) struct Unmapped<'a> {
    conn: &'a Connection,
    was: i64,
}

impl<'a> Unmapped<'a> {
    pub(super) fn new(conn: &'a Connection) -> Result<Unmapped<'a>> {
        let was: i64 = conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))?;
        conn.pragma_update(None, "mmap_size", 0)?;
        Ok(Unmapped { conn, was })
    }
}

impl Drop for Unmapped<'_> {
    fn drop(&mut self) {
        let _ = self.conn.pragma_update(None, "mmap_size", self.was);
    }
}

/// The live main transcript of a session, if it has one.
///
/// # Errors
/// Fails on a database error.
pub fn main_transcript(conn: &Connection, session: &SessionRef) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM transcripts WHERE session_id = ?1 AND subpath = '' AND superseded_at IS NULL",
        )?
        .query_row([session.key], |r| r.get(0))
        .optional()?)
}

/// The mtime (ns since the epoch) that import recorded for the file a stored transcript or
/// session file came from (the latest import of it); `None` for what import never saw
/// (forks, appended sessions).
///
/// # Errors
/// Fails on a database error.
pub fn recorded_mtime_ns(conn: &Connection, what: Recorded) -> Result<Option<i64>> {
    let (sql, id) = match what {
        Recorded::Transcript(id) => (
            "SELECT mtime_ns FROM source_files WHERE transcript_id = ?1 ORDER BY rowid DESC LIMIT 1",
            id,
        ),
        Recorded::File(id) => (
            "SELECT mtime_ns FROM source_files WHERE session_file_id = ?1 ORDER BY rowid DESC LIMIT 1",
            id,
        ),
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// An export's reads on one SQLite connection.
pub(super) struct SqliteExport<'a>(pub &'a Connection);

impl ExportSource for SqliteExport<'_> {
    fn sessions(&mut self, project: Option<&str>) -> Result<Vec<(i64, String, String)>> {
        let mut stmt = self.0.prepare(
            "SELECT s.id, p.key, s.session_id FROM sessions s JOIN projects p ON p.id = s.project_id
             WHERE ?1 IS NULL OR p.key = ?1 ORDER BY p.key, s.session_id",
        )?;
        let sessions = stmt
            .query_map([project], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(sessions)
    }

    fn main_transcript(&mut self, session: i64) -> Result<Option<i64>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT id FROM transcripts WHERE session_id = ?1 AND subpath = ''
                   AND superseded_at IS NULL",
            )?
            .query_row([session], |r| r.get(0))
            .optional()?)
    }

    fn transcripts(&mut self, session: i64) -> Result<Vec<(i64, String)>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, subpath FROM transcripts WHERE session_id = ?1 AND superseded_at IS NULL
             ORDER BY subpath",
        )?;
        let rows = stmt
            .query_map([session], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    fn files(&mut self, session: i64) -> Result<Vec<(i64, String)>> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, relpath FROM session_files WHERE session_id = ?1 ORDER BY relpath",
        )?;
        let rows = stmt
            .query_map([session], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    fn file_content(&mut self, file: i64) -> Result<Vec<u8>> {
        Ok(self
            .0
            .prepare_cached("SELECT content FROM session_files WHERE id = ?1")?
            .query_row([file], |r| r.get(0))?)
    }

    fn recorded_mtime(&mut self, what: Recorded) -> Result<Option<i64>> {
        recorded_mtime_ns(self.0, what)
    }

    fn write_transcript(
        &mut self,
        transcript: i64,
        out: &mut dyn Write,
        on_damage: OnDamage<'_>,
    ) -> Result<u64> {
        write_transcript_checked(self.0, transcript, out, on_damage)
    }
}
