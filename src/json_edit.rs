//! Byte-preserving edits of a JSON text: insert, replace or remove one member or element and
//! leave every other byte as it was (indentation, escapes, number spellings, key order).
//!
//! Settings files belong to their user and to Claude Code; a program that adds one entry must
//! not re-indent the file or rewrite `1.0e3` as `1000.0`. Each edit finds the span of what it
//! changes with a small scanner over the (already validated) text, splices the new text in,
//! and checks that the result still parses. An insertion follows the indentation of its
//! neighbours; removing what was appended gives back the bytes from before the append.

use serde_json::Value;
use std::ops::Range;

/// One step of a path into a document: an object member or an array element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// The member with this key.
    Key(&'a str),
    /// The element at this index.
    Index(usize),
}

/// A JSON text being edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    text: String,
}

/// Where a value sits in the text, with its children.
#[derive(Debug)]
enum Node {
    Object(Range<usize>, Vec<Member>),
    Array(Range<usize>, Vec<Node>),
    Scalar(Range<usize>),
}

#[derive(Debug)]
struct Member {
    key: String,
    key_start: usize,
    value: Node,
}

impl Node {
    fn span(&self) -> Range<usize> {
        match self {
            Node::Object(r, _) | Node::Array(r, _) | Node::Scalar(r) => r.clone(),
        }
    }
}

impl Document {
    /// Takes `text`, which must be valid JSON.
    ///
    /// # Errors
    /// serde_json's error (with line and column) when it is not.
    pub fn parse(text: String) -> Result<Document, serde_json::Error> {
        serde_json::from_str::<serde::de::IgnoredAny>(&text)?;
        Ok(Document { text })
    }

