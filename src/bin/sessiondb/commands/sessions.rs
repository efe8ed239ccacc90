//! `sessiondb sessions [--project P] [--tag T] [--name TEXT] [--branch B] [--since T]
//! [--until T] [--host H] [--limit N] [--offset N] [--all] [--long] [--json]`.

use crate::cli::SessionsArgs;
use crate::human;
use crate::style;
use anyhow::Context;
use sessiondb::query::{SessionFilter, SessionInfo, SessionRow};
use sessiondb::Db;
use std::io::{IsTerminal, Write};
use std::path::Path;

pub fn run(db: &Path, args: SessionsArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    let listed = list(&store, db, args);
    super::leave_open(store);
    listed
}

fn list(store: &Db, db: &Path, args: SessionsArgs) -> anyhow::Result<()> {
    let mut filter = SessionFilter {
        project: None,
        project_contains: None,
        directory: None,
        tag: args.tag,
        name: args.name,
        branch: args.branch,
        since: args.since.as_deref().map(parse_time).transpose()?,
        until: args.until.as_deref().map(parse_time).transpose()?,
        limit: args.limit,
        offset: args.offset,
        include_hidden: args.all,
        host: args.host,
    };
    if let Some(arg) = args.project.as_deref() {
        let key = super::project_key(arg);
        let directory = super::project_directory(arg);
        // A stored folder name, or a path whose folder is stored, names one project exactly
        // (the SDK's `directory`); anything else is looked for inside folder names and cwds.
        if store.project_exists(&key)? {
            filter.project = Some(key);
            filter.directory = directory;
        } else {
            filter.project_contains = Some(arg.to_owned());
        }
    }
    if args.json {
        let mut out = JsonOut::default();
        store.for_each_session(&filter, |row| {
            out.row(row)
                .map_err(|e| sessiondb::Error::io("<output>", e))
        })?;
        return out.finish();
    }
    let sessions = store.list_sessions(&filter)?;
    if sessions.is_empty() {
        style::note(format_args!(
            "no sessions{} in {}",
            if args.project.is_some() || filter.tag.is_some() || filter.name.is_some() {
                " match"
            } else {
                ""
            },
            super::shown(db)
        ));
        return Ok(());
    }
    let ids = short_ids(store, &sessions, args.long)?;
    table(&sessions, &ids)?;
    if std::io::stdout().is_terminal() {
        style::note(format_args!(
            "{} from {}",
            human::plural(sessions.len() as u64, "session", "sessions"),
            super::shown(db)
        ));
    }
    Ok(())
}

/// `--json`: each session written out as the store yields it, through one buffer.
struct JsonOut {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    buf: Vec<u8>,
    json: crate::listing_json::SessionsJson,
}

impl Default for JsonOut {
    fn default() -> JsonOut {
        JsonOut {
            out: crate::output::stdout(),
            buf: Vec::with_capacity(BUFFER),
            json: crate::listing_json::SessionsJson::default(),
        }
    }
}

impl JsonOut {
    fn row(&mut self, s: &SessionRow<'_>) -> std::io::Result<()> {
        self.json.row(&mut self.buf, s);
        if self.buf.len() >= BUFFER {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> anyhow::Result<()> {
        self.json.finish(&mut self.buf);
        self.buf.push(b'\n');
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(())
    }
}

/// How much JSON is gathered before it is written.
const BUFFER: usize = 64 * 1024;

/// Each session's id as the table shows it: the shortest prefix no other stored session
/// shares (at least 8 characters), or the whole id with `--long`.
fn short_ids(store: &Db, sessions: &[SessionInfo], long: bool) -> anyhow::Result<Vec<String>> {
    if long {
        return Ok(sessions.iter().map(|s| s.session_id.clone()).collect());
    }
    // A few rows: two index seeks each; many: one pass over every id.
    let all = if sessions.len() > 64 {
        Some(store.all_session_ids()?)
    } else {
        None
    };
    sessions
        .iter()
        .map(|s| {
            let id = s.session_id.as_str();
            let (before, after) = match &all {
                Some(all) => {
                    let at = all.partition_point(|x| x.as_str() < id);
                    let before = at.checked_sub(1).map(|i| all[i].clone());
                    let after = all[at..].iter().find(|x| x.as_str() != id).cloned();
                    (before, after)
                }
                None => store.neighbour_ids(id)?,
            };
            let n = human::unique_prefix_len(id, before.as_deref(), after.as_deref(), 8);
            Ok(id[..n].to_owned())
        })
        .collect()
}

/// The project's short name: the last component of its cwd, else its folder name.
fn project_name(s: &SessionInfo) -> String {
    s.cwd
        .as_deref()
        .and_then(|cwd| cwd.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next())
        .filter(|name| !name.is_empty())
        .map_or_else(|| s.project.clone(), str::to_owned)
}

/// The table: age, project, id, messages, tag, title. The title is cut to the terminal's
/// width on a terminal (never wrapped), and left whole otherwise.
fn table(sessions: &[SessionInfo], ids: &[String]) -> anyhow::Result<()> {
    let tz = human::time_zone();
    let now = sessiondb::time::now_ms();
    let rows: Vec<[String; 5]> = sessions
        .iter()
        .zip(ids)
        .map(|(s, id)| {
            [
                human::age(now, s.last_modified, &tz),
                human::fit(&human::one_line(&project_name(s)), 24),
                id.clone(),
                s.message_count.to_string(),
                human::fit(&human::one_line(s.tag.as_deref().unwrap_or("-")), 16),
            ]
        })
        .collect();
    let header = ["MODIFIED", "PROJECT", "SESSION", "MSGS", "TAG"];
    let mut widths = header.map(human::width);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(human::width(cell));
        }
    }
    let line = |cells: &[String; 5]| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i == 3 {
                text.push_str(&format!("{}{cell}", " ".repeat(w - human::width(cell))));
            } else {
                text.push_str(&human::pad(cell, w));
            }
            text.push_str("  ");
        }
        text
    };
    let room = style::terminal_width();
    let mut out = crate::output::stdout();
    let head = line(&header.map(str::to_owned));
    writeln!(out, "{}", style::paint("1", &format!("{head}TITLE")))?;
    for (row, s) in rows.iter().zip(sessions) {
        let start = line(row);
        let title = human::one_line(s.title().unwrap_or("-"));
        let title = match room {
            Some(cols) => human::fit(&title, cols.saturating_sub(human::width(&start)).max(1)),
            None => title,
        };
        writeln!(out, "{start}{title}")?;
    }
    out.flush()?;
    Ok(())
}

/// `--since`/`--until`: an RFC 3339 time or date, epoch milliseconds, or an age such as
/// `3d`, `12h`, `30m`, `2w` (that long before now).
pub fn parse_time(text: &str) -> anyhow::Result<i64> {
    sessiondb::time::parse_time_filter(text)
        .with_context(|| format!("{text:?} is not a time (try 2026-01-31, 3d or 12h)"))
}
