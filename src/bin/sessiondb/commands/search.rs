//! `sessiondb search QUERY [--project P] [--tag T] [--role user|assistant] [--tools]
//! [--limit N] [--offset N] [--json]`. Exits 1 when nothing matches, as grep does.

use crate::cli::SearchArgs;
use crate::human;
use crate::output::{print_json, NothingFound};
use crate::style;
use sessiondb::search::SearchQuery;
use std::io::Write;
use std::path::Path;

/// Marks the snippet text cannot contain (control characters), so that matches can be
/// found again after the text is made safe to print.
const OPEN: &str = "\u{1}";
const CLOSE: &str = "\u{2}";

pub fn run(db: &Path, args: SearchArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    // JSON keeps its `**` marks; text gets colour or nothing (never `**`, which collides
    // with Markdown in the content).
    let marks = if args.json {
        ("**".to_owned(), "**".to_owned())
    } else {
        (OPEN.to_owned(), CLOSE.to_owned())
    };
    let offset = args.offset.unwrap_or(0);
    let limit = match args.limit {
        Some(0) => i64::MAX,
        Some(n) => n.saturating_add(offset),
        None => 20 + offset,
    };
    let query = SearchQuery {
        text: args.query.join(" "),
        project: args.project.as_deref().map(super::project_key),
        tag: args.tag,
        role: args.role,
        tools: args.tools,
        limit: Some(limit),
        marks: Some(marks),
    };
    // Lines stored since the index was last brought up to date are indexed first; when that
    // write fails (a full disk, a read-only database) the search still runs without them.
    let (mut hits, stale) = store.search(&query)?;
    if let Some(e) = stale {
        style::warn(format_args!(
            "the search index could not be brought up to date ({e}); \
             recently stored lines are not searched"
        ));
    }
    hits.drain(..hits.len().min(offset as usize));
    if args.json {
        print_json(&hits)?;
    } else {
        let tz = human::time_zone();
        let mut out = crate::output::stdout();
        for h in &hits {
            let when = h
                .timestamp
                .as_deref()
                .map_or_else(|| "-".to_owned(), |t| human::local_time(t, &tz));
            writeln!(
                out,
                "{}  {}  {:<9}  {}",
                when,
                style::paint("35", &h.session_id),
                h.role,
                human::one_line(h.title.as_deref().unwrap_or("-"))
            )?;
            writeln!(out, "    {}", highlight(&h.snippet))?;
        }
        out.flush()?;
    }
    if hits.is_empty() {
        return Err(NothingFound.into());
    }
    Ok(())
}

/// A snippet made safe for one line, its matches in colour when colour is on (else plain).
fn highlight(snippet: &str) -> String {
    let snippet = snippet.trim();
    let mut out = String::new();
    for (i, part) in snippet.split(['\u{1}', '\u{2}']).enumerate() {
        let text = human::inline(part);
        // Parts alternate: outside a match, inside a match.
        if i % 2 == 1 {
            out.push_str(&style::paint("1;31", &text));
        } else {
            out.push_str(&text);
        }
    }
    out
}
