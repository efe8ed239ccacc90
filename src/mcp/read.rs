//! `read` (a window of one conversation, paged by bytes) and `session_overview`.

use super::args::{clip, Args, ToolError};
use super::page::{cut, object, time, Page, DEFAULT_BUDGET, MAX_BUDGET};
use super::Context;
use crate::model::SessionRef;
use crate::sdk::SessionMessage;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;

/// `read`'s largest `limit`.
const MAX_MESSAGES: i64 = 100;

/// A message as text: its text blocks, and with `tools` its tool calls (`[tool_use NAME]
/// {input}`) and results (`[tool_result]`, `[tool_result error]`). Thinking, images and
/// documents are left out.
pub fn render(message: &Value, tools: bool) -> String {
    let mut out = String::new();
    let mut add = |part: &str| {
        if part.is_empty() {
            return;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(part);
    };
    match message.get("content") {
        Some(Value::String(s)) => add(s),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => add(b.get("text").and_then(Value::as_str).unwrap_or("")),
                    Some("tool_use") if tools => {
                        let name = b.get("name").and_then(Value::as_str).unwrap_or("?");
                        let input = b.get("input").map(Value::to_string).unwrap_or_default();
                        add(&format!("[tool_use {name}] {input}"));
                    }
                    Some("tool_result") if tools => {
                        let error = b.get("is_error").and_then(Value::as_bool) == Some(true);
                        let label = if error {
                            "[tool_result error]"
                        } else {
                            "[tool_result]"
                        };
                        add(&format!("{label} {}", result_text(b.get("content"))));
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    out
}

fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Where a page starts: a message index and a byte offset in its text.
fn parse_cursor(a: &Args<'_>) -> Result<Option<(usize, usize)>, ToolError> {
    let Some(text) = a.text("cursor")? else {
        return Ok(None);
    };
    let bad = || ToolError::invalid("cursor must be the `next` value of the previous answer");
    let (m, c) = text.split_once('.').unwrap_or((text, "0"));
    Ok(Some((
        m.parse().map_err(|_| bad())?,
        c.parse().map_err(|_| bad())?,
    )))
}

/// `read`.
pub fn read(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("read", false).expect("listed");
    a.only(&spec.param_names())?;
    let session = cx.db.resolve_session(a.required("session")?)?;
    let limit = a.limit("limit", 20, MAX_MESSAGES)? as usize;
    let tools = a.flag("tools")?;
    let budget = match a.int("max_bytes")? {
        None => DEFAULT_BUDGET,
        Some(n) if n < 1000 => {
            return Err(ToolError::invalid(format!(
                "max_bytes must be at least 1000 (at most {MAX_BUDGET})"
            )))
        }
        Some(n) => (n as usize).min(MAX_BUDGET),
    }
    .min(cx.budget.max(DEFAULT_BUDGET));
    let messages = match a.text("agent")? {
        Some(agent) => cx.db.subagent_messages(&session, agent, None, 0)?,
        None => cx.db.session_messages(&session, None, 0)?,
    };
    let total = messages.len();
    let (start, mut skip) = match (parse_cursor(a)?, a.text("around")?, a.int("offset")?) {
        (Some(at), _, _) => at,
        (None, Some(uuid), _) => {
            let Some(at) = messages.iter().position(|m| m.uuid == uuid) else {
                return off_chain(cx, &session, a.text("agent")?, uuid, tools, total, budget);
            };
            // The message itself first: context before it could fill the page alone. Its
            // `i` says where to read back from.
            (at, 0)
        }
        (None, None, Some(off)) if off < 0 => {
            (total.saturating_sub(off.unsigned_abs() as usize), 0)
        }
        (None, None, Some(off)) => (off as usize, 0),
        (None, None, None) => (0, 0),
    };
    let end = start.saturating_add(limit).min(total);
    let mut page = Page::new(budget);
    let mut next = None;
    for (i, m) in messages.iter().enumerate().take(end).skip(start) {
        let text = render(&m.message, tools);
        let rest = text.get(skip..).unwrap_or("");
        let from = std::mem::take(&mut skip);
        if rest.is_empty() {
            continue;
        }
        let item = |t: &str, left: Option<usize>| {
            object([
                ("i", json!(i)),
                ("uuid", json!(m.uuid)),
                ("role", json!(m.kind)),
                ("from_byte", json!((from > 0).then_some(from))),
                ("text", json!(t)),
                ("more_bytes", json!(left)),
            ])
        };
        if page.push(item(rest, None)) {
            continue;
        }
        if page.is_empty() {
            // One message larger than the page: as much as fits, and where to go on.
            let room = page.room().saturating_sub(300);
            let (head, left) = cut(rest, room / 2);
            page.push(item(head, left));
            next = Some(format!("{i}.{}", from + head.len()));
        } else {
            next = Some(i.to_string());
        }
        break;
    }
    if next.is_none() && end < total {
        next = Some(end.to_string());
    }
    let mut answer = json!({
        "session": session.session_id,
        "project": session.project,
        "total": total,
        "messages": page.into_items(),
    });
    if let Some(next) = next {
        answer["next"] = json!(next);
    }
    Ok(answer)
}

/// A record that search found but the conversation (the chain resume follows) does not
/// hold: an abandoned branch, or what came before a compaction. It is shown alone, from
/// its stored line.
fn off_chain(
    cx: &Context<'_>,
    session: &SessionRef,
    agent: Option<&str>,
    uuid: &str,
    tools: bool,
    total: usize,
    budget: usize,
) -> Result<Value, ToolError> {
    let not_found = || {
        ToolError::new(
            "not_found",
            format!(
                "no message {:?} in this session; use a uuid from find, or read by offset",
                clip(uuid, 40)
            ),
        )
    };
    let lines = cx
        .db
        .transcript_lines(session, agent)?
        .ok_or_else(not_found)?;
    let needle = format!("\"{uuid}\"");
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let record = lines
        .iter()
        .filter(|l| finder.find(&l.raw).is_some())
        .filter_map(|l| serde_json::from_slice::<Value>(&l.raw).ok())
        .find(|v| v.get("uuid").and_then(Value::as_str) == Some(uuid))
        .ok_or_else(not_found)?;
    let text = render(record.get("message").unwrap_or(&Value::Null), tools);
    let (head, left) = cut(&text, budget.saturating_sub(1000));
    Ok(json!({
        "session": session.session_id,
        "project": session.project,
        "total": total,
        "messages": [object([
            ("uuid", json!(uuid)),
            ("role", json!(record.get("type"))),
            ("text", json!(head)),
            ("more_bytes", json!(left)),
        ])],
        "note": "this message is not on the conversation's current chain (an earlier branch, \
                 or before a compaction); read by offset for the conversation",
    }))
}

/// How many last messages `session_overview` shows at most.
const MAX_LAST: i64 = 10;

/// `session_overview`.
pub fn overview(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("session_overview", false).expect("listed");
    a.only(&spec.param_names())?;
    let session = cx.db.resolve_session(a.required("session")?)?;
    let last = a.limit("last", 3, MAX_LAST)?;
    let info = cx.db.session_info(&session, None)?;
    // The SDK's slice takes a negative offset only with a limit ([-3:0] is empty): the
    // whole conversation is read, and its end kept.
    let all = cx.db.session_messages(&session, None, 0)?;
    let tail = &all[all.len().saturating_sub(last as usize)..];
    let per_message = 1500;
    let last_messages: Vec<Value> = tail.iter().map(|m| short(m, per_message)).collect();
    let agents = cx.db.list_subagents(&session)?;
    let origin = cx.db.fork_origin(&session)?;
    let tally = tally(cx, &session)?;
    let mut out = object([
        ("session", json!(info.session_id)),
        ("project", json!(info.project)),
        (
            "title",
            json!(info.summary.as_deref().map(|t| clip(t, 200))),
        ),
        (
            "custom_title",
            json!(info.custom_title.as_deref().map(|t| clip(t, 200))),
        ),
        ("tag", json!(info.tag)),
        ("branch", json!(info.git_branch)),
        ("cwd", json!(info.cwd)),
        ("created", json!(info.created_at.map(time))),
        ("modified", time(info.last_modified)),
        ("messages", json!(info.message_count)),
        (
            "first_prompt",
            json!(info.first_prompt.as_deref().map(|t| clip(t, 200))),
        ),
        ("last_messages", Value::Array(last_messages)),
        ("subagents", json!(agents.len())),
        (
            "subagent_ids",
            json!(agents.iter().take(20).collect::<Vec<_>>()),
        ),
        (
            "forked_from",
            json!(origin.map(|o| object([
                ("session", json!(o.session_id)),
                ("project", json!(o.project)),
                ("up_to", json!(o.leaf_uuid)),
            ]))),
        ),
        ("compactions", json!(tally.compactions)),
        ("tokens", tally.tokens()),
        ("state", json!(info.source_state)),
    ]);
    // A hostile transcript cannot push the answer over the cap: the last messages go
    // first.
    while super::page::size_of(&out) > cx.budget.max(DEFAULT_BUDGET) {
        match out.get_mut("last_messages").and_then(Value::as_array_mut) {
            Some(list) if !list.is_empty() => {
                list.remove(0);
            }
            _ => break,
        }
    }
    Ok(out)
}

/// A message in a few hundred bytes (its tool calls included).
fn short(m: &SessionMessage, max: usize) -> Value {
    let text = render(&m.message, true);
    let (head, left) = cut(&text, max);
    object([
        ("uuid", json!(m.uuid)),
        ("role", json!(m.kind)),
        ("text", json!(head)),
        ("more_bytes", json!(left)),
    ])
}

/// What `session_overview` counts over a transcript's lines.
#[derive(Default)]
struct Tally {
    compactions: u64,
    /// Each API message's usage, by message id (every content block of a message is its
    /// own record, all with the same usage; the last one counts).
    usage: HashMap<String, Usage>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    subtype: Option<String>,
    message: Option<LineMessage>,
}

#[derive(Deserialize)]
struct LineMessage {
    id: Option<String>,
    usage: Option<Usage>,
}

impl Tally {
    fn tokens(&self) -> Value {
        let mut sum = Usage::default();
        for u in self.usage.values() {
            sum.input_tokens += u.input_tokens;
            sum.output_tokens += u.output_tokens;
            sum.cache_read_input_tokens += u.cache_read_input_tokens;
            sum.cache_creation_input_tokens += u.cache_creation_input_tokens;
        }
        json!({
            "input": sum.input_tokens,
            "output": sum.output_tokens,
            "cache_read": sum.cache_read_input_tokens,
            "cache_creation": sum.cache_creation_input_tokens,
        })
    }
}

/// Compaction boundaries and token usage of the main transcript. Only lines that can hold
/// them are parsed.
fn tally(cx: &Context<'_>, session: &SessionRef) -> Result<Tally, ToolError> {
    let mut tally = Tally::default();
    let Some(lines) = cx.db.transcript_lines(session, None)? else {
        return Ok(tally);
    };
    let boundary = memchr::memmem::Finder::new(b"compact_boundary");
    let usage = memchr::memmem::Finder::new(b"\"usage\"");
    for line in &lines {
        let raw = line.raw.as_slice();
        if boundary.find(raw).is_none() && usage.find(raw).is_none() {
            continue;
        }
        let Ok(parsed) = serde_json::from_slice::<Line>(raw) else {
            continue;
        };
        if parsed.kind.as_deref() == Some("system")
            && parsed.subtype.as_deref() == Some("compact_boundary")
        {
            tally.compactions += 1;
        }
        if parsed.kind.as_deref() == Some("assistant") {
            if let Some(LineMessage {
                id: Some(id),
                usage: Some(u),
            }) = parsed.message
            {
                tally.usage.insert(id, u);
            }
        }
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_shows_text_and_tools_on_request() {
        let m = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "thinking", "thinking": "secret"},
            {"type": "tool_use", "name": "Read", "input": {"file_path": "/a"}},
            {"type": "tool_result", "is_error": true, "content": [{"type": "text", "text": "boom"}]},
        ]});
        assert_eq!(render(&m, false), "hello");
        assert_eq!(
            render(&m, true),
            "hello\n[tool_use Read] {\"file_path\":\"/a\"}\n[tool_result error] boom"
        );
        assert_eq!(render(&json!({"content": "plain"}), false), "plain");
    }
}
