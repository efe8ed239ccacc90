//! `sessiondb messages SESSION [--agent ID] [--limit N] [--offset N] [--json]`.

use crate::cli::MessagesArgs;
use crate::output::print_json;
use serde_json::Value;
use sessiondb::{query, sdk};
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: MessagesArgs) -> anyhow::Result<()> {
    let store = super::open_read(db)?;
    let conn = store.reader()?;
    let session = query::resolve_session(&conn, &args.session)?;
    let messages = match args.agent.as_deref() {
        Some(agent) => sdk::get_subagent_messages(&conn, &session, agent, args.limit, args.offset)?,
        None => sdk::get_session_messages(&conn, &session, args.limit, args.offset)?,
    };
    if args.json {
        return print_json(&messages);
    }
    let mut out = std::io::stdout().lock();
    for m in &messages {
        writeln!(out, "── {} {}", m.kind, m.uuid)?;
        writeln!(out, "{}", preview(&m.message))?;
    }
    Ok(())
}

/// The readable part of a message: its text, and one line per tool call or result.
fn preview(message: &Value) -> String {
    let content = message.get("content");
    let mut parts = Vec::new();
    match content {
        Some(Value::String(s)) => parts.push(s.clone()),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        parts.extend(b.get("text").and_then(Value::as_str).map(str::to_owned));
                    }
                    Some("tool_use") => parts.push(format!(
                        "[tool_use {}]",
                        b.get("name").and_then(Value::as_str).unwrap_or("?")
                    )),
                    Some("tool_result") => parts.push("[tool_result]".to_owned()),
                    Some("thinking") => parts.push("[thinking]".to_owned()),
                    Some(other) => parts.push(format!("[{other}]")),
                    None => {}
                }
            }
        }
        _ => {}
    }
    parts.join("\n")
}
