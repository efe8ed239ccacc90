//! The searchable text of a user/assistant line, computed from its bytes exactly as the
//! `search_source` view (migration V3) computes it with SQLite's JSON functions, so that
//! import can feed the full-text index without the view's repeated `json_extract` and
//! `json_each` calls.
//!
//! `body` = a string `message.content`, or its `text` blocks' `text` joined with `\n`;
//! `tools` = for each block, a `tool_use`'s `name` and `input` (the input's JSON text,
//! minified) joined with a space, or a `tool_result`'s string `content` or its objects'
//! `text` joined with `\n`; those joined with `\n`. Anything whose rendering by SQLite is
//! not certain (a duplicate key on the path, an escaped key, a `text` that is not a string,
//! a NUL, a line that does not start with `{` and end with `}`, a line longer than
//! [`MAX_PARSED_LINE`]) gives `None`: the caller then lets the view compute
//! the text.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// Lines longer than this (8 MiB) are not taken apart for the search index: their first
/// `search::INDEXED_PREFIX` bytes of JSON text are indexed as their `body` (migration V9),
/// which bounds the memory of indexing and of every snippet (a 100 MB line took 1.8 GB).
pub const MAX_PARSED_LINE: usize = 8 * 1024 * 1024;

/// The two indexed columns of one line; `None` where the view gives NULL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchText {
    /// What the user or assistant wrote.
    pub body: Option<String>,
    /// Tool calls and tool results.
    pub tools: Option<String>,
}

/// The searchable text of a stored line, or `None` when only the view can tell.
pub fn search_text(raw: &[u8]) -> Option<SearchText> {
    // The view indexes a prefix of longer lines (migration V9).
    if raw.len() > MAX_PARSED_LINE {
        return None;
    }
    if raw.first() != Some(&b'{') || raw.last() != Some(&b'}') {
        return None;
    }
    let text = std::str::from_utf8(raw).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let out = de.deserialize_map(TopVisitor).ok()?;
    de.end().ok()?;
    let nul = |s: &Option<String>| s.as_deref().is_some_and(|s| s.contains('\0'));
    if nul(&out.body) || nul(&out.tools) {
        return None;
    }
    Some(out)
}

fn bail<E: de::Error>() -> E {
    E::custom("the view decides")
}

/// A key; an escaped key is not compared the way SQLite's path lookup does.
fn key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<&'de str>, A::Error> {
    Ok(map.next_key::<PlainKey<'de>>()?.map(|k| k.0))
}

/// A key borrowed from the line: one with escapes makes the line the view's.
struct PlainKey<'a>(&'a str);

impl<'de> serde::Deserialize<'de> for PlainKey<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(PlainKeyVisitor)
    }
}

struct PlainKeyVisitor;

impl<'de> Visitor<'de> for PlainKeyVisitor {
    type Value = PlainKey<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key without escapes")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(PlainKey(v))
    }
}

