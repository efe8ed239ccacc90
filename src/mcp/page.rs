//! Answers that fit: every tool answer is one line of compact JSON kept under a byte budget,
//! so that Claude Code never cuts it or moves it to a file.
//!
//! Claude Code 2.1.332 estimates an MCP result's size from its text (about four characters
//! a token); under 12,500 estimated tokens (50,000 characters) it keeps the result as it
//! is, and over its cap (25,000 tokens, `MAX_MCP_OUTPUT_TOKENS`) it truncates it or saves
//! it to a file. Counting bytes rather than characters keeps text in any script under both.

use serde_json::{Map, Value};

/// The budget when the caller names none: 20,000 bytes (about 5,000 tokens).
pub const DEFAULT_BUDGET: usize = 20_000;

/// The largest budget a caller may ask for: 40,000 bytes, under the 50,000 characters
/// Claude Code keeps without counting.
pub const MAX_BUDGET: usize = 40_000;

/// Room kept for the answer's own fields (`next`, counts) around its items.
const ENVELOPE: usize = 600;

/// A list of items filled until the budget is spent.
pub struct Page {
    items: Vec<Value>,
    used: usize,
    budget: usize,
}

impl Page {
    /// An empty page of at most `budget` bytes.
    pub fn new(budget: usize) -> Page {
        Page {
            items: Vec::new(),
            used: 0,
            budget: budget.saturating_sub(ENVELOPE),
        }
    }

    /// The bytes still free.
    pub fn room(&self) -> usize {
        self.budget.saturating_sub(self.used)
    }

    /// Whether nothing was added yet.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds `item` when it fits; `false` (and nothing added) when it does not.
    pub fn push(&mut self, item: Value) -> bool {
        let size = size_of(&item) + 1;
        if self.used + size > self.budget {
            return false;
        }
        self.used += size;
        self.items.push(item);
        true
    }

    /// The items, for the answer.
    pub fn into_items(self) -> Vec<Value> {
        self.items
    }
}

/// A list answer: `{<key>: [items], "next": "<offset>"}` (`next` only when more follow).
pub fn listing(key: &str, page: Page, next: Option<i64>) -> Value {
    let mut map = Map::new();
    map.insert(key.to_owned(), Value::Array(page.into_items()));
    if let Some(next) = next {
        map.insert("next".to_owned(), Value::String(next.to_string()));
    }
    Value::Object(map)
}

/// The bytes `value` takes as compact JSON.
pub fn size_of(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |v| v.len())
}

/// An object from `(key, value)` pairs, leaving out nulls, empty strings and `false`: a
/// model pays for every byte.
pub fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    let mut map = Map::new();
    for (k, v) in fields {
        let empty = match &v {
            Value::Null | Value::Bool(false) => true,
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        if !empty {
            map.insert(k.to_owned(), v);
        }
    }
    Value::Object(map)
}

/// `text` cut to at most `max` bytes (at a character boundary); the cut-off byte count
/// when it was cut.
pub fn cut(text: &str, max: usize) -> (&str, Option<usize>) {
    if text.len() <= max {
        return (text, None);
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    (&text[..at], Some(text.len() - at))
}

/// A time in epoch ms as RFC 3339 (UTC).
pub fn time(ms: i64) -> Value {
    Value::String(crate::time::format_ms(ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_stops_at_its_budget() {
        let mut page = Page::new(ENVELOPE + 100);
        assert!(page.push(json!("x".repeat(40))));
        assert!(page.push(json!("x".repeat(40))));
        assert!(!page.push(json!("x".repeat(40))));
        assert_eq!(page.into_items().len(), 2);
    }

    #[test]
    fn objects_leave_out_empty_fields() {
        let o = object([
            ("a", json!(null)),
            ("b", json!("")),
            ("c", json!(false)),
            ("d", json!(0)),
            ("e", json!([])),
        ]);
        assert_eq!(o, json!({"d": 0}));
    }

    #[test]
    fn cut_keeps_characters_whole() {
        assert_eq!(cut("aé", 2), ("a", Some(2)));
        assert_eq!(cut("ab", 2), ("ab", None));
    }
}
