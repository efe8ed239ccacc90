//! `sessiondb search QUERY [--project P] [--tag T] [--role user|assistant] [--tools]
//! [--limit N] [--offset N] [--json]`. Exits 1 when nothing matches, as grep does.

use crate::cli::SearchArgs;
use crate::human;
use crate::output::{print_json, NothingFound};
use crate::style;
use sessiondb::search::SearchQuery;
use std::io::{IsTerminal, Write};
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
        print_grouped(&store, &hits)?;
    }
    if hits.is_empty() {
        if !args.json && (std::io::stdout().is_terminal() || std::io::stderr().is_terminal()) {
            eprintln!(
                "no matches for {}",
                human::one_line(&query.text).escape_debug()
            );
        }
        return Err(NothingFound.into());
    }
    Ok(())
}

/// The hits grouped by session, in the order of each session's best hit: a line naming
/// the session (short id, project, title), then its hits, each a time, what matched (a
/// title, a user or assistant message) and the text around the match. The title is the
/// one `sessions` shows ([`sessiondb::query::SessionInfo::title`]), not the hit's `title`
/// field, which is the catalog's summary (the last prompt of an untitled session) and stays
/// so in `--json`.
fn print_grouped(store: &sessiondb::Db, hits: &[sessiondb::search::Hit]) -> anyhow::Result<()> {
    let tz = human::time_zone();
    let mut out = crate::output::stdout();
    let mut order: Vec<(&str, &str)> = Vec::new();
    for h in hits {
        let key = (h.project.as_str(), h.session_id.as_str());
        if !order.contains(&key) {
            order.push(key);
        }
    }
    for (project, session) in order {
        let group: Vec<_> = hits
            .iter()
            .filter(|h| h.project == project && h.session_id == session)
            .collect();
        let info = store
            .find_exact_session(project, session)
            .and_then(|s| store.session_info(&s, None))
            .ok();
        let title = info
            .as_ref()
            .and_then(|i| i.title())
            .or_else(|| group.iter().find_map(|h| h.title.as_deref()))
            .unwrap_or("-");
        writeln!(
            out,
            "{}  {}  {}",
            style::paint("35", session.get(..8).unwrap_or(session)),
            human::one_line(project),
            human::one_line(title)
        )?;
        for h in group {
            let when = h
                .timestamp
                .as_deref()
                .map_or_else(|| "-".to_owned(), |t| human::local_time(t, &tz));
            writeln!(out, "  {when}  {:<9}  {}", h.role, highlight(&h.snippet))?;
        }
    }
    out.flush()?;
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
