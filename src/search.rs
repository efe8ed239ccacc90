//! Full-text search: FTS5 query building (user input is always quoted) and BM25-ranked
//! hits with highlighted snippets.
//!
//! The index (`rows_fts`, migrations V3 and V6) covers what users and assistants wrote
//! (`body`) and tool calls and results (`tools`). Triggers on `rows` queue new lines and
//! remove deleted ones; [`catch_up`] indexes the queue in batches (during and after import,
//! and before every search), and [`reindex`] rebuilds everything.

use crate::catalog;
use crate::error::Result;
use crate::jsonl::{Envelope, LineStatus, SearchText};
use crate::store::Store;
use rusqlite::{params, Connection};
use serde::Serialize;
use std::collections::HashMap;

/// Lines longer than this are not taken apart for the index (defined beside the parser that
/// obeys it); their first [`INDEXED_PREFIX`] bytes are indexed instead.
pub use crate::jsonl::MAX_PARSED_LINE;

/// How much of a line longer than [`MAX_PARSED_LINE`] is indexed (64 KiB). Small because
/// FTS5's `snippet()` takes time quadratic in the hits inside one line: a 1 MiB prefix with
/// a word every 33 bytes took 71 s to show.
pub const INDEXED_PREFIX: usize = 64 * 1024;

/// At most this many words of a query are used; the rest is ignored.
pub const MAX_TERMS: usize = 64;

/// A search request.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    /// What the user typed. Any text is safe: each word becomes a quoted FTS5 phrase.
    pub text: String,
    /// Only this project folder.
    pub project: Option<String>,
    /// Only sessions with this tag.
    pub tag: Option<String>,
    /// Only `user` or `assistant` records.
    pub role: Option<String>,
    /// Also search tool inputs and results.
    pub tools: bool,
    /// At most this many hits (default 20).
    pub limit: Option<i64>,
    /// Marks around matched words in snippets (default `**` and `**`).
    pub marks: Option<(String, String)>,
}

/// One matching record.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Hit {
    /// The session id.
    pub session_id: String,
    /// The project folder.
    pub project: String,
    /// The sub-agent whose transcript holds the record, if not the main one.
    pub agent_id: Option<String>,
    /// The record's uuid.
    pub uuid: Option<String>,
    /// The record's timestamp.
    pub timestamp: Option<String>,
    /// `user` or `assistant`.
    pub role: String,
    /// The session's title (the catalog's `summary`).
    pub title: Option<String>,
    /// The matching text around the match, matched words marked.
    pub snippet: String,
    /// BM25 score (lower is better).
    pub rank: f64,
}

/// A word of a query: what to find, and whether as a prefix (`checkp*`).
pub fn query_words(text: &str) -> Vec<(&str, bool)> {
    text.split_whitespace()
        .take(MAX_TERMS)
        .map(|w| match w.strip_suffix('*') {
            Some(stem) if !stem.trim_end_matches('*').is_empty() => {
                (stem.trim_end_matches('*'), true)
            }
            _ => (w, false),
        })
        .collect()
}

/// Builds the FTS5 query for user text: each whitespace-separated word becomes a quoted
/// phrase (`"` doubled inside, NUL dropped), all must match, and a word ending in `*` a
/// prefix (`"checkp"*`); without `tools` only the `body` column is searched. `None` when
/// there is nothing to search for.
pub fn fts_query(text: &str, tools: bool) -> Option<String> {
    // A NUL would end the query string inside SQLite.
    let text = text.replace('\0', " ");
    let phrases: Vec<String> = query_words(&text)
        .into_iter()
        .map(|(w, prefix)| {
            let star = if prefix { "*" } else { "" };
            format!("\"{}\"{star}", w.replace('"', "\"\""))
        })
        .collect();
    if phrases.is_empty() {
        return None;
    }
    let all = phrases.join(" ");
    Some(if tools {
        all
    } else {
        format!("{{body}} : ({all})")
    })
}

const SEARCH: &str = "SELECT s.session_id, p.key, t.agent_id, r.uuid, r.timestamp, r.type,
        c.summary, snippet(rows_fts, -1, ?5, ?6, '…', 24), bm25(rows_fts, 1.0, 0.5)
     FROM rows_fts
     JOIN rows r ON r.id = rows_fts.rowid
     JOIN transcripts t ON t.id = r.transcript_id AND t.superseded_at IS NULL
     JOIN sessions s ON s.id = t.session_id
     JOIN projects p ON p.id = s.project_id
     LEFT JOIN catalog c ON c.session_key = s.id
     WHERE rows_fts MATCH ?1
       AND (?2 IS NULL OR p.key = ?2
            OR (length(?2) > 200 AND substr(p.key, 1, length(?2)) = ?2))
       AND (?3 IS NULL OR c.tag = ?3)
       AND (?4 IS NULL OR r.type = ?4)
     ORDER BY bm25(rows_fts, 1.0, 0.5), r.id";

