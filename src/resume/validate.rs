//! A checker for the Messages API's structural rules on a `messages` array
//! (as produced by [`super::api::api_view`]).
//!
//! Rules checked:
//! * every message is an object with role `user` or `assistant` and string or
//!   array content, or role `system` with text content (B10: reminders sent to newer
//!   models as separate system messages; they are skipped by the rules below);
//! * every `tool_use` of an assistant message is answered by a `tool_result`
//!   in the very next message, which must be a user message; every
//!   `tool_result` answers a `tool_use` of the immediately preceding
//!   assistant message; tool_use ids are unique;
//! * in a user message, `tool_result` blocks come before any other block;
//! * no empty content: empty string, empty array, text block with empty or
//!   whitespace-only text (the API rejects "text content blocks must contain
//!   non-whitespace text").
//!
//! Not checked: that the first message is a user message and that roles alternate. The
//! API merges consecutive messages of one role, and CLI 2.1.332 sends both shapes for old
//! transcripts (a chain whose root is an assistant record, `happycli__resumed-session`;
//! two assistant turns with no stored prompt between them, `entirecli__63590d292e96_0_full`
//! of the real-transcript pack).
//!
//! An empty array has no violations: a resume always appends its new turn.

use std::collections::HashSet;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// Which rule a message breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// Not an object with a valid role and string/array content.
    Malformed,
    /// A tool_use with no tool_result in the next message.
    UnansweredToolUse,
    /// A tool_result with no tool_use in the previous assistant message.
    OrphanToolResult,
    /// The same tool_use id twice.
    DuplicateToolUseId,
    /// A tool_result block after a non-tool_result block.
    ToolResultNotFirst,
    /// Empty content or an empty / whitespace-only text block.
    EmptyContent,
}

/// One rule violation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Index of the offending message in the array.
    pub index: usize,
    /// The rule.
    pub kind: ViolationKind,
    /// Human-readable reason (ids, block index).
    pub reason: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "message {}: {:?}: {}",
            self.index, self.kind, self.reason
        )
    }
}

fn role(m: &Value) -> Option<&str> {
    m.get("role")
        .and_then(Value::as_str)
        .filter(|r| matches!(*r, "user" | "assistant" | "system"))
}

fn blocks(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn btype(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

fn ids<'a>(m: &'a Value, ty: &str, key: &str) -> Vec<&'a str> {
    blocks(m)
        .iter()
        .filter(|b| btype(b) == Some(ty))
        .filter_map(|b| b.get(key).and_then(Value::as_str))
        .collect()
}

