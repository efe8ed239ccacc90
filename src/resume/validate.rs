//! A checker for the Messages API's structural rules on a `messages` array
//! (as produced by [`super::api::api_view`]).
//!
//! Rules checked:
//! * every message is an object with role `user`, `assistant` or `system` and
//!   string or array content; a `system` message (B10: reminders for newer models,
//!   sent between a user message and the next assistant message) has non-empty string
//!   content and is transparent for the rules below, which look at its neighbours;
//! * the first message has role `user`;
//! * roles alternate (the API view is already merged);
//! * every `tool_use` of an assistant message is answered by a `tool_result`
//!   in the very next message, which must be a user message; every
//!   `tool_result` answers a `tool_use` of the immediately preceding
//!   assistant message; tool_use ids are unique;
//! * in a user message, `tool_result` blocks come before any other block;
//! * no empty content: empty string, empty array, text block with empty or
//!   whitespace-only text (the API rejects "text content blocks must contain
//!   non-whitespace text").
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
    /// The first message is not a user message.
    FirstNotUser,
    /// Same role as the previous message.
    RolesNotAlternating,
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
        .filter(|r| *r == "user" || *r == "assistant")
}

fn is_system(m: &Value) -> bool {
    m.get("role").and_then(Value::as_str) == Some("system")
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
    // Positions of the user/assistant messages: `system` messages sit between them.
    let turns: Vec<usize> = (0..messages.len())
        .filter(|&i| !is_system(&messages[i]))
        .collect();
    for (i, m) in messages.iter().enumerate() {
        if is_system(m) {
            match m.get("content") {
                Some(Value::String(s)) if !s.trim().is_empty() => {}
                Some(Value::String(_)) => push(
                    i,
                    ViolationKind::EmptyContent,
                    "empty system message".into(),
                ),
                _ => push(
                    i,
                    ViolationKind::Malformed,
                    "system message content is not a string".into(),
                ),
            }
            if i == 0 {
                push(
                    i,
                    ViolationKind::FirstNotUser,
                    "first message role system".into(),
                );
            }
            continue;
        }
        let Some(r) = role(m) else {
            push(
                i,
                ViolationKind::Malformed,
                "missing or invalid role".into(),
            );
            continue;
        };
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
        if i == 0 && r != "user" {
            push(
                i,
                ViolationKind::FirstNotUser,
                format!("first message role {r}"),
            );
        }
        let at = turns.binary_search(&i).unwrap_or(0);
        let prev = at
            .checked_sub(1)
            .and_then(|p| turns.get(p))
            .and_then(|&p| messages.get(p));
        if prev.and_then(role) == Some(r) {
            push(
                i,
                ViolationKind::RolesNotAlternating,
                format!("two {r} messages in a row"),
            );
        }
        if r == "assistant" {
            let uses = ids(m, "tool_use", "id");
            let next = turns.get(at + 1).and_then(|&n| messages.get(n));
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
                "first assistant",
                json!([{"role":"assistant","content":"x"}]),
                vec![(0, FirstNotUser)],
            ),
            (
                "no alternation",
                json!([{"role":"user","content":"a"},{"role":"user","content":"b"}]),
                vec![(1, RolesNotAlternating)],
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
                "system messages between turns (B10)",
                json!([{"role":"user","content":"a"},{"role":"system","content":"r1\n\nr2"},{"role":"assistant","content":[tu("a")]},{"role":"user","content":[tr("a")]},{"role":"system","content":"r3"},{"role":"assistant","content":[t("ok")]}]),
                vec![],
            ),
            (
                "system first or empty",
                json!([{"role":"system","content":"x"},{"role":"user","content":"a"},{"role":"system","content":" "},{"role":"system","content":[t("x")]}]),
                vec![(0, FirstNotUser), (2, EmptyContent), (3, Malformed)],
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
