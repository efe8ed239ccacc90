//! `sessiondb info SESSION [--json]`.

use crate::cli::InfoArgs;
use crate::output::print_json;
use sessiondb::time::format_ms;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: InfoArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    let shown = show(&store, db, args);
    super::leave_open(store);
    shown
}

fn show(store: &sessiondb::Db, db: &Path, args: InfoArgs) -> anyhow::Result<()> {
    let session = store.resolve_session(&args.session)?;
    let info = store.session_info(&session, None)?;
    if args.json {
        return print_json(&info);
    }
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
    let time = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), format_ms);
    let mut out = crate::output::stdout();
    let mut lines = vec![
        ("session", info.session_id.clone()),
        ("project", info.project.clone()),
        ("title", opt(&info.title().map(str::to_owned))),
        ("custom title", opt(&info.custom_title)),
        ("AI title", opt(&info.ai_title)),
        ("first prompt", opt(&info.first_prompt)),
        ("tag", opt(&info.tag)),
        ("git branch", opt(&info.git_branch)),
        ("cwd", opt(&info.cwd)),
        ("created", time(info.created_at)),
        ("modified", time(Some(info.last_modified))),
        ("size", crate::human::size(info.file_size.max(0) as u64)),
        ("messages", info.message_count.to_string()),
        ("sub-agents", info.subagent_count.to_string()),
        ("source file", info.source_state.clone()),
        ("listed", if info.listed { "yes" } else { "no" }.to_owned()),
        ("database", super::shown(db)),
    ];
    if let Some(host) = &info.origin_host {
        let user = info.origin_user.as_deref().unwrap_or("-");
        lines.insert(lines.len() - 1, ("origin", format!("{user}@{host}")));
    }
    // Every place the session was imported from or restored to: one session, however many
    // folders hold it.
    let at = lines.len() - 1;
    for (i, place) in store.locations(&session)?.into_iter().enumerate() {
        let mut shown = place.path;
        if let Some(host) = place.host {
            shown = format!("{host}:{shown}");
        }
        if place.vanished {
            shown.push_str(" (deleted)");
        }
        lines.insert(at + i, ("location", shown));
    }
    for (k, v) in lines {
        writeln!(out, "{k:<13} {}", crate::human::one_line(&v))?;
    }
    out.flush()?;
    Ok(())
}
