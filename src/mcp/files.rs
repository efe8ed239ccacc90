//! `files` (the sessions that touched a path), `resume_plan`, and the write tools.

use super::args::{clip, Args, ToolError};
use super::page::{object, Page};
use super::Context;
use crate::fork::ForkOptions;
use crate::search::SearchQuery;
use serde_json::{json, Value};

/// `files`'s largest `limit`.
const MAX_SESSIONS: i64 = 20;

/// Hits read for one `files` answer: a path named in more records than this is reported
/// from its best-ranked ones.
const MAX_HITS: i64 = 400;

/// The tools that write a file, and those that read one, as their calls name them.
const EDITS: [&str; 4] = ["Edit", "MultiEdit", "Write", "NotebookEdit"];
const READS: [&str; 1] = ["Read"];

/// Marks around the matched words, which no snippet text can contain.
const OPEN: &str = "\u{1}";
const CLOSE: &str = "\u{2}";

/// `files`: the sessions whose tool calls or results name `path`, newest first.
///
/// The path is looked up in the search index's tool column (every tool call's name and
/// input, every tool result), as one phrase: `src/lib.rs` finds `/home/me/app/src/lib.rs`.
/// Each session says how: `edit` when an Edit, MultiEdit, Write or NotebookEdit call names
/// it, `read` for a Read call, else `mention`. Claude Code's file-history snapshots back up
/// exactly the files those edit calls change, so they name no path the calls do not.
pub fn files(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("files", false).expect("listed");
    a.only(&spec.param_names())?;
    let path = a.required("path")?;
    let limit = a.limit("limit", 10, MAX_SESSIONS)? as usize;
    let offset = a.cursor()? as usize;
    let (hits, _stale) = cx.db.search(&SearchQuery {
        // A word without spaces is one phrase: the path's parts in order.
        text: path.to_owned(),
        project: a
            .text("project")?
            .map(|p| crate::paths::project_argument(p).0),
        tools: true,
        limit: Some(MAX_HITS),
        marks: Some((OPEN.to_owned(), CLOSE.to_owned())),
        ..SearchQuery::default()
    })?;
    // Sessions in order of their newest hit.
    let mut sessions: Vec<Touched> = Vec::new();
    for h in &hits {
        if h.agent_id.is_some() && h.role == "user" {
            // A sub-agent's tool results: its calls are counted already.
            continue;
        }
        let how = how(&h.snippet);
        let when = h.timestamp.clone().unwrap_or_default();
        match sessions
            .iter_mut()
            .find(|s| s.session == h.session_id && s.project == h.project)
        {
            Some(s) => {
                s.hits += 1;
                if !s.how.contains(&how) {
                    s.how.push(how);
                }
                if when > s.last {
                    s.last = when;
                }
            }
            None => sessions.push(Touched {
                session: h.session_id.clone(),
                project: h.project.clone(),
                title: h.title.clone(),
                last: when,
                how: vec![how],
                hits: 1,
            }),
        }
    }
    sessions.sort_by(|a, b| b.last.cmp(&a.last));
    let mut page = Page::new(cx.budget);
    let mut taken = 0;
    for s in sessions.iter().skip(offset).take(limit) {
        let item = object([
            ("session", json!(s.session)),
            ("project", json!(s.project)),
            ("title", json!(s.title.as_deref().map(|t| clip(t, 120)))),
            ("last", json!(s.last)),
            ("how", json!(s.how)),
            ("hits", json!(s.hits)),
        ]);
        if !page.push(item) {
            break;
        }
        taken += 1;
    }
    let more = sessions.len() > offset + taken;
    Ok(super::page::listing(
        "sessions",
        page,
        more.then(|| (offset + taken) as i64),
    ))
}

struct Touched {
    session: String,
    project: String,
    title: Option<String>,
    last: String,
    how: Vec<&'static str>,
    hits: usize,
}

/// How a record names the path, from the words before the match in its snippet (a tool
/// call is indexed as `NAME {input…}`).
fn how(snippet: &str) -> &'static str {
    let before = snippet.split(OPEN).next().unwrap_or("");
    let tool = before
        .rsplit_once(" {")
        .map(|(head, _)| head.rsplit([' ', '\n', '…']).next().unwrap_or(""));
    match tool {
        Some(t) if EDITS.contains(&t) => "edit",
        Some(t) if READS.contains(&t) => "read",
        _ => "mention",
    }
}

