//! Full-text search on the team store: each searchable line's `tsvector` (written at import
//! by the same text reader that feeds FTS5) under a GIN index.
//!
//! Words are cut as FTS5's `unicode61 remove_diacritics 2` cuts them, before PostgreSQL
//! sees the text ([`words`]): runs of letters and digits, diacritics removed. PostgreSQL's
//! own parser would keep a file path or a URL as one token (`/home/me/.cargo/bin`), so that
//! `cargo` would not find it. The `simple` configuration then only lower-cases. Ranking is
//! `ts_rank` with the body weighted 1.0 and tool text 0.1 (FTS5: BM25 with 1.0 and 0.5),
//! reported negated so that lower is better as with BM25; ties are broken by line order.

use super::decode::RowExt;
use super::PgStore;
use crate::error::Result;
use crate::search::{Hit, Mention, Narrowing, SearchQuery};
use postgres::types::Type;
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::UnicodeNormalization;

/// The words of `text` as FTS5's `unicode61 remove_diacritics 2` tokenizer finds them:
/// maximal runs of letters and digits, each with its combining marks removed after
/// canonical decomposition, joined by spaces (what is given to `to_tsvector('simple', …)`).
pub(crate) fn words(text: &str) -> String {
    if text.is_ascii() {
        return ascii_words(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_word = false;
    for c in text.nfd() {
        if is_mark(c) {
            continue;
        }
        if c.is_alphanumeric() {
            out.push(c);
            in_word = true;
        } else if in_word {
            out.push(' ');
            in_word = false;
        }
    }
    out
}

/// [`words`] for ASCII text, which decomposition leaves as it is and which holds no marks:
/// the same words without the decomposition's cost (most of what an append spends on a
/// line's search text).
fn ascii_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_word = false;
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() {
            out.push(char::from(b));
            in_word = true;
        } else if in_word {
            out.push(' ');
            in_word = false;
        }
    }
    out
}

fn is_mark(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark
    )
}

/// Runs a search, best hits first (see [`crate::search::search`]).
///
/// # Errors
/// Fails on a database error (never on what the user typed).
pub fn search(store: &PgStore, q: &SearchQuery) -> Result<Vec<Hit>> {
    search_narrowed(store, q, &Narrowing::default())
}

