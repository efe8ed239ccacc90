//! Reads that are not resume or search: finding sessions and listing them.

use crate::error::{Error, Result};
use crate::model::SessionRef;
use rusqlite::{params, Connection};
use serde::Serialize;

const SESSION_COLUMNS: &str =
    "SELECT s.id, p.key, s.session_id FROM sessions s JOIN projects p ON p.id = s.project_id";

fn session_ref(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRef> {
    Ok(SessionRef {
        key: row.get(0)?,
        project: row.get(1)?,
        session_id: row.get(2)?,
    })
}

/// Finds the session a user means: a full session id, a unique prefix of one, or
/// `PROJECT/SESSION` to pick among projects.
///
/// # Errors
/// [`Error::SessionNotFound`] or [`Error::AmbiguousSession`] when the argument does not
/// name exactly one session.
pub fn resolve_session(conn: &Connection, arg: &str) -> Result<SessionRef> {
    let arg = arg.trim();
    if arg.is_empty() {
        return Err(Error::SessionNotFound(arg.to_owned()));
    }
    let (project, id) = match arg.rsplit_once('/') {
        Some((p, s)) if !p.is_empty() => (Some(p), s),
        _ => (None, arg),
    };
    let exact: Vec<SessionRef> = conn
        .prepare_cached(&format!(
            "{SESSION_COLUMNS} WHERE s.session_id = ?1 AND (?2 IS NULL OR p.key = ?2) ORDER BY p.key"
        ))?
        .query_map(params![id, project], session_ref)?
        .collect::<rusqlite::Result<_>>()?;
    let matches = if exact.is_empty() {
        conn.prepare_cached(&format!(
            "{SESSION_COLUMNS} WHERE substr(s.session_id, 1, length(?1)) = ?1
             AND (?2 IS NULL OR p.key = ?2) ORDER BY p.key, s.session_id LIMIT 6"
        ))?
        .query_map(params![id, project], session_ref)?
        .collect::<rusqlite::Result<_>>()?
    } else {
        exact
    };
    match matches.len() {
        0 => Err(Error::SessionNotFound(arg.to_owned())),
        1 => Ok(matches.into_iter().next().expect("one match")),
        _ => Err(Error::AmbiguousSession {
            query: arg.to_owned(),
            candidates: matches
                .iter()
                .take(5)
                .map(|s| format!("{}/{}", s.project, s.session_id))
                .collect(),
        }),
    }
}

/// One line of the session listing.
#[derive(Debug, Clone, Serialize)]
pub struct SessionListing {
    /// The project folder name.
    pub project: String,
    /// The session id.
    pub session_id: String,
    /// The earliest record timestamp of the main transcript.
    pub first_timestamp: Option<String>,
    /// The latest record timestamp of the main transcript.
    pub last_timestamp: Option<String>,
    /// Lines stored for the session (main transcript and sidechains).
    pub rows: i64,
}

/// Lists sessions, newest first, optionally of one project.
///
/// # Errors
/// Fails on a database error.
pub fn list_sessions(conn: &Connection, project: Option<&str>) -> Result<Vec<SessionListing>> {
    let mut stmt = conn.prepare_cached(
        "SELECT p.key, s.session_id,
                (SELECT min(r.timestamp) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                  WHERE t.session_id = s.id AND t.superseded_at IS NULL AND t.subpath = ''),
                (SELECT max(r.timestamp) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                  WHERE t.session_id = s.id AND t.superseded_at IS NULL AND t.subpath = ''),
                (SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                  WHERE t.session_id = s.id AND t.superseded_at IS NULL)
         FROM sessions s JOIN projects p ON p.id = s.project_id
         WHERE ?1 IS NULL OR p.key = ?1",
    )?;
    let mut out: Vec<SessionListing> = stmt
        .query_map([project], |r| {
            Ok(SessionListing {
                project: r.get(0)?,
                session_id: r.get(1)?,
                first_timestamp: r.get(2)?,
                last_timestamp: r.get(3)?,
                rows: r.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    out.sort_by(|a, b| {
        b.last_timestamp
            .cmp(&a.last_timestamp)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    Ok(out)
}