/// The title of a session a search matched by its title (custom, AI-made, or the one the
/// listing shows), as a hit: `role` "title", no uuid, the title as its snippet with the
/// words marked, and ranked before every message (titles are what people remember).
pub const TITLE_ROLE: &str = "title";

/// The SQL condition "the session's titles hold every word" for `words` parameters from
/// `?first` (SQLite) on: case-insensitive, a word anywhere (a prefix word too).
fn title_condition(words: usize, first: usize) -> String {
    (0..words)
        .map(|i| format!("instr(t.titles, lower(?{})) > 0", first + i))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// Whether `titles` (lower-cased) holds every word as a word: starting where a word starts
/// and, unless typed as a prefix, ending where one ends (as the index matches words).
pub fn titles_match(titles: &str, words: &[(&str, bool)]) -> bool {
    let boundary = |c: Option<char>| !matches!(c, Some(c) if c.is_alphanumeric());
    words.iter().all(|(word, prefix)| {
        let word = word.to_lowercase();
        titles.match_indices(word.as_str()).any(|(at, _)| {
            boundary(titles[..at].chars().next_back())
                && (*prefix || boundary(titles[at + word.len()..].chars().next()))
        })
    })
}

/// A title with each of `words` marked where it occurs (case-insensitively, ASCII).
pub fn mark_title(title: &str, words: &[(&str, bool)], (open, close): (&str, &str)) -> String {
    let lower = title.to_ascii_lowercase();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (word, _) in words {
        let word = word.to_ascii_lowercase();
        if word.is_empty() {
            continue;
        }
        let mut from = 0;
        while let Some(at) = lower[from..].find(&word) {
            let start = from + at;
            spans.push((start, start + word.len()));
            from = start + word.len();
        }
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(title.len() + 8);
    let mut done = 0;
    for (start, end) in spans {
        if start < done || !title.is_char_boundary(start) || !title.is_char_boundary(end) {
            continue;
        }
        out.push_str(&title[done..start]);
        out.push_str(open);
        out.push_str(&title[start..end]);
        out.push_str(close);
        done = end;
    }
    out.push_str(&title[done..]);
    out
}

/// Sessions whose titles hold every word of the query, newest first, as hits (see
/// [`TITLE_ROLE`]). None when the search is limited to a role.
fn title_hits(conn: &Connection, q: &SearchQuery, marks: (&str, &str)) -> Result<Vec<Hit>> {
    let text = q.text.replace('\0', " ");
    let words = query_words(&text);
    if words.is_empty() || q.role.is_some() {
        return Ok(Vec::new());
    }
    let limit = q.limit.filter(|n| *n > 0).unwrap_or(20);
    let sql = format!(
        "SELECT * FROM (
            SELECT c.session_id, p.key, c.last_timestamp,
                coalesce(c.custom_title, c.ai_title, c.summary) AS shown,
                lower(coalesce(c.custom_title, '') || char(10) || coalesce(c.ai_title, '')
                      || char(10) || coalesce(CASE WHEN c.summary IS NOT c.first_prompt
                                                   THEN c.summary END, '')) AS titles,
                c.last_modified
            FROM catalog c JOIN projects p ON p.id = c.project_id
            WHERE (?1 IS NULL OR p.key = ?1
                   OR (length(?1) > 200 AND substr(p.key, 1, length(?1)) = ?1))
              AND (?2 IS NULL OR c.tag = ?2)) t
         WHERE {}
         ORDER BY t.last_modified DESC, t.session_id LIMIT {limit}",
        title_condition(words.len(), 3)
    );
    let mut params: Vec<&dyn rusqlite::ToSql> = vec![&q.project, &q.tag];
    for (word, _) in &words {
        params.push(word);
    }
    let mut stmt = conn.prepare(&sql)?;
    let hits = stmt
        .query_map(params.as_slice(), |r| {
            let shown: Option<String> = r.get(3)?;
            let titles: String = r.get(4)?;
            let (session_id, project, timestamp) = (r.get(0)?, r.get(1)?, r.get(2)?);
            Ok(titles_match(&titles, &words).then(|| Hit {
                session_id,
                project,
                agent_id: None,
                uuid: None,
                timestamp,
                role: TITLE_ROLE.to_owned(),
                snippet: mark_title(shown.as_deref().unwrap_or(""), &words, marks),
                title: shown,
                rank: f64::NEG_INFINITY,
            }))
        })?
        .filter_map(|h| h.transpose())
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(hits)
}

/// Runs a search, best hits first: sessions whose titles match (see [`TITLE_ROLE`]), then
/// the matching messages by BM25. Lines still queued for the index are not seen: call
/// [`catch_up`] first (the CLI and the server do).
///
/// # Errors
/// Fails on a database error (never on what the user typed).
pub fn search(conn: &Connection, q: &SearchQuery) -> Result<Vec<Hit>> {
    let Some(query) = fts_query(&q.text, q.tools) else {
        return Ok(Vec::new());
    };
    let (open, close) = q
        .marks
        .clone()
        .unwrap_or_else(|| ("**".to_owned(), "**".to_owned()));
    let limit = q.limit.filter(|n| *n > 0).unwrap_or(20);
    let mut hits = title_hits(conn, q, (&open, &close))?;
    // The limit is written into the statement: a bound LIMIT makes SQLite compile the
    // statement again with its value the first time it runs.
    let messages: Vec<Hit> = conn
        .prepare_cached(&format!("{SEARCH} LIMIT {limit}"))?
        .query_map(params![query, q.project, q.tag, q.role, open, close], |r| {
            Ok(Hit {
                session_id: r.get(0)?,
                project: r.get(1)?,
                agent_id: r.get(2)?,
                uuid: r.get(3)?,
                timestamp: r.get(4)?,
                role: r.get(5)?,
                title: r.get(6)?,
                // A lone surrogate escape in a line becomes invalid UTF-8 in SQLite's
                // text; show it as U+FFFD rather than failing the search.
                snippet: match r.get_ref(7)? {
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                    _ => String::new(),
                },
                rank: r.get(8)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    hits.extend(messages);
    hits.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok(hits)
}

/// Whether the `rows` triggers (migration V6) queue a line for the full-text index: a
/// user or assistant record that is not a meta message.
pub fn is_indexed(status: LineStatus, env: &Envelope<'_>) -> bool {
    status == LineStatus::Record
        && !env.is_meta
        && matches!(env.kind.as_deref(), Some("user" | "assistant"))
}

/// Searchable text computed ahead, by row id: import computes it on its loading thread,
/// while the lines are in memory, instead of reading them back when it indexes.
pub type PendingTexts = HashMap<i64, SearchText>;

/// Indexes the lines queued by the `rows` triggers since the last call. Runs inside the
/// caller's write transaction.
///
/// [`index_pending_with`] without texts computed ahead.
///
/// # Errors
/// Fails on a database error.
pub fn index_pending(conn: &Connection) -> Result<usize> {
    index_pending_with(conn, &mut PendingTexts::new())
}

/// Indexes the queued lines, taking each one's text from `texts` where it is there (and
/// removing it) and computing it from the stored line otherwise.
///
/// A line's text is computed by [`crate::jsonl::search_text`] (identical to the
/// `search_source` view's, several times cheaper than the view's JSON functions) and
/// inserted by a single-row statement: unlike `INSERT ... SELECT`, it opens no statement
/// savepoint, at which FTS5 would flush its pending terms. The few lines whose text only the
/// view can tell are indexed from it afterwards, in one statement (`CROSS JOIN` keeps their
/// ids as the outer loop: the planner would otherwise scan `rows`).
///
/// # Errors
/// Fails on a database error.
pub fn index_pending_with(conn: &Connection, texts: &mut PendingTexts) -> Result<usize> {
    let mut indexed = 0;
    let mut left = Vec::new();
    {
        let queued: Vec<i64> = conn
            .prepare_cached("SELECT row_id FROM search_pending ORDER BY row_id")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut stored = conn.prepare_cached(
            "SELECT raw FROM rows
             WHERE id = ?1 AND type IN ('user', 'assistant') AND status = 0 AND is_meta = 0",
        )?;
        let mut insert =
            conn.prepare_cached("INSERT INTO rows_fts (rowid, body, tools) VALUES (?1, ?2, ?3)")?;
        for id in queued {
            let text = match texts.remove(&id) {
                Some(text) => Some(text),
                None => {
                    let mut rows = stored.query([id])?;
                    let Some(row) = rows.next()? else {
                        continue;
                    };
                    row.get_ref(0)?
                        .as_bytes()
                        .ok()
                        .and_then(crate::jsonl::search_text)
                }
            };
            match text {
                Some(text) => {
                    insert.execute(params![id, text.body, text.tools])?;
                    indexed += 1;
                }
                None => left.push(id),
            }
        }
    }
    if !left.is_empty() {
        let ids = serde_json::to_string(&left).expect("integers serialize");
        indexed += conn
            .prepare_cached(
                "INSERT INTO rows_fts (rowid, body, tools)
                 SELECT s.id, s.body, s.tools FROM json_each(?1) j
                 CROSS JOIN search_source s ON s.id = j.value",
            )?
            .execute([ids])?;
    }
    conn.prepare_cached("DELETE FROM search_pending")?
        .execute([])?;
    Ok(indexed)
}

/// Indexes the lines still queued for the full-text index, in one transaction. Import
/// calls it every [`CATCH_UP_BYTES`] and at its end (one FTS segment per batch instead of
/// one per file); appends and forks leave their lines queued, which keeps them fast; every
/// search calls it first, so queued lines (and those an interrupted import left) are
/// found. Costs one read when the queue is empty.
///
/// # Errors
/// Fails on a database error.
pub fn catch_up(store: &Store) -> Result<usize> {
    catch_up_with(store, &mut PendingTexts::new())
}

/// [`catch_up`] with texts computed ahead (see [`index_pending_with`]).
///
/// # Errors
/// Fails on a database error.
pub fn catch_up_with(store: &Store, texts: &mut PendingTexts) -> Result<usize> {
    let pending: bool =
        store
            .reader()?
            .query_row("SELECT EXISTS (SELECT 1 FROM search_pending)", [], |r| {
                r.get(0)
            })?;
    if !pending {
        texts.clear();
        return Ok(0);
    }
    let indexed = store.write(|tx| index_pending_with(tx, texts))?;
    // Texts of lines that were not queued (none are expected) must not linger.
    texts.clear();
    Ok(indexed)
}

/// How many imported bytes may wait for the full-text index before import indexes them.
pub const CATCH_UP_BYTES: u64 = 256 * 1024 * 1024;

/// What [`reindex`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReindexReport {
    /// Records in the rebuilt index.
    pub indexed: i64,
    /// Catalog rows recomputed.
    pub sessions: i64,
}

/// Rebuilds the full-text index from the stored lines and recomputes every catalog row, in
/// one transaction.
///
/// # Errors
/// Fails on a database error.
pub fn reindex(store: &Store) -> Result<ReindexReport> {
    store.write(|tx| {
        // FTS5's own 'rebuild' cannot read a content view that uses json_each ("no such
        // table: main.json_each"), so the index is emptied and refilled from the view.
        tx.execute("INSERT INTO rows_fts (rows_fts) VALUES ('delete-all')", [])?;
        tx.execute("DELETE FROM search_pending", [])?;
        tx.execute(
            "INSERT INTO rows_fts (rowid, body, tools) SELECT id, body, tools FROM search_source",
            [],
        )?;
        let keys: Vec<i64> = tx
            .prepare_cached("SELECT id FROM sessions ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for key in &keys {
            catalog::refresh_session(tx, *key)?;
        }
        crate::usage::sqlite::rebuild(tx)?;
        let indexed: i64 = tx.query_row("SELECT count(*) FROM search_source", [], |r| r.get(0))?;
        Ok(ReindexReport {
            indexed,
            sessions: keys.len() as i64,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_is_quoted() {
        let cases: &[(&str, bool, Option<&str>)] = &[
            ("hello world", true, Some(r#""hello" "world""#)),
            ("say \"hi\"", true, Some(r#""say" """hi""""#)),
            ("NEAR( a", false, Some(r#"{body} : ("NEAR(" "a")"#)),
            ("   ", true, None),
            ("", false, None),
            ("* - :", true, Some(r#""*" "-" ":""#)),
            ("checkp*", true, Some(r#""checkp"*"#)),
            ("a\"b** c", false, Some(r#"{body} : ("a""b"* "c")"#)),
        ];
        for (text, tools, want) in cases {
            assert_eq!(fts_query(text, *tools).as_deref(), *want, "{text}");
        }
        let long = "word ".repeat(5000);
        let q = fts_query(&long, true).expect("query");
        assert_eq!(q.matches("\"word\"").count(), MAX_TERMS);
    }
}