/// [`search`], keeping only the hits that `n` keeps (see
/// [`crate::search::search_narrowed`]): the session filters are in the statement; times
/// are tested on the rows it returns, and when they drop some, the statement runs again
/// for four times as many rows, until the limit is reached or no row is left.
///
/// # Errors
/// Fails on a database error (never on what the user typed).
pub fn search_narrowed(store: &PgStore, q: &SearchQuery, n: &Narrowing) -> Result<Vec<Hit>> {
    let text = q.text.replace('\0', " ");
    let typed = crate::search::query_words(&text);
    let Some((query, terms)) = tsquery(&typed, 9) else {
        return Ok(Vec::new());
    };
    let column = if q.tools {
        "r.search"
    } else {
        "ts_filter(r.search, '{a}')"
    };
    let sql = format!(
        "WITH q AS (SELECT ({query}) AS q)
         SELECT s.session_id, p.key, t.agent_id, r.uuid, r.timestamp, r.type, c.summary,
                r.raw, ts_rank({column}, q.q) AS score, c.last_modified
         FROM q, rows r
         JOIN transcripts t ON t.id = r.transcript_id AND t.superseded_at IS NULL
         JOIN sessions s ON s.id = t.session_id
         JOIN projects p ON p.id = s.project_id
         LEFT JOIN catalog c ON c.session_key = s.id
         WHERE r.search @@ q.q AND {column} @@ q.q
           AND ($1::text IS NULL OR p.key = $1
                OR (length($1) > 200 AND starts_with(p.key, $1)))
           AND ($2::text IS NULL OR c.tag = $2)
           AND ($3::text IS NULL OR r.type = $3)
           AND ($5::text IS NULL OR c.git_branch = $5)
           AND ($6::text IS NULL OR s.origin_host = $6)
           AND (NOT $7 OR t.agent_id IS NULL)
           AND ($8::text IS NULL OR s.session_id <> $8)
         ORDER BY score DESC, r.id
         LIMIT $4"
    );
    let limit = q.limit.filter(|n| *n > 0).unwrap_or(20);
    // The words a snippet marks: a prefix word marks the words it begins.
    let shown_terms: Vec<String> = typed
        .iter()
        .map(|(w, prefix)| {
            let w = words(w);
            if *prefix {
                format!("{}*", w.trim())
            } else {
                w
            }
        })
        .collect();
    let (open, close) = q
        .marks
        .clone()
        .unwrap_or_else(|| ("**".to_owned(), "**".to_owned()));
    let timed = n.since.is_some() || n.until.is_some();
    // One statement, so no transaction around it; sent with its parameter types, so not
    // prepared first: one round trip.
    store.read_single(|c| {
        let mut hits = title_hits(c, q, n, &typed, (&open, &close))?;
        hits.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        let wanted = usize::try_from(limit).unwrap_or(usize::MAX) - hits.len();
        let mut asked = if timed {
            limit.saturating_mul(4)
        } else {
            limit
        };
        let found = loop {
            let mut params: Vec<(&(dyn postgres::types::ToSql + Sync), Type)> = vec![
                (&q.project, Type::TEXT),
                (&q.tag, Type::TEXT),
                (&q.role, Type::TEXT),
                (&asked, Type::INT8),
                (&n.branch, Type::TEXT),
                (&n.host, Type::TEXT),
                (&n.main_only, Type::BOOL),
                (&n.without_session, Type::TEXT),
            ];
            for w in &terms {
                params.push((w, Type::TEXT));
            }
            let rows = c.query_typed(&sql, &params)?;
            let complete = (rows.len() as i64) < asked;
            let mut kept: Vec<postgres::Row> = Vec::new();
            for r in rows {
                if kept.len() == wanted {
                    break;
                }
                if n.keeps_time(r.col(4)?, r.col(9)?) {
                    kept.push(r);
                }
            }
            if kept.len() == wanted || complete {
                break kept;
            }
            asked = asked.saturating_mul(4);
        };
        for r in found {
            let raw: &[u8] = r.col(7)?;
            let text = crate::jsonl::search_text(raw).map_or_else(
                || {
                    String::from_utf8_lossy(&raw[..raw.len().min(crate::search::INDEXED_PREFIX)])
                        .into_owned()
                },
                |t| {
                    let mut all = t.body.unwrap_or_default();
                    if q.tools {
                        if let Some(tools) = t.tools {
                            all.push('\n');
                            all.push_str(&tools);
                        }
                    }
                    all
                },
            );
            let snippet = snippet(&text, &shown_terms, (&open, &close));
            let score: f32 = r.col(8)?;
            hits.push(Hit {
                session_id: r.col(0)?,
                project: r.col(1)?,
                agent_id: r.col(2)?,
                uuid: r.col(3)?,
                timestamp: r.col(4)?,
                role: r.col(5)?,
                title: r.col(6)?,
                snippet,
                rank: -f64::from(score),
            });
        }
        Ok(hits)
    })
}

/// The `tsquery` of typed words (see [`crate::search::query_words`]) as SQL, its words
/// bound from `$first` on, and those words; `None` when no word has a letter or digit.
///
/// Each word is a phrase (as FTS5's quoted phrases: "foo-bar" is foo followed by bar), all
/// must match; a word typed with a trailing `*` ends in a prefix (`checkp:*`). Only the
/// number of words and which are prefixes shape the SQL text; the words are bound.
fn tsquery(typed: &[(&str, bool)], first: usize) -> Option<(String, Vec<String>)> {
    let mut terms: Vec<String> = Vec::new();
    let mut prefixes: Vec<bool> = Vec::new();
    for (word, prefix) in typed {
        let w = words(word);
        if !w.trim().is_empty() {
            terms.push(w);
            prefixes.push(*prefix);
        }
    }
    if terms.is_empty() {
        return None;
    }
    for (term, prefix) in terms.iter_mut().zip(&prefixes) {
        if *prefix {
            // Letters and digits only (see `words`): quoted as tsquery lexemes, followed.
            let parts: Vec<String> = term.split_whitespace().map(|w| format!("'{w}'")).collect();
            *term = format!("{}:*", parts.join(" <-> "));
        }
    }
    let query = (0..terms.len())
        .map(|i| {
            if prefixes[i] {
                format!("to_tsquery('simple', ${})", i + first)
            } else {
                format!("phraseto_tsquery('simple', ${})", i + first)
            }
        })
        .collect::<Vec<_>>()
        .join(" && ");
    Some((query, terms))
}

