//! `sessiondb search QUERY [--project P] [--tag T] [--role user|assistant] [--tools]
//! [--limit N] [--json]`.

use crate::cli::SearchArgs;
use crate::output::print_json;
use sessiondb::search::{self, SearchQuery};
use std::io::{IsTerminal, Write};
use std::path::Path;

pub fn run(db: &Path, args: SearchArgs) -> anyhow::Result<()> {
    let store = super::open_read(db)?;
    let terminal = !args.json && std::io::stdout().is_terminal();
    let marks = if terminal {
        ("\x1b[1;33m".to_owned(), "\x1b[0m".to_owned())
    } else {
        ("**".to_owned(), "**".to_owned())
    };
    let query = SearchQuery {
        text: args.query.join(" "),
        project: args.project.as_deref().map(super::project_key),
        tag: args.tag,
        role: args.role,
        tools: args.tools,
        limit: args.limit,
        marks: Some(marks),
    };
    // Lines stored since the index was last brought up to date are indexed first; when that
    // write fails (a full disk, a read-only database) the search still runs without them.
    if let Err(e) = search::catch_up(&store) {
        eprintln!(
            "sessiondb: warning: the search index could not be brought up to date ({e}); \
             recently stored lines are not searched"
        );
    }
    let hits = search::search(&*store.reader()?, &query)?;
    if args.json {
        return print_json(&hits);
    }
    let mut out = std::io::stdout().lock();
    for h in &hits {
        writeln!(
            out,
            "{}  {}  {:<9}  {}",
            h.timestamp.as_deref().unwrap_or("-"),
            h.session_id,
            h.role,
            h.title.as_deref().unwrap_or("-")
        )?;
        writeln!(out, "    {}", h.snippet.replace('\n', " "))?;
    }
    Ok(())
}
