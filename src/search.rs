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
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use std::collections::HashMap;

mod mentions;
pub use mentions::{each_line, mentions, Mention};

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

/// Every match of an FTS5 query with its BM25 score (body 1.0, tool text 0.5), best first,
/// ties in line order: FTS5 ranks alone, before any join, so that a hit costs its joins and
/// its snippet only when it is shown. Ranking must still score every match (BM25 needs
/// each one's column sizes): that is the floor of a search (docs/performance.md).
const RANKED: &str = "SELECT rowid, bm25(rows_fts, 1.0, 0.5) FROM rows_fts
     WHERE rows_fts MATCH ?1 ORDER BY 2, 1";

/// One ranked line as a hit, when it passes the filters (`?1` the line's id): its session,
/// project, sub-agent, uuid, time, role, the session's title and last change.
const HIT_ROW: &str = "SELECT s.session_id, p.key, t.agent_id, r.uuid, r.timestamp, r.type,
        c.summary, c.last_modified
     FROM rows r
     JOIN transcripts t ON t.id = r.transcript_id AND t.superseded_at IS NULL
     JOIN sessions s ON s.id = t.session_id
     JOIN projects p ON p.id = s.project_id
     LEFT JOIN catalog c ON c.session_key = s.id
     WHERE r.id = ?1
       AND (?2 IS NULL OR p.key = ?2
            OR (length(?2) > 200 AND substr(p.key, 1, length(?2)) = ?2))
       AND (?3 IS NULL OR c.tag = ?3)
       AND (?4 IS NULL OR r.type = ?4)
       AND (?5 IS NULL OR c.git_branch = ?5)
       AND (?6 = 0 OR t.agent_id IS NULL)
       AND (?7 IS NULL OR s.session_id <> ?7)";

/// The transcripts the session filters keep, followed by the conditions of the filters that
/// are set ([`SessionConditions`]): lets a selective filter drop a line after reading its
/// transcript alone ([`TRANSCRIPT_OF`]), not its five joins.
const KEPT_TRANSCRIPTS: &str = "SELECT t.id
     FROM sessions s
     JOIN projects p ON p.id = s.project_id
     LEFT JOIN catalog c ON c.session_key = s.id
     JOIN transcripts t ON t.session_id = s.id AND t.superseded_at IS NULL
     WHERE 1";

/// A line's transcript (`?1` the line's id).
const TRANSCRIPT_OF: &str = "SELECT transcript_id FROM rows WHERE id = ?1";

/// A shown hit's snippet (`?4` its line id).
const SNIPPET: &str = "SELECT snippet(rows_fts, -1, ?2, ?3, '…', 24) FROM rows_fts
     WHERE rows_fts MATCH ?1 AND rowid = ?4";

/// Lines a search may find and drop before it looks up which transcripts its session
/// filters keep at all (see [`KEPT_TRANSCRIPTS`]): few enough that an unselective filter,
/// whose first lines already fill the answer, never pays for the lookup.
const DROPS_BEFORE_KEPT: usize = 64;

/// Up to this many hits asked for, the first ranking is bounded (see [`search_narrowed`]);
/// beyond, every match is sorted (`--limit 0` asks for all).
const MAX_BOUNDED: usize = 100_000;

/// What a search keeps beyond a [`SearchQuery`]'s own filters: those of the MCP `find`
/// tool. Applied while hits are ranked, so that a selective one reads only the hits it
/// keeps and the answer is never short of hits that exist. The default keeps everything.
#[derive(Debug, Clone, Default)]
pub struct Narrowing {
    /// Only sessions on this git branch (the catalog's).
    pub branch: Option<String>,
    /// Only sessions that came from this host (a team store's; a SQLite store records no
    /// host, so there nothing matches).
    pub host: Option<String>,
    /// Only records from this time on (epoch ms): the record's own timestamp, else (none,
    /// or not a date) its session's last change.
    pub since: Option<i64>,
    /// Only records up to this time (epoch ms), as `since`.
    pub until: Option<i64>,
    /// Leave out sub-agent transcripts.
    pub main_only: bool,
    /// Leave out this session id (the caller's own).
    pub without_session: Option<String>,
}