    /// The text as it is now.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The document as a value.
    pub fn value(&self) -> Value {
        // Valid by construction: parse checked it and every edit re-checks.
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    fn root(&self) -> Node {
        let mut scanner = Scanner {
            text: self.text.as_bytes(),
            at: 0,
        };
        scanner.skip_ws();
        scanner.value()
    }

    /// Sets the member `key` of the object at `path` to `value`: replaced in place when it
    /// is there, else appended after the last member. Missing objects along `path` are
    /// created as one nested value. Returns false (and changes nothing) when something on
    /// the path is not an object.
    pub fn set(&mut self, path: &[&str], key: &str, value: &Value) -> bool {
        let root = self.root();
        let mut node = &root;
        for (depth, step) in path.iter().enumerate() {
            let Node::Object(_, members) = node else {
                return false;
            };
            match members.iter().find(|m| m.key == *step) {
                Some(m) => node = &m.value,
                None => {
                    let mut nested = serde_json::Map::new();
                    nested.insert(key.to_owned(), value.clone());
                    let mut inner = Value::Object(nested);
                    for k in path[depth + 1..].iter().rev() {
                        let mut m = serde_json::Map::new();
                        m.insert((*k).to_owned(), inner);
                        inner = Value::Object(m);
                    }
                    let edit = self.insert_member(node, step, &inner);
                    return self.apply(edit);
                }
            }
        }
        let Node::Object(_, members) = node else {
            return false;
        };
        let edit = match members.iter().find(|m| m.key == key) {
            Some(m) => {
                let span = m.value.span();
                let indent = self.line_indent(m.key_start);
                (span, self.pretty(value, &indent))
            }
            None => self.insert_member(node, key, value),
        };
        self.apply(edit)
    }

    /// Appends `value` to the array at `path`. False when there is no array there.
    pub fn push(&mut self, path: &[Step<'_>], value: &Value) -> bool {
        let root = self.root();
        let Some(Node::Array(span, items)) = find(&root, path) else {
            return false;
        };
        let edit = match items.last() {
            Some(last) => {
                let end = last.span().end;
                match self.own_line_indent(last.span().start) {
                    Some(indent) => (
                        end..end,
                        format!(",\n{indent}{}", self.pretty(value, &indent)),
                    ),
                    None => (end..end, format!(", {}", compact(value))),
                }
            }
            None => {
                let outer = self.line_indent(span.start);
                let inner = format!("{outer}{}", self.unit());
                (
                    span.start + 1..span.end - 1,
                    format!("\n{inner}{}\n{outer}", self.pretty(value, &inner)),
                )
            }
        };
        self.apply(edit)
    }

    /// Replaces the value at `path`. False when there is nothing there.
    pub fn replace(&mut self, path: &[Step<'_>], value: &Value) -> bool {
        let root = self.root();
        let Some(node) = find(&root, path) else {
            return false;
        };
        let span = node.span();
        let indent = self.line_indent(span.start);
        let edit = (span, self.pretty(value, &indent));
        self.apply(edit)
    }

    /// Removes the member or element at `path` with its separator: an appended one goes
    /// with the comma and line before it, so removing what [`Document::set`] or
    /// [`Document::push`] appended gives back the text from before. False when there is
    /// nothing there (or `path` is empty).
    pub fn remove(&mut self, path: &[Step<'_>]) -> bool {
        let Some((last, parent_path)) = path.split_last() else {
            return false;
        };
        let root = self.root();
        let Some(parent) = find(&root, parent_path) else {
            return false;
        };
        // (start of each child as a list entry, end of its value), and the brackets.
        let (outer, entries): (Range<usize>, Vec<(usize, usize)>) = match parent {
            Node::Object(span, members) => (
                span.clone(),
                members
                    .iter()
                    .map(|m| (m.key_start, m.value.span().end))
                    .collect(),
            ),
            Node::Array(span, items) => (
                span.clone(),
                items
                    .iter()
                    .map(|n| (n.span().start, n.span().end))
                    .collect(),
            ),
            Node::Scalar(_) => return false,
        };
        let index = match (last, parent) {
            (Step::Key(k), Node::Object(_, members)) => members.iter().position(|m| m.key == *k),
            (Step::Index(i), Node::Array(_, items)) => (*i < items.len()).then_some(*i),
            _ => None,
        };
        let Some(i) = index else {
            return false;
        };
        let range = if entries.len() == 1 {
            outer.start + 1..outer.end - 1
        } else if i > 0 {
            entries[i - 1].1..entries[i].1
        } else {
            entries[0].0..entries[1].0
        };
        self.apply((range, String::new()))
    }

    fn insert_member(&self, object: &Node, key: &str, value: &Value) -> (Range<usize>, String) {
        let Node::Object(span, members) = object else {
            return (0..0, String::new());
        };
        let key_text = compact(&Value::String(key.to_owned()));
        match members.last() {
            Some(last) => {
                let end = last.value.span().end;
                match self.own_line_indent(last.key_start) {
                    Some(indent) => (
                        end..end,
                        format!(",\n{indent}{key_text}: {}", self.pretty(value, &indent)),
                    ),
                    None => (end..end, format!(", {key_text}: {}", compact(value))),
                }
            }
            None => {
                let outer = self.line_indent(span.start);
                let inner = format!("{outer}{}", self.unit());
                (
                    span.start + 1..span.end - 1,
                    format!(
                        "\n{inner}{key_text}: {}\n{outer}",
                        self.pretty(value, &inner)
                    ),
                )
            }
        }
    }

    fn apply(&mut self, (range, text): (Range<usize>, String)) -> bool {
        let mut next = String::with_capacity(self.text.len() + text.len());
        next.push_str(&self.text[..range.start]);
        next.push_str(&text);
        next.push_str(&self.text[range.end..]);
        if serde_json::from_str::<serde::de::IgnoredAny>(&next).is_err() {
            return false;
        }
        let changed = next != self.text;
        self.text = next;
        changed
    }

    /// The blanks that start the line holding byte `at`.
    fn line_indent(&self, at: usize) -> String {
        let line_start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        self.text[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }

    /// The indentation of byte `at` when it is the first thing on its line.
    fn own_line_indent(&self, at: usize) -> Option<String> {
        let line_start = self.text[..at].rfind('\n').map(|i| i + 1)?;
        let before = &self.text[line_start..at];
        before
            .chars()
            .all(|c| c == ' ' || c == '\t')
            .then(|| before.to_owned())
    }

    /// One level of indentation as the file writes it: the first indented line's blanks,
    /// else two spaces (Claude Code's own).
    fn unit(&self) -> String {
        self.text
            .split('\n')
            .skip(1)
            .map(|line| {
                line.chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect::<String>()
            })
            .find(|blanks| !blanks.is_empty())
            .unwrap_or_else(|| "  ".to_owned())
    }

    /// `value` pretty-printed with this file's unit, its lines after the first indented by
    /// `indent`.
    fn pretty(&self, value: &Value, indent: &str) -> String {
        let unit = self.unit();
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        if serde::Serialize::serialize(value, &mut ser).is_err() {
            return compact(value);
        }
        let text = String::from_utf8(out).unwrap_or_default();
        text.replace('\n', &format!("\n{indent}"))
    }
}

fn compact(value: &Value) -> String {
    value.to_string()
}

fn find<'n>(node: &'n Node, path: &[Step<'_>]) -> Option<&'n Node> {
    let mut node = node;
    for step in path {
        node = match (step, node) {
            (Step::Key(k), Node::Object(_, members)) => {
                &members.iter().find(|m| m.key == *k)?.value
            }
            (Step::Index(i), Node::Array(_, items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(node)
}

/// A scanner over valid JSON that records spans (the text was checked before).
struct Scanner<'t> {
    text: &'t [u8],
    at: usize,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Node {
        let start = self.at;
        match self.text.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                loop {
                    self.skip_ws();
                    match self.text.get(self.at) {
                        Some(b'}') | None => break,
                        Some(b',') => {
                            self.at += 1;
                            continue;
                        }
                        _ => {}
                    }
                    let key_start = self.at;
                    self.string();
                    let key = serde_json::from_slice::<String>(&self.text[key_start..self.at])
                        .unwrap_or_default();
                    self.skip_ws();
                    self.at += 1; // ':'
                    self.skip_ws();
                    let value = self.value();
                    members.push(Member {
                        key,
                        key_start,
                        value,
                    });
                }
                self.at += 1;
                Node::Object(start..self.at, members)
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    match self.text.get(self.at) {
                        Some(b']') | None => break,
                        Some(b',') => {
                            self.at += 1;
                            continue;
                        }
                        _ => items.push(self.value()),
                    }
                }
                self.at += 1;
                Node::Array(start..self.at, items)
            }
            Some(b'"') => {
                self.string();
                Node::Scalar(start..self.at)
            }
            _ => {
                while self.text.get(self.at).is_some_and(|b| {
                    !matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
                Node::Scalar(start..self.at)
            }
        }
    }

    fn string(&mut self) {
        self.at += 1;
        while let Some(b) = self.text.get(self.at) {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'"' => return,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ODD: &str = "{\n    \"model\": \"op\\u0065s\",\n    \"n\": 1.0e3,\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": []}\n        ]\n    }\n}\n";

    #[test]
    fn appending_then_removing_gives_the_same_bytes() {
        let mut d = Document::parse(ODD.to_owned()).expect("valid");
        assert!(d.push(&[Step::Key("hooks"), Step::Key("Stop")], &json!({"a": [1]})));
        assert!(
            d.text()
                .contains("\n            {\n                \"a\": [\n"),
            "{}",
            d.text()
        );
        assert!(d.set(&["hooks"], "SessionEnd", &json!([{"b": 2}])));
        assert!(d.set(&[], "mcpServers", &json!({"x": {"command": "y"}})));
        assert_eq!(d.value()["n"], json!(1000.0));
        assert!(d.remove(&[Step::Key("mcpServers")]));
        assert!(d.remove(&[Step::Key("hooks"), Step::Key("SessionEnd")]));
        assert!(d.remove(&[Step::Key("hooks"), Step::Key("Stop"), Step::Index(1)]));
        assert_eq!(d.text(), ODD);
    }

    #[test]
    fn missing_objects_are_created_and_empty_ones_filled() {
        let mut d = Document::parse("{}\n".to_owned()).expect("valid");
        assert!(d.set(&["hooks", "Stop"], "x", &json!(1)));
        assert_eq!(
            d.text(),
            "{\n  \"hooks\": {\n    \"Stop\": {\n      \"x\": 1\n    }\n  }\n}\n"
        );
        assert!(d.remove(&[Step::Key("hooks")]));
        assert_eq!(d.text(), "{}\n");
        let mut a = Document::parse("{\"l\": []}".to_owned()).expect("valid");
        assert!(a.push(&[Step::Key("l")], &json!("v")));
        assert!(a.replace(&[Step::Key("l"), Step::Index(0)], &json!("w")));
        assert_eq!(a.value(), json!({"l": ["w"]}));
        assert!(!a.push(&[Step::Key("nothing")], &json!(1)));
        assert!(a.remove(&[Step::Key("l"), Step::Index(0)]));
        assert_eq!(a.text(), "{\"l\": []}");
    }

    #[test]
    fn keys_with_escapes_and_compact_files() {
        let text = r#"{"a\"b":[1,2],"c":{"d":"}]"}}"#;
        let mut d = Document::parse(text.to_owned()).expect("valid");
        assert!(d.push(&[Step::Key("a\"b")], &json!(3)));
        assert!(d.set(&["c"], "e", &json!(true)));
        assert_eq!(d.text(), r#"{"a\"b":[1,2, 3],"c":{"d":"}]", "e": true}}"#);
        assert!(d.remove(&[Step::Key("c"), Step::Key("e")]));
        assert!(d.remove(&[Step::Key("a\"b"), Step::Index(2)]));
        assert_eq!(d.text(), text);
    }
}