/// `resume_plan`: the command that resumes a session, as text; nothing is run.
pub fn resume_plan(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("resume_plan", false).expect("listed");
    a.only(&spec.param_names())?;
    let session = cx.db.resolve_session(a.required("session")?)?;
    let fork = a.flag("fork")?;
    let info = cx.db.session_info(&session, None)?;
    let recorded = cx.db.recorded_cwd(&session)?;
    let cwd = a.text("cwd")?.map(str::to_owned).or(recorded.clone());
    let q = crate::hooks::shell_quote;
    let mut launch = vec!["sessiondb".to_owned()];
    if let Some(db) = cx.db_arg {
        launch.push("--db".into());
        launch.push(q(db));
    }
    launch.push("launch".into());
    launch.push(session.session_id.clone());
    if let Some(dir) = a.text("cwd")? {
        launch.push("--cwd".into());
        launch.push(q(dir));
    }
    if fork {
        launch.push("--fork".into());
    }
    let mut claude = format!("claude --resume {}", session.session_id);
    if fork {
        claude.push_str(" --fork-session");
    }
    if let Some(dir) = &cwd {
        claude = format!("cd {} && {claude}", q(dir));
    }
    let direct = info.source_state == "present"
        && a.text("cwd")?
            .is_none_or(|c| Some(c) == recorded.as_deref());
    Ok(object([
        ("session", json!(session.session_id)),
        ("project", json!(session.project)),
        ("cwd", json!(cwd)),
        ("command", json!(launch.join(" "))),
        ("claude", json!(direct.then_some(claude))),
        (
            "note",
            json!(if direct {
                "Either command works: the transcript is still in Claude Code's folder. \
                 `sessiondb launch` restores it first when it is not."
            } else {
                "Run the sessiondb command: it restores the transcript into Claude Code's \
                 folder for that directory, then runs claude --resume."
            }),
        ),
    ]))
}

/// `tag` (with `--allow-write`).
pub fn tag(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    a.only(&["session", "tag", "clear"])?;
    let session = cx.db.resolve_session(a.required("session")?)?;
    let tag = match (a.text("tag")?, a.flag("clear")?) {
        (Some(t), false) => Some(t),
        (None, true) => None,
        _ => return Err(ToolError::invalid("send either tag or clear=true")),
    };
    cx.db.tag_session(&session, tag)?;
    let info = cx.db.session_info(&session, None)?;
    Ok(json!({ "session": session.session_id, "tag": info.tag }))
}

/// `rename` (with `--allow-write`).
pub fn rename(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    a.only(&["session", "title"])?;
    let session = cx.db.resolve_session(a.required("session")?)?;
    cx.db.rename_session(&session, a.required("title")?)?;
    let info = cx.db.session_info(&session, None)?;
    Ok(json!({ "session": session.session_id, "title": info.custom_title }))
}

/// `fork` (with `--allow-write`).
pub fn fork(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    a.only(&["session", "up_to", "title"])?;
    let session = cx.db.resolve_session(a.required("session")?)?;
    let forked = cx.db.fork(
        &session,
        &ForkOptions {
            up_to: a.text("up_to")?.map(str::to_owned),
            title: a.text("title")?.map(str::to_owned),
            session_id: None,
        },
    )?;
    Ok(json!({
        "session": forked.session_id,
        "project": forked.project,
        "source": forked.source_session_id,
        "messages": forked.messages,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_reads_the_tool_name_before_the_match() {
        let s = |t: &str| format!("…Edit {{\"file_path\":\"/a/{OPEN}src{CLOSE}/{t}");
        assert_eq!(how(&s("x")), "edit");
        assert_eq!(
            how(&format!("Read {{\"file_path\":\"{OPEN}a{CLOSE}\"}}")),
            "read"
        );
        assert_eq!(how(&format!("see {OPEN}a{CLOSE} there")), "mention");
    }
}
