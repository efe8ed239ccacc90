//! `sessiondb messages SESSION [--agent ID] [--limit N] [--offset N] [--full] [--no-pager]
//! [--json]`.

use crate::cli::MessagesArgs;
use crate::human;
use crate::output::OUT_BUFFER;
use crate::style::{self, Pager};
use serde_json::Value;
use sessiondb::jsonl::pretty::Pretty;
use sessiondb::sdk;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: MessagesArgs) -> anyhow::Result<()> {
    let store = super::open_db_read(db)?;
    let session = store.resolve_session(&args.session)?;
    let limit = args.limit.filter(|n| *n > 0);
    let messages = match args.agent.as_deref() {
        Some(agent) => store.stored_subagent_messages(&session, agent, limit, args.offset)?,
        None => store.stored_session_messages(&session, limit, args.offset)?,
    };
    if args.json {
        return print_messages_json(&messages);
    }
    let messages: Vec<sdk::SessionMessage> = messages
        .into_iter()
        .map(sdk::StoredMessage::parse)
        .collect();
    let times = store.record_timestamps(&session)?;
    drop(store);
    let view = View {
        full: args.full,
        width: style::terminal_width(),
        tz: human::time_zone(),
    };
    let mut tools = HashMap::new();
    let mut out = Pager::start(!args.no_pager);
    for m in &messages {
        let when = times
            .get(&m.uuid)
            .map_or_else(|| "-".to_owned(), |t| human::local_time(t, &view.tz));
        let role = match m.kind.as_str() {
            "user" => style::paint("36", "user"),
            "assistant" => style::paint("32", "assistant"),
            other => human::one_line(other),
        };
        writeln!(out, "{} {role}", style::paint("2", &format!("── {when}")))?;
        for line in view.message(&m.message, &mut tools) {
            writeln!(out, "{line}")?;
        }
    }
    out.finish()?;
    Ok(())
}

/// How messages are shown: cut to one line per tool call and result (to the terminal's
/// width on a terminal), or everything with `--full`.
struct View {
    full: bool,
    width: Option<usize>,
    tz: jiff::tz::TimeZone,
}

/// Input fields that say what a tool call is about, best first: the file, the command, the
/// pattern, the address, the question.
const MAIN_ARGUMENTS: &[&str] = &[
    "file_path",
    "notebook_path",
    "path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "skill",
    "subject",
];

impl View {
    /// The lines of one message. `tools` remembers tool names by call id, so that a result
    /// can say which tool it answers.
    fn message(&self, message: &Value, tools: &mut HashMap<String, String>) -> Vec<String> {
        let mut lines = Vec::new();
        match message.get("content") {
            Some(Value::String(text)) => lines.push(human::safe_text(text)),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    self.block(block, tools, &mut lines);
                }
            }
            _ => {}
        }
        lines
    }

    fn block(&self, b: &Value, tools: &mut HashMap<String, String>, lines: &mut Vec<String>) {
        let str_of = |key: &str| b.get(key).and_then(Value::as_str).unwrap_or("");
        match str_of("type") {
            "text" => lines.push(human::safe_text(str_of("text"))),
            "thinking" if self.full => {
                lines.push(style::paint("2", "[thinking]"));
                lines.push(style::paint("2", &human::safe_text(str_of("thinking"))));
            }
            "thinking" => lines.push(style::paint(
                "2",
                &format!(
                    "[thinking, {}]",
                    human::plural(human::words(str_of("thinking")) as u64, "word", "words")
                ),
            )),
            "redacted_thinking" => lines.push(style::paint("2", "[thinking, redacted]")),
            "tool_use" => {
                let name = human::one_line(str_of("name"));
                tools.insert(str_of("id").to_owned(), name.clone());
                let input = b.get("input").unwrap_or(&Value::Null);
                if self.full {
                    lines.push(format!("→ {}", style::paint("1;33", &name)));
                    let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
                    lines.push(human::safe_text(&pretty));
                } else {
                    let head = format!("→ {name}  ");
                    let arg = self.cut(&main_argument(input), human::width(&head));
                    lines.push(format!("→ {}  {arg}", style::paint("1;33", &name)));
                }
            }
            "tool_result" => {
                let name = tools
                    .get(str_of("tool_use_id"))
                    .cloned()
                    .unwrap_or_else(|| "tool".to_owned());
                let text = result_text(b.get("content"));
                let error = b.get("is_error").and_then(Value::as_bool) == Some(true);
                let what = if error { "error" } else { "result" };
                let size = human::size(text.len() as u64);
                if self.full {
                    lines.push(format!("← {name} {what} ({size})"));
                    lines.push(human::safe_text(&text));
                } else {
                    let line_count = text.lines().count();
                    let tail = if line_count > 1 {
                        format!(
                            " ({size}, {})",
                            human::plural(line_count as u64, "line", "lines")
                        )
                    } else {
                        format!(" ({size})")
                    };
                    let head = format!("← {name} {what}: ");
                    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                    let room = human::width(&head) + human::width(&tail);
                    let first = self.cut(first, room);
                    lines.push(format!("{head}{first}{}", style::paint("2", &tail)));
                }
            }
            "image" => lines.push("[image]".to_owned()),
            "" => {}
            other => lines.push(format!("[{}]", human::one_line(other))),
        }
    }

    /// One line of `text`, cut so that it fits after `used` columns on a terminal.
    fn cut(&self, text: &str, used: usize) -> String {
        let mut first = text.lines().next().unwrap_or("").trim_end().to_owned();
        if text.trim_end().lines().nth(1).is_some() {
            first.push_str(" …");
        }
        let first = human::one_line(&first);
        match self.width {
            Some(cols) => human::fit(&first, cols.saturating_sub(used).max(8)),
            None => first,
        }
    }
}