/// The lines that name a phrase, newest first (see [`crate::search::mentions`]).
///
/// # Errors
/// Fails on a database error (never on what the user typed).
pub fn mentions(
    store: &PgStore,
    text: &str,
    project: Option<&str>,
    cap: usize,
) -> Result<Vec<Mention>> {
    let text = text.replace('\0', " ");
    let typed = crate::search::query_words(&text);
    let Some((query, terms)) = tsquery(&typed, 3) else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "WITH q AS (SELECT ({query}) AS q)
         SELECT r.id, s.session_id, p.key, c.summary, t.agent_id, r.type, r.timestamp, r.uuid
         FROM q, rows r
         JOIN transcripts t ON t.id = r.transcript_id AND t.superseded_at IS NULL
         JOIN sessions s ON s.id = t.session_id
         JOIN projects p ON p.id = s.project_id
         LEFT JOIN catalog c ON c.session_key = s.id
         WHERE r.search @@ q.q
           AND ($1::text IS NULL OR p.key = $1
                OR (length($1) > 200 AND starts_with(p.key, $1)))
         ORDER BY r.id DESC
         LIMIT $2"
    );
    let cap = i64::try_from(cap).unwrap_or(i64::MAX);
    store.read_single(|c| {
        let mut params: Vec<(&(dyn postgres::types::ToSql + Sync), Type)> =
            vec![(&project, Type::TEXT), (&cap, Type::INT8)];
        for w in &terms {
            params.push((w, Type::TEXT));
        }
        c.query_typed(&sql, &params)?
            .into_iter()
            .map(|r| {
                Ok(Mention {
                    line: r.col(0)?,
                    session_id: r.col(1)?,
                    project: r.col(2)?,
                    title: r.col(3)?,
                    agent_id: r.col(4)?,
                    role: r.col(5)?,
                    timestamp: r.col(6)?,
                    uuid: r.col(7)?,
                })
            })
            .collect()
    })
}

/// Calls `each` with the stored bytes of each of these lines that exists (see
/// [`crate::search::each_line`]).
///
/// # Errors
/// Fails on a database error.
pub fn each_line(
    c: &mut impl postgres::GenericClient,
    lines: &[i64],
    each: &mut dyn FnMut(i64, &[u8]),
) -> Result<()> {
    let rows = c.query_typed(
        "SELECT id, raw FROM rows WHERE id = ANY($1)",
        &[(&lines, Type::INT8_ARRAY)],
    )?;
    for r in rows {
        each(r.col(0)?, r.col(1)?);
    }
    Ok(())
}

/// Sessions whose titles hold every word of the query, newest first, as hits (see
/// [`crate::search::TITLE_ROLE`]). None when the search is limited to a role.
fn title_hits(
    c: &mut postgres::Client,
    q: &SearchQuery,
    n: &Narrowing,
    typed: &[(&str, bool)],
    marks: (&str, &str),
) -> Result<Vec<Hit>> {
    if typed.is_empty() || q.role.is_some() {
        return Ok(Vec::new());
    }
    // Times are tested after the statement: it may then not stop at the limit.
    let limit = if n.since.is_some() || n.until.is_some() {
        i64::MAX
    } else {
        q.limit.filter(|n| *n > 0).unwrap_or(20)
    };
    let condition = (0..typed.len())
        .map(|i| format!("strpos(t.titles, lower(${})) > 0", i + 7))
        .collect::<Vec<_>>()
        .join(" AND ");
    let sql = format!(
        "SELECT session_id, key, last_timestamp, shown, titles, last_modified FROM (
            SELECT c.session_id, p.key, c.last_timestamp, c.last_modified,
                coalesce(c.custom_title, c.ai_title, c.summary) AS shown,
                lower(coalesce(c.custom_title, '') || chr(10) || coalesce(c.ai_title, '')
                      || chr(10) || coalesce(CASE WHEN c.summary IS DISTINCT FROM c.first_prompt
                                                  THEN c.summary END, '')) AS titles
            FROM catalog c JOIN projects p ON p.id = c.project_id
            JOIN sessions s ON s.id = c.session_key
            WHERE ($1::text IS NULL OR p.key = $1
                   OR (length($1) > 200 AND starts_with(p.key, $1)))
              AND ($2::text IS NULL OR c.tag = $2)
              AND ($4::text IS NULL OR c.git_branch = $4)
              AND ($5::text IS NULL OR s.origin_host = $5)
              AND ($6::text IS NULL OR c.session_id <> $6)) t
         WHERE {condition}
         ORDER BY t.last_modified DESC, t.session_id LIMIT $3"
    );
    let mut params: Vec<(&(dyn postgres::types::ToSql + Sync), Type)> = vec![
        (&q.project, Type::TEXT),
        (&q.tag, Type::TEXT),
        (&limit, Type::INT8),
        (&n.branch, Type::TEXT),
        (&n.host, Type::TEXT),
        (&n.without_session, Type::TEXT),
    ];
    let owned: Vec<String> = typed.iter().map(|(w, _)| (*w).to_owned()).collect();
    for w in &owned {
        params.push((w, Type::TEXT));
    }
    let mut hits = Vec::new();
    for r in c.query_typed(&sql, &params)? {
        if !(crate::search::titles_match(r.col(4)?, typed) && n.keeps_time(r.col(2)?, r.col(5)?)) {
            continue;
        }
        let shown: Option<String> = r.col(3)?;
        hits.push(Hit {
            session_id: r.col(0)?,
            project: r.col(1)?,
            agent_id: None,
            uuid: None,
            timestamp: r.col(2)?,
            role: crate::search::TITLE_ROLE.to_owned(),
            snippet: crate::search::mark_title(shown.as_deref().unwrap_or(""), typed, marks),
            title: shown,
            rank: f64::NEG_INFINITY,
        });
    }
    Ok(hits)
}

