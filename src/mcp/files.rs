//! `files` (the sessions that touched a path), `resume_plan`, and the write tools.

use super::args::{clip, Args, ToolError};
use super::page::{object, Page};
use super::Context;
use crate::fork::ForkOptions;
use serde_json::{json, Value};
use std::collections::HashMap;

/// `files`'s largest `limit`.
const MAX_SESSIONS: i64 = 20;

/// Lines read for one `files` answer: a path named in more lines than this is reported from
/// the newest ones stored.
const MAX_LINES: usize = 5000;

/// The tools that write a file, and those that read one, as their calls name them.
const EDITS: [&str; 4] = ["Edit", "MultiEdit", "Write", "NotebookEdit"];
const READS: [&str; 1] = ["Read"];

/// `files`: the sessions whose tool calls or results name `path`, newest first.
///
/// The path is looked up in the search index (every message, tool call and tool result),
/// as one phrase: `src/lib.rs` finds `/home/me/app/src/lib.rs`. The lines are walked
/// unranked, newest stored first ([`crate::search::mentions`]); only the assistant lines of
/// the sessions shown are read again, to say how each names it: `edit` when an Edit,
/// MultiEdit, Write or NotebookEdit call names it, `read` for a Read call, and `mention`
/// for any other line. Claude Code's file-history snapshots back up exactly the files those
/// edit calls change, so they name no path the calls do not.
pub fn files(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("files", false).expect("listed");
    a.only(&spec.param_names())?;
    let path = a.required("path")?;
    let limit = a.limit("limit", 10, MAX_SESSIONS)? as usize;
    let offset = a.cursor()? as usize;
    let project = a
        .text("project")?
        .map(|p| crate::paths::project_argument(p).0);
    // A word without spaces is one phrase: the path's parts in order.
    let lines = cx.db.mentions(path, project.as_deref(), MAX_LINES)?;
    // Sessions in order of their newest line.
    let mut sessions: Vec<Touched> = Vec::new();
    let mut at: HashMap<(&str, &str), usize> = HashMap::new();
    for m in &lines {
        if m.agent_id.is_some() && m.role == "user" {
            // A sub-agent's tool results: its calls are counted already.
            continue;
        }
        let when = m.timestamp.clone().unwrap_or_default();
        let i = *at
            .entry((m.project.as_str(), m.session_id.as_str()))
            .or_insert_with(|| {
                sessions.push(Touched {
                    session: m.session_id.clone(),
                    project: m.project.clone(),
                    title: m.title.clone(),
                    last: String::new(),
                    calls: Vec::new(),
                    mentioned: false,
                    hits: 0,
                });
                sessions.len() - 1
            });
        let s = &mut sessions[i];
        s.hits += 1;
        if when > s.last {
            s.last = when;
        }
        if m.role == "assistant" {
            s.calls.push(m.line);
        } else {
            s.mentioned = true;
        }
    }
    sessions.sort_by(|a, b| b.last.cmp(&a.last));
    let shown: Vec<&Touched> = sessions.iter().skip(offset).take(limit).collect();
    // Which kinds each session shown has (edit, read, mention): its assistant lines are
    // read until it has all three.
    let mut kinds: Vec<[bool; 3]> = shown.iter().map(|s| [false, false, s.mentioned]).collect();
    let mut owner: HashMap<i64, usize> = HashMap::new();
    for (i, s) in shown.iter().enumerate() {
        owner.extend(s.calls.iter().map(|line| (*line, i)));
    }
    let calls: Vec<i64> = shown.iter().flat_map(|s| s.calls.iter().copied()).collect();
    let words = words(path);
    cx.db.each_line(&calls, &mut |line, raw| {
        if let Some(found) = owner.get(&line).map(|i| &mut kinds[*i]) {
            if !found.iter().all(|k| *k) {
                found[kind(raw, &words) as usize] = true;
            }
        }
    })?;
    let mut page = Page::new(cx.budget);
    let mut taken = 0;
    for (s, found) in shown.iter().zip(&kinds) {
        let how: Vec<&str> = [Kind::Edit, Kind::Read, Kind::Mention]
            .into_iter()
            .filter(|k| found[*k as usize])
            .map(Kind::name)
            .collect();
        let item = object([
            ("session", json!(s.session)),
            ("project", json!(s.project)),
            ("title", json!(s.title.as_deref().map(|t| clip(t, 120)))),
            ("last", json!(s.last)),
            ("how", json!(how)),
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
    /// Its assistant lines that name the path (tool calls, or text).
    calls: Vec<i64>,
    /// Whether a user line (a tool result, a prompt) names it.
    mentioned: bool,
    hits: usize,
}

/// How a line names a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Edit = 0,
    Read = 1,
    Mention = 2,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Edit => "edit",
            Kind::Read => "read",
            Kind::Mention => "mention",
        }
    }
}