/// Sets a field once; a duplicate key makes the line the view's.
fn once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(bail());
    }
    *slot = Some(value);
    Ok(())
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = SearchText;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SearchText, A::Error> {
        let mut message: Option<SearchText> = None;
        while let Some(k) = key(&mut map)? {
            if k == "message" {
                let m = map.next_value_seed(MessageSeed)?;
                once(&mut message, m)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(message.unwrap_or_default())
    }
}

/// `message`: only an object's `content` counts.
struct MessageSeed;

impl<'de> de::DeserializeSeed<'de> for MessageSeed {
    type Value = SearchText;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<SearchText, D::Error> {
        d.deserialize_any(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = SearchText;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SearchText, A::Error> {
        let mut content: Option<SearchText> = None;
        while let Some(k) = key(&mut map)? {
            if k == "content" {
                let c = map.next_value_seed(ContentSeed)?;
                once(&mut content, c)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(content.unwrap_or_default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SearchText, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(SearchText::default())
    }
    crate::jsonl::skip_scalars!(SearchText::default(), str);
}

/// `message.content`: a string is the body; an array's blocks give body and tools.
struct ContentSeed;

impl<'de> de::DeserializeSeed<'de> for ContentSeed {
    type Value = SearchText;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<SearchText, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

/// Appends one non-NULL part to a `group_concat(x, char(10))`.
fn concat(acc: &mut Option<String>, part: &str) {
    match acc {
        Some(s) => {
            s.push('\n');
            s.push_str(part);
        }
        None => *acc = Some(part.to_owned()),
    }
}

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = SearchText;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<SearchText, E> {
        self.visit_str(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<SearchText, E> {
        Ok(SearchText {
            body: Some(v.to_owned()),
            tools: None,
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SearchText, A::Error> {
        let mut out = SearchText::default();
        while let Some(block) = seq.next_element_seed(BlockSeed)? {
            match block {
                Block::Text(Some(t)) => concat(&mut out.body, &t),
                Block::Tool(Some(t)) => concat(&mut out.tools, &t),
                Block::Text(None) | Block::Tool(None) | Block::Other => {}
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SearchText, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(SearchText::default())
    }
    crate::jsonl::skip_scalars!(SearchText::default());
}

/// What one content block gives.
enum Block {
    /// A `text` block's text (body).
    Text(Option<String>),
    /// A `tool_use` or `tool_result` block's text (tools).
    Tool(Option<String>),
    /// Anything else.
    Other,
}

struct BlockSeed;

impl<'de> de::DeserializeSeed<'de> for BlockSeed {
    type Value = Block;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Block, D::Error> {
        d.deserialize_any(BlockVisitor)
    }
}

/// A JSON value as `json_extract` gives it: SQL NULL, a string, or (for a `tool_use`
/// input) an object's or array's JSON text.
fn extracted<E: de::Error>(raw: &RawValue, json_ok: bool) -> Result<Option<String>, E> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text)
            .map(Some)
            .map_err(|_| bail()),
        Some(b'n') => Ok(None),
        Some(b'{' | b'[') if json_ok => Ok(Some(minified(text))),
        _ => Err(bail()),
    }
}

/// JSON text without whitespace outside strings (SQLite renders extracted JSON so).
fn minified(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            out.push_str(&text[start..i]);
            start = i + 1;
        }
    }
    out.push_str(&text[start..]);
    out
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Block;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
        let mut kind: Option<&'de RawValue> = None;
        let mut text: Option<&'de RawValue> = None;
        let mut name: Option<&'de RawValue> = None;
        let mut input: Option<&'de RawValue> = None;
        let mut content: Option<Option<String>> = None;
        while let Some(k) = key(&mut map)? {
            match k {
                "type" => once(&mut kind, map.next_value()?)?,
                "text" => once(&mut text, map.next_value()?)?,
                "name" => once(&mut name, map.next_value()?)?,
                "input" => once(&mut input, map.next_value()?)?,
                "content" => {
                    let c = map.next_value_seed(ResultContentSeed)?;
                    once(&mut content, c)?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if kind.is_some_and(|k| k.get().contains('\\')) {
            return Err(bail());
        }
        let kind = match kind.map(RawValue::get) {
            Some(r#""text""#) => "text",
            Some(r#""tool_use""#) => "tool_use",
            Some(r#""tool_result""#) => "tool_result",
            _ => return Ok(Block::Other),
        };
        Ok(match kind {
            "text" => Block::Text(match text {
                Some(t) => extracted(t, false)?,
                None => None,
            }),
            "tool_use" => {
                let name = match name {
                    Some(n) => extracted(n, false)?,
                    None => None,
                };
                let input = match input {
                    Some(i) => extracted(i, true)?,
                    None => None,
                };
                let mut t = name.unwrap_or_default();
                t.push(' ');
                t.push_str(input.as_deref().unwrap_or(""));
                Block::Tool(Some(t))
            }
            _ => Block::Tool(content.flatten()),
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Block, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Block::Other)
    }
    crate::jsonl::skip_scalars!(Block::Other, str);
}

/// A block's `content` as a `tool_result` gives it: a string, or its objects' `text`
/// joined with `\n`; NULL otherwise.
struct ResultContentSeed;

impl<'de> de::DeserializeSeed<'de> for ResultContentSeed {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_any(ResultContentVisitor)
    }
}

struct ResultContentVisitor;

impl<'de> Visitor<'de> for ResultContentVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        self.visit_str(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = None;
        while let Some(part) = seq.next_element_seed(TextOfObjectSeed)? {
            if let Some(t) = part {
                concat(&mut out, &t);
            }
        }
        Ok(out)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    crate::jsonl::skip_scalars!(None);
}

/// An element of a `tool_result`'s content array: an object's `text`, NULL otherwise.
struct TextOfObjectSeed;

impl<'de> de::DeserializeSeed<'de> for TextOfObjectSeed {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_any(TextOfObjectVisitor)
    }
}

struct TextOfObjectVisitor;

impl<'de> Visitor<'de> for TextOfObjectVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut text: Option<&'de RawValue> = None;
        while let Some(k) = key(&mut map)? {
            if k == "text" {
                once(&mut text, map.next_value()?)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        match text {
            Some(t) => extracted(t, false),
            None => Ok(None),
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    crate::jsonl::skip_scalars!(None, str);
}