/// Words shown before the first match in a snippet, and in all.
const BEFORE: usize = 8;
const SHOWN: usize = 24;

/// The text around the first match, the matched words between the marks, `…` where text
/// was left out (the shape of FTS5's `snippet`).
fn snippet(text: &str, terms: &[String], (open, close): (&str, &str)) -> String {
    let wanted: std::collections::HashSet<String> = terms
        .iter()
        .flat_map(|t| t.split_whitespace())
        .map(str::to_lowercase)
        .collect();
    // Byte ranges of the words of `text`, as `words` cuts them.
    let mut runs = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let part = c.is_alphanumeric() || is_mark(c);
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, text.len()));
    }
    // A term typed with a trailing `*` marks the words it begins.
    let prefixes: Vec<String> = terms
        .iter()
        .filter_map(|t| t.strip_suffix('*'))
        .map(str::to_lowercase)
        .collect();
    let hit = |&(a, b): &(usize, usize)| {
        let word = words(&text[a..b]).trim().to_lowercase();
        wanted.contains(&word) || prefixes.iter().any(|p| word.starts_with(p.as_str()))
    };
    let first = runs.iter().position(hit).unwrap_or(0);
    let from = first.saturating_sub(BEFORE);
    let to = (from + SHOWN).min(runs.len());
    if from >= to {
        return String::new();
    }
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut at = runs[from].0;
    for run in &runs[from..to] {
        out.push_str(&text[at..run.0]);
        if hit(run) {
            out.push_str(open);
            out.push_str(&text[run.0..run.1]);
            out.push_str(close);
        } else {
            out.push_str(&text[run.0..run.1]);
        }
        at = run.1;
    }
    if to < runs.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_cut_as_unicode61_cuts_them() {
        assert_eq!(words("/home/me/.cargo/bin"), "home me cargo bin");
        assert_eq!(words("Café-au-lait naïve"), "Cafe au lait naive");
        assert_eq!(words("snake_case x2"), "snake case x2");
        assert_eq!(words("..."), "");
    }

    #[test]
    fn ascii_text_takes_a_shortcut_to_the_same_words() {
        let slow = |text: &str| {
            let mut out = String::new();
            let mut in_word = false;
            for c in text.nfd().filter(|c| !is_mark(*c)) {
                if c.is_alphanumeric() {
                    out.push(c);
                    in_word = true;
                } else if in_word {
                    out.push(' ');
                    in_word = false;
                }
            }
            out
        };
        let all: String = (0u8..128).map(char::from).collect();
        for text in [
            all.as_str(),
            "fn main() { println!(\"hi\"); } // x_y-z 42",
            "  trailing  ",
            "",
        ] {
            assert!(text.is_ascii());
            assert_eq!(words(text), slow(text), "{text:?}");
        }
    }

    #[test]
    fn snippets_mark_the_matched_words() {
        let text = "one two /home/me/.cargo/bin three";
        assert_eq!(
            snippet(text, &["cargo".into()], ("[", "]")),
            "one two /home/me/.[cargo]/bin three"
        );
        let long: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
        let s = snippet(&long.join(" "), &["w20".into()], ("[", "]"));
        assert!(
            s.starts_with('…') && s.ends_with('…') && s.contains("[w20]"),
            "{s}"
        );
    }
}