impl Narrowing {
    /// Whether a hit of this time (its record's timestamp) in a session last changed at
    /// `last_modified` passes `since` and `until`.
    pub fn keeps_time(&self, timestamp: Option<&str>, last_modified: Option<i64>) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(when) = timestamp
            .and_then(crate::time::parse_iso8601_ms)
            .or(last_modified)
        else {
            return true;
        };
        self.since.is_none_or(|s| when >= s) && self.until.is_none_or(|u| when <= u)
    }

    /// Whether it limits which sessions are searched (what [`KEPT_TRANSCRIPTS`] applies).
    fn narrows_sessions(&self, q: &SearchQuery) -> bool {
        q.project.is_some() || q.tag.is_some() || self.branch.is_some()
    }
}

/// The session filters of a search that are set, as SQL conditions (`AND …` each) on `p`
/// (projects), `c` (catalog) and, when asked, `t` (transcripts), with their values in the
/// order of their parameters. Only those set are written: SQLite cannot plan around
/// `?N IS NULL OR c.git_branch = ?N`, so with it a branch or tag reads every session
/// (3 ms on 10,000) where the catalog's index on the column reads the few it names.
struct SessionConditions<'a> {
    sql: String,
    values: Vec<&'a dyn rusqlite::ToSql>,
}

impl<'a> SessionConditions<'a> {
    /// `session_id` is the column the caller's own session is left out by.
    fn new(q: &'a SearchQuery, n: &'a Narrowing, session_id: &str, transcripts: bool) -> Self {
        let mut c = SessionConditions {
            sql: String::new(),
            values: Vec::new(),
        };
        if let Some(project) = &q.project {
            let k = c.bind(project);
            c.sql.push_str(&format!(
                " AND (p.key = ?{k} OR (length(?{k}) > 200 AND substr(p.key, 1, length(?{k})) = ?{k}))"
            ));
        }
        if let Some(tag) = &q.tag {
            let k = c.bind(tag);
            c.sql.push_str(&format!(" AND c.tag = ?{k}"));
        }
        if let Some(branch) = &n.branch {
            let k = c.bind(branch);
            c.sql.push_str(&format!(" AND c.git_branch = ?{k}"));
        }
        if transcripts && n.main_only {
            c.sql.push_str(" AND t.agent_id IS NULL");
        }
        if let Some(id) = &n.without_session {
            let k = c.bind(id);
            c.sql.push_str(&format!(" AND {session_id} <> ?{k}"));
        }
        c
    }

    /// Adds a value; its parameter's number.
    fn bind(&mut self, value: &'a dyn rusqlite::ToSql) -> usize {
        self.values.push(value);
        self.values.len()
    }
}

