//! Small helpers over JSONL records (`serde_json::Value`), shared by the resume modules
//! and the SDK's reading (`sdk`). They mirror the oracle's Python idioms (`r.get(...)`,
//! truthiness) without panicking on malformed records.

use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// A `HashMap` with a fast hasher (rustc-hash's Fx) for the short string keys (uuids,
/// message ids) that the chain rules look up thousands of times per resume: std's SipHash
/// was a visible share of resume time. Not resistant to crafted collisions, which only
/// slow down the user's own files.
pub(crate) type FastMap<K, V> = HashMap<K, V, rustc_hash::FxBuildHasher>;

/// A `HashSet` with the hasher of [`FastMap`].
pub(crate) type FastSet<K> = HashSet<K, rustc_hash::FxBuildHasher>;

/// Python-style truthiness of an optional JSON value.
pub(crate) fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// A string field of a record.
pub(crate) fn str_field<'a>(r: &'a Value, key: &str) -> Option<&'a str> {
    r.get(key).and_then(Value::as_str)
}

/// The record's `type`.
pub(crate) fn rec_type(r: &Value) -> Option<&str> {
    str_field(r, "type")
}

/// `message.id` of an assistant record (non-empty string), else `None`.
pub(crate) fn msg_id(r: &Value) -> Option<&str> {
    if rec_type(r) != Some("assistant") {
        return None;
    }
    r.get("message")
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `message.content` of a record, if any.
pub(crate) fn content(r: &Value) -> Option<&Value> {
    r.get("message").and_then(|m| m.get("content"))
}

/// The content blocks of a record (`[]` when the content is not an array).
pub(crate) fn blocks(r: &Value) -> &[Value] {
    content(r)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// A block's `type`.
pub(crate) fn block_type(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

/// A user record carrying at least one `tool_result` block.
pub(crate) fn is_tool_result_msg(r: &Value) -> bool {
    rec_type(r) == Some("user")
        && blocks(r)
            .iter()
            .any(|b| block_type(b) == Some("tool_result"))
}