/// Check `messages` against the provider's rules; an empty result means valid.
pub fn validate(messages: &[Value]) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut push = |index: usize, kind: ViolationKind, reason: String| {
        v.push(Violation {
            index,
            kind,
            reason,
        })
    };
    let mut seen_uses: HashSet<&str> = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(r) = role(m) else {
            push(
                i,
                ViolationKind::Malformed,
                "missing or invalid role".into(),
            );
            continue;
        };
        if r == "system" {
            // The CLI sends an empty array when a turn's reminders all render to nothing
            // (`oracle-made/model_mix__opus`); the API ignores such a message.
            let text_only = match m.get("content") {
                Some(Value::String(_)) => true,
                Some(Value::Array(a)) => a.iter().all(|b| btype(b) == Some("text")),
                _ => false,
            };
            if !text_only {
                push(
                    i,
                    ViolationKind::Malformed,
                    "system message content is not text".into(),
                );
            }
            continue;
        }
        match m.get("content") {
            Some(Value::String(s)) => {
                if s.trim().is_empty() {
                    push(
                        i,
                        ViolationKind::EmptyContent,
                        "empty string content".into(),
                    );
                }
            }
            Some(Value::Array(a)) => {
                if a.is_empty() {
                    push(i, ViolationKind::EmptyContent, "empty content array".into());
                }
                let mut other_seen = false;
                for (j, b) in a.iter().enumerate() {
                    let t = btype(b);
                    if t == Some("text") {
                        let txt = b.get("text").and_then(Value::as_str).unwrap_or("");
                        if txt.trim().is_empty() {
                            push(
                                i,
                                ViolationKind::EmptyContent,
                                format!("block {j}: empty or whitespace-only text {txt:?}"),
                            );
                        }
                    }
                    if r == "user" {
                        if t == Some("tool_result") {
                            if other_seen {
                                push(
                                    i,
                                    ViolationKind::ToolResultNotFirst,
                                    format!("block {j}: tool_result after other content"),
                                );
                            }
                        } else {
                            other_seen = true;
                        }
                    }
                }
            }
            _ => {
                push(
                    i,
                    ViolationKind::Malformed,
                    "content is neither string nor array".into(),
                );
                continue;
            }
        }
        // The neighbours that pairing looks at: system messages are not between them.
        let prev = messages[..i]
            .iter()
            .rev()
            .find(|p| role(p) != Some("system"));
        if r == "assistant" {
            let uses = ids(m, "tool_use", "id");
            let next = messages[i + 1..].iter().find(|n| role(n) != Some("system"));
            let answered: HashSet<&str> = match next {
                Some(n) if role(n) == Some("user") => {
                    ids(n, "tool_result", "tool_use_id").into_iter().collect()
                }
                _ => HashSet::new(),
            };
            for u in uses {
                if !seen_uses.insert(u) {
                    push(
                        i,
                        ViolationKind::DuplicateToolUseId,
                        format!("tool_use {u}"),
                    );
                }
                if !answered.contains(u) {
                    push(
                        i,
                        ViolationKind::UnansweredToolUse,
                        format!("tool_use {u} not answered in the next message"),
                    );
                }
            }
        } else {
            let offered: HashSet<&str> = match prev {
                Some(p) if role(p) == Some("assistant") => {
                    ids(p, "tool_use", "id").into_iter().collect()
                }
                _ => HashSet::new(),
            };
            for t in ids(m, "tool_result", "tool_use_id") {
                if !offered.contains(t) {
                    push(
                        i,
                        ViolationKind::OrphanToolResult,
                        format!("tool_result {t} has no tool_use in the previous message"),
                    );
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(msgs: Value) -> Vec<(usize, ViolationKind)> {
        let a = msgs.as_array().cloned().unwrap_or_default();
        validate(&a)
            .into_iter()
            .map(|v| (v.index, v.kind))
            .collect()
    }

    #[test]
    fn validator_table() {
        use ViolationKind::*;
        let tu = |id: &str| json!({"type":"tool_use","id":id,"name":"X","input":{}});
        let tr = |id: &str| json!({"tool_use_id":id,"type":"tool_result","content":"ok"});
        let t = |s: &str| json!({"type":"text","text":s});
        type Row<'a> = (&'a str, Value, Vec<(usize, ViolationKind)>);
        let table: Vec<Row> = vec![
            ("empty", json!([]), vec![]),
            (
                "valid",
                json!([{"role":"user","content":"hi"},{"role":"assistant","content":[tu("a")]},{"role":"user","content":[tr("a"), t("x")]},{"role":"assistant","content":[t("ok")]}]),
                vec![],
            ),
            (
                "first assistant, same role twice: the API merges them",
                json!([{"role":"assistant","content":"x"},{"role":"user","content":"a"},{"role":"user","content":"b"}]),
                vec![],
            ),
            (
                "system messages between a tool_use and its result are skipped",
                json!([{"role":"user","content":"a"},{"role":"assistant","content":[tu("a")]},{"role":"system","content":"r"},{"role":"user","content":[tr("a")]}]),
                vec![],
            ),
            (
                "system message with a non-text block",
                json!([{"role":"system","content":[tu("a")]}]),
                vec![(0, Malformed)],
            ),
            (
                "unanswered",
                json!([{"role":"user","content":"a"},{"role":"assistant","content":[tu("a")]},{"role":"user","content":"b"}]),
                vec![(1, UnansweredToolUse)],
            ),
            (
                "orphan",
                json!([{"role":"user","content":[tr("z")]}]),
                vec![(0, OrphanToolResult)],
            ),
            (
                "not first",
                json!([{"role":"user","content":"a"},{"role":"assistant","content":[tu("a")]},{"role":"user","content":[t("x"), tr("a")]}]),
                vec![(2, ToolResultNotFirst)],
            ),
            (
                "empty string",
                json!([{"role":"user","content":""}]),
                vec![(0, EmptyContent)],
            ),
            (
                "empty array",
                json!([{"role":"user","content":[]}]),
                vec![(0, EmptyContent)],
            ),
            (
                "empty text",
                json!([{"role":"user","content":[t("")]}]),
                vec![(0, EmptyContent)],
            ),
            (
                "whitespace text",
                json!([{"role":"user","content":"a"},{"role":"assistant","content":[t("\n\n")]}]),
                vec![(1, EmptyContent)],
            ),
            (
                "bad role",
                json!([{"role":"tool","content":"a"}]),
                vec![(0, Malformed)],
            ),
            (
                "duplicate id",
                json!([{"role":"user","content":"a"},{"role":"assistant","content":[tu("a")]},{"role":"user","content":[tr("a")]},{"role":"assistant","content":[tu("a")]},{"role":"user","content":[tr("a")]}]),
                vec![(3, DuplicateToolUseId)],
            ),
        ];
        for (name, msgs, want) in table {
            assert_eq!(kinds(msgs), want, "{name}");
        }
    }
}