/// The transcripts a search's session filters keep ([`KEPT_TRANSCRIPTS`]).
fn kept_transcripts(
    conn: &Connection,
    q: &SearchQuery,
    n: &Narrowing,
) -> Result<std::collections::HashSet<i64>> {
    let c = SessionConditions::new(q, n, "s.session_id", true);
    Ok(conn
        .prepare_cached(&format!("{KEPT_TRANSCRIPTS}{}", c.sql))?
        .query_map(c.values.as_slice(), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The title of a session a search matched by its title (custom, AI-made, or the one the
/// listing shows), as a hit: `role` "title", no uuid, the title as its snippet with the
/// words marked, and ranked before every message (titles are what people remember).
pub const TITLE_ROLE: &str = "title";

/// The SQL condition "the session's titles hold every word" for `words` `LIKE` patterns
/// (see [`like_pattern`]) bound from `?first` on: case-insensitive for ASCII as SQLite's
/// `lower` is, a word anywhere in the custom title, the AI title, or the summary when it is
/// not the first prompt. Each column is tested where it is stored, which costs a quarter of
/// lower-casing and joining them for every session; a word holds no newline, so it is in
/// their newline-joined text exactly when it is in one of them.
fn title_condition(words: usize, first: usize) -> String {
    (0..words)
        .map(|i| {
            let k = first + i;
            format!(
                "(c.custom_title LIKE ?{k} ESCAPE '\\' OR c.ai_title LIKE ?{k} ESCAPE '\\'
                  OR (c.summary IS NOT c.first_prompt AND c.summary LIKE ?{k} ESCAPE '\\'))"
            )
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The query of the titles' index (`catalog_titles`, V15) that every session
/// [`titles_match`] keeps also matches: each word as a prefix (a word typed whole matches
/// more in the index than in the titles, never less). `None` when a word holds no letter or
/// digit (the index has no word for it).
fn titles_index_query(words: &[(&str, bool)]) -> Option<String> {
    let mut phrases = Vec::with_capacity(words.len());
    for (word, _) in words {
        if !word.chars().any(char::is_alphanumeric) {
            return None;
        }
        phrases.push(format!("\"{}\"*", word.replace('"', "\"\"")));
    }
    Some(phrases.join(" "))
}

/// The `LIKE` pattern (escape character `\`) that finds `word` anywhere.
fn like_pattern(word: &str) -> String {
    let mut p = String::with_capacity(word.len() + 2);
    p.push('%');
    for c in word.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
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
fn title_hits(
    conn: &Connection,
    q: &SearchQuery,
    n: &Narrowing,
    marks: (&str, &str),
) -> Result<Vec<Hit>> {
    let text = q.text.replace('\0', " ");
    let words = query_words(&text);
    if words.is_empty() || q.role.is_some() {
        return Ok(Vec::new());
    }
    // The few sessions that match are sorted: walking the catalog in its `last_modified`
    // index's order (which the `+` keeps the planner from) reads every row out of order, at
    // three times the cost of one pass over the table. Times are tested here, after the
    // statement: it may then not stop at the limit.
    let limit = if n.since.is_some() || n.until.is_some() {
        -1
    } else {
        q.limit.filter(|n| *n > 0).unwrap_or(20)
    };
    let patterns: Vec<String> = words.iter().map(|(w, _)| like_pattern(w)).collect();
    let candidates = titles_index_query(&words);
    let mut c = SessionConditions::new(q, n, "c.session_id", false);
    let first = c.values.len() + 1;
    for p in &patterns {
        c.values.push(p);
    }
    // The index (V15) narrows the catalog to the sessions whose titles hold words that
    // start as the typed ones do; the `LIKE`s and `titles_match` then decide, as they did
    // over every row. A word with no letter or digit has no word to look up: every row is
    // read then.
    let (from, indexed) = match &candidates {
        Some(m) => {
            c.values.push(m);
            (
                "catalog_titles t JOIN catalog c ON c.session_key = t.rowid",
                format!(" AND catalog_titles MATCH ?{}", c.values.len()),
            )
        }
        None => ("catalog c", String::new()),
    };
    let sql = format!(
        "SELECT c.session_id, p.key, c.last_timestamp,
            coalesce(c.custom_title, c.ai_title, c.summary) AS shown,
            lower(coalesce(c.custom_title, '') || char(10) || coalesce(c.ai_title, '')
                  || char(10) || coalesce(CASE WHEN c.summary IS NOT c.first_prompt
                                               THEN c.summary END, '')) AS titles,
            c.last_modified
         FROM {from} JOIN projects p ON p.id = c.project_id
         WHERE {}{}{indexed}
         ORDER BY +c.last_modified DESC, c.session_id LIMIT {limit}",
        title_condition(words.len(), first),
        c.sql
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let hits = stmt
        .query_map(c.values.as_slice(), |r| {
            let shown: Option<String> = r.get(3)?;
            let titles: String = r.get(4)?;
            let (session_id, project, timestamp): (String, String, Option<String>) =
                (r.get(0)?, r.get(1)?, r.get(2)?);
            let kept =
                titles_match(&titles, &words) && n.keeps_time(timestamp.as_deref(), r.get(5)?);
            Ok(kept.then(|| Hit {
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
    search_narrowed(conn, q, &Narrowing::default())
}

/// [`search`], keeping only the hits that `n` keeps.
///
/// The matches are ranked by FTS5 alone ([`RANKED`], bounded when few hits are expected to
/// be dropped); each is then looked up with the filters ([`HIT_ROW`]), best first, until the
/// limit is reached, and only the hits kept get a snippet. When a session filter has
/// dropped [`DROPS_BEFORE_KEPT`] lines, the transcripts it keeps are read once
/// ([`KEPT_TRANSCRIPTS`]), and a line of another is dropped after one lookup of its
/// transcript. The hits are those of one statement joining, filtering and ordering by BM25
/// then line id, as before; only the work is less.
///
/// # Errors
/// Fails on a database error (never on what the user typed).
pub fn search_narrowed(conn: &Connection, q: &SearchQuery, n: &Narrowing) -> Result<Vec<Hit>> {
    let Some(query) = fts_query(&q.text, q.tools) else {
        return Ok(Vec::new());
    };
    if n.host.is_some() {
        // A SQLite store records no host: no session comes from the one asked for.
        return Ok(Vec::new());
    }
    // The hits' snippets read their lines.
    crate::codec::sql::preload(conn);
    let (open, close) = q
        .marks
        .clone()
        .unwrap_or_else(|| ("**".to_owned(), "**".to_owned()));
    let limit = usize::try_from(q.limit.filter(|n| *n > 0).unwrap_or(20)).unwrap_or(usize::MAX);
    let mut hits = title_hits(conn, q, n, (&open, &close))?;
    hits.truncate(limit);
    let wanted = limit - hits.len();
    // Without a session or time filter nearly every match is kept: the first pass ranks
    // every match but keeps only the best few (SQLite's sorter then holds those alone
    // instead of sorting every match). Should they run out before the answer is full, a
    // second pass ranks without a bound and goes on after them (the order is total).
    let selective = n.narrows_sessions(q) || n.since.is_some() || n.until.is_some();
    let mut bound = (!selective && wanted <= MAX_BOUNDED).then(|| wanted * 4 + 64);
    let mut walked = 0;
    let mut row = conn.prepare_cached(HIT_ROW)?;
    let mut kept: Option<std::collections::HashSet<i64>> = None;
    let mut transcript = conn.prepare_cached(TRANSCRIPT_OF)?;
    let mut dropped = 0;
    let mut found: Vec<(i64, Hit)> = Vec::new();
    loop {
        let sql = match bound {
            Some(k) => format!("{RANKED} LIMIT {k}"),
            None => RANKED.to_owned(),
        };
        let mut ranked = conn.prepare_cached(&sql)?;
        let mut ranked = ranked.query([&query])?;
        let mut seen = 0;
        while found.len() < wanted {
            let Some(r) = ranked.next()? else { break };
            seen += 1;
            if seen <= walked {
                continue;
            }
            let (id, rank): (i64, f64) = (r.get(0)?, r.get(1)?);
            if let Some(kept) = &kept {
                let of: Option<i64> = transcript.query_row([id], |r| r.get(0)).optional()?;
                if !of.is_some_and(|t| kept.contains(&t)) {
                    continue;
                }
            }
            let hit = row
                .query_row(
                    params![
                        id,
                        q.project,
                        q.tag,
                        q.role,
                        n.branch,
                        n.main_only,
                        n.without_session
                    ],
                    |r| {
                        let last_modified: Option<i64> = r.get(7)?;
                        let hit = Hit {
                            session_id: r.get(0)?,
                            project: r.get(1)?,
                            agent_id: r.get(2)?,
                            uuid: r.get(3)?,
                            timestamp: r.get(4)?,
                            role: r.get(5)?,
                            title: r.get(6)?,
                            snippet: String::new(),
                            rank,
                        };
                        Ok(n.keeps_time(hit.timestamp.as_deref(), last_modified)
                            .then_some(hit))
                    },
                )
                .optional()?
                .flatten();
            match hit {
                Some(hit) => found.push((id, hit)),
                None => {
                    dropped += 1;
                    if kept.is_none() && dropped >= DROPS_BEFORE_KEPT && n.narrows_sessions(q) {
                        kept = Some(kept_transcripts(conn, q, n)?);
                    }
                }
            }
        }
        match bound {
            Some(k) if found.len() < wanted && seen == k => {
                walked = seen;
                bound = None;
            }
            _ => break,
        }
    }
    let mut snippet = conn.prepare_cached(SNIPPET)?;
    for (id, mut hit) in found {
        // A lone surrogate escape in a line becomes invalid UTF-8 in SQLite's text; show
        // it as U+FFFD rather than failing the search.
        hit.snippet = snippet
            .query_row(params![query, open, close, id], |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                    _ => String::new(),
                })
            })
            .optional()?
            .unwrap_or_default();
        hits.push(hit);
    }
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
            "SELECT line(raw, dict) AS raw FROM rows
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