/// The words of `text` as the search index cuts them (runs of letters and digits,
/// lower-cased; diacritics are not removed, which paths seldom have).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The fields of a stored assistant line that say which file its tool calls work on; the
/// rest is skipped unread.
#[derive(serde::Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(serde::Deserialize)]
struct Message<'a> {
    /// Left as text until it is known to be an array of blocks.
    #[serde(borrow)]
    content: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: Option<String>,
    name: Option<String>,
    input: Option<Input>,
}

/// Where Edit, MultiEdit, Write and Read (`file_path`) and NotebookEdit (`notebook_path`)
/// name their file.
#[derive(serde::Deserialize)]
struct Input {
    file_path: Option<serde_json::Value>,
    notebook_path: Option<serde_json::Value>,
}

/// How an assistant line names the path whose words are `path`: `Edit` when an edit call's
/// file is it (its words hold the path's in order), else `Read` for a Read call's, else
/// `Mention` (another tool names it, or the text does).
fn kind(raw: &[u8], path: &[String]) -> Kind {
    let Ok(Line {
        message: Some(Message {
            content: Some(content),
        }),
    }) = serde_json::from_slice::<Line<'_>>(raw)
    else {
        return Kind::Mention;
    };
    let Ok(blocks) = serde_json::from_str::<Vec<Block>>(content.get()) else {
        return Kind::Mention;
    };
    let mut found = Kind::Mention;
    for b in blocks {
        let (Some("tool_use"), Some(name), Some(input)) = (b.kind.as_deref(), b.name, b.input)
        else {
            continue;
        };
        let file = input.file_path.or(input.notebook_path);
        let Some(file) = file.as_ref().and_then(serde_json::Value::as_str) else {
            continue;
        };
        let file = words(file);
        if path.is_empty() || !file.windows(path.len()).any(|w| w == path) {
            continue;
        }
        if EDITS.contains(&name.as_str()) {
            return Kind::Edit;
        }
        if READS.contains(&name.as_str()) {
            found = Kind::Read;
        }
    }
    found
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

    fn line(blocks: &str) -> Vec<u8> {
        format!(r#"{{"type":"assistant","uuid":"u","message":{{"role":"assistant","content":[{blocks}]}}}}"#)
            .into_bytes()
    }

    #[test]
    fn kind_reads_the_file_of_each_call() {
        let path = words("src/lib.rs");
        let edit = r#"{"type":"tool_use","id":"1","name":"Edit","input":{"file_path":"/a/src/lib.rs","old_string":"x"}}"#;
        let read =
            r#"{"type":"tool_use","id":"2","name":"Read","input":{"file_path":"/a/SRC/lib.rs"}}"#;
        let grep = r#"{"type":"tool_use","id":"3","name":"Grep","input":{"path":"src/lib.rs"}}"#;
        assert_eq!(kind(&line(edit), &path), Kind::Edit);
        assert_eq!(kind(&line(read), &path), Kind::Read);
        assert_eq!(kind(&line(grep), &path), Kind::Mention);
        assert_eq!(kind(&line(&format!("{read},{edit}")), &path), Kind::Edit);
        assert_eq!(kind(&line(&format!("{grep},{read}")), &path), Kind::Read);
        let notebook = r#"{"type":"tool_use","id":"4","name":"NotebookEdit","input":{"notebook_path":"/src/lib.rs"}}"#;
        assert_eq!(kind(&line(notebook), &path), Kind::Edit);
        // Another file, a name that only begins like the path, text, a line that is not JSON.
        let other = r#"{"type":"tool_use","id":"5","name":"Write","input":{"file_path":"/a/src/lib.rsx","content":"src/lib.rs"}}"#;
        assert_eq!(kind(&line(other), &path), Kind::Mention);
        assert_eq!(
            kind(&line(r#"{"type":"text","text":"see src/lib.rs"}"#), &path),
            Kind::Mention
        );
        assert_eq!(
            kind(b"{\"message\":{\"content\":\"src/lib.rs\"}}", &path),
            Kind::Mention
        );
        assert_eq!(kind(b"not json", &path), Kind::Mention);
    }
}