/// The input field that says what a tool call does (see [`MAIN_ARGUMENTS`]), else its
/// first text field.
pub(crate) fn main_argument(input: &Value) -> String {
    let Some(fields) = input.as_object() else {
        return String::new();
    };
    MAIN_ARGUMENTS
        .iter()
        .find_map(|k| fields.get(*k).and_then(Value::as_str))
        .or_else(|| fields.values().find_map(Value::as_str))
        .unwrap_or("")
        .to_owned()
}

/// A tool result's text: the string, or its text blocks joined.
pub(crate) fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b.get("text").and_then(Value::as_str).map(str::to_owned),
                Some("image") => Some("[image]".to_owned()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `messages --json`: the bytes `print_json` writes for `[SessionMessage]`, through
/// [`Pretty`] (serde_json's escaping was a sixth of the command), each `message` from its
/// stored text where it can be (building the values was a third).
fn print_messages_json(messages: &[sdk::StoredMessage]) -> anyhow::Result<()> {
    let mut buf = Vec::with_capacity(OUT_BUFFER);
    let mut out = std::io::stdout().lock();
    messages_json(&mut buf, &mut out, messages)?;
    out.write_all(&buf)?;
    out.flush()?;
    Ok(())
}

/// The pretty JSON of `messages` and a newline, into `buf` and, once it holds
/// [`OUT_BUFFER`] bytes, on to `sink` (the caller writes what is left in `buf`). The
/// field names are `SessionMessage`'s serde names; the bytes are serde_json's for the
/// parsed messages (tests compare them).
fn messages_json(
    buf: &mut Vec<u8>,
    sink: &mut impl Write,
    messages: &[sdk::StoredMessage],
) -> std::io::Result<()> {
    if messages.is_empty() {
        buf.extend_from_slice(b"[]\n");
        return Ok(());
    }
    let mut p = Pretty::new(buf);
    let opt = |p: &mut Pretty<'_>, v: Option<&str>| match v {
        Some(s) => p.string(s),
        None => p.value(&Value::Null),
    };
    p.open(b'[');
    for (i, m) in messages.iter().enumerate() {
        p.item(i == 0);
        p.open(b'{');
        p.key(true, "type");
        p.string(&m.kind);
        p.key(false, "uuid");
        p.string(&m.uuid);
        p.key(false, "session_id");
        p.value(&m.session_id);
        p.key(false, "message");
        m.message.write_pretty(&mut p);
        p.key(false, "parent_tool_use_id");
        opt(&mut p, m.parent_tool_use_id.as_deref());
        p.key(false, "parent_agent_id");
        opt(&mut p, m.parent_agent_id.as_deref());
        p.close(b'}');
        p.drain_to(sink, OUT_BUFFER)?;
    }
    p.close(b']');
    buf.push(b'\n');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_json_is_the_bytes_serde_json_writes() {
        // As stored text (the float makes message 1's text go through a parse), and as a
        // value (message 3).
        let message = |n: u8, tool: Option<&str>, agent: Option<&str>| sdk::StoredMessage {
            kind: if n.is_multiple_of(2) {
                "user"
            } else {
                "assistant"
            }
            .to_owned(),
            uuid: format!("u{n}\"\\"),
            session_id: if n == 1 { json!("") } else { json!("s-1") },
            message: {
                let value = json!({"role": "user", "content": [
                    {"type": "text", "text": "line\none\ttab \u{1} \"q\" é"},
                    {"type": "text", "text": "long \"x\"\n".repeat(usize::from(n) * 4_000)},
                    {"type": "tool_result", "content": [], "is_error": false,
                     "n": if n == 1 { json!(1.5) } else { json!(-7) }}]});
                if n == 3 {
                    sdk::MessageJson::Value(value)
                } else {
                    sdk::MessageJson::Text(value.to_string().into())
                }
            },
            parent_tool_use_id: tool.map(str::to_owned),
            parent_agent_id: agent.map(str::to_owned),
        };
        let all = [
            message(0, None, None),
            message(1, Some("toolu_1"), None),
            message(2, Some("toolu_2"), Some("agent\n")),
            message(3, None, None),
        ];
        for k in 0..=all.len() {
            // Two or more messages pass OUT_BUFFER: some bytes go to the sink early.
            let (mut sink, mut tail) = (Vec::new(), Vec::new());
            messages_json(&mut tail, &mut sink, &all[..k]).expect("to a Vec");
            let mut ours = sink;
            ours.extend_from_slice(&tail);
            let parsed: Vec<sdk::SessionMessage> = all[..k]
                .iter()
                .cloned()
                .map(sdk::StoredMessage::parse)
                .collect();
            let mut want = serde_json::to_vec_pretty(&parsed).expect("serializable");
            want.push(b'\n');
            assert_eq!(
                String::from_utf8(ours),
                String::from_utf8(want),
                "{k} messages"
            );
        }
    }

    fn plain() -> View {
        View {
            full: false,
            width: None,
            tz: jiff::tz::TimeZone::UTC,
        }
    }

    #[test]
    fn tool_calls_results_and_thinking_are_one_line_each() {
        let mut tools = HashMap::new();
        let call = json!({"content": [
            {"type": "thinking", "thinking": "Let me look at the test first."},
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash",
             "input": {"description": "run", "command": "cargo test\n--lib"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Read",
             "input": {"file_path": "/src/lib.rs", "limit": 20}},
        ]});
        assert_eq!(
            plain().message(&call, &mut tools),
            [
                "[thinking, 7 words]",
                "Running the tests.",
                "→ Bash  cargo test …",
                "→ Read  /src/lib.rs",
            ]
        );
        let result = json!({"content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": "\ntest result: ok. 3 passed\nsecond line\n"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
             "content": [{"type": "text", "text": "no such file"}]},
        ]});
        assert_eq!(
            plain().message(&result, &mut tools),
            [
                "← Bash result: test result: ok. 3 passed (39 B, 3 lines)",
                "← Read error: no such file (12 B)",
            ]
        );
    }

    #[test]
    fn full_shows_everything_and_escapes_nothing_through() {
        let mut tools = HashMap::new();
        let view = View {
            full: true,
            ..plain()
        };
        let call = json!({"content": [
            {"type": "thinking", "thinking": "deep\nthought"},
            {"type": "tool_use", "id": "t", "name": "Grep", "input": {"pattern": "a\u{1b}[2Jb"}},
        ]});
        let lines = view.message(&call, &mut tools);
        assert_eq!(lines[0], "[thinking]");
        assert_eq!(lines[1], "deep\nthought");
        assert_eq!(lines[2], "→ Grep");
        assert!(lines[3].contains("\"pattern\""), "{}", lines[3]);
        assert!(
            !lines.concat().contains('\u{1b}'),
            "no raw escape reaches the terminal"
        );
    }

    #[test]
    fn cut_fits_the_terminal() {
        let view = View {
            width: Some(20),
            ..plain()
        };
        let cut = view.cut("a very long command line that goes on", 8);
        assert_eq!(human::width(&cut), 12);
        assert!(cut.ends_with('…'));
    }
}
