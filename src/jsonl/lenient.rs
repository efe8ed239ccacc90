//! Reading a line as JavaScript's `JSON.parse` accepts it, into the in-memory view that
//! resume, fork, `messages` and the SDK functions work on.
//!
//! Two kinds of valid lines are more than `serde_json` takes:
//!
//! * a lone surrogate escape (`"\ud83d"`), which Claude Code writes when it cuts a string
//!   inside an emoji: in the view it becomes U+FFFD (a Rust string cannot hold a lone
//!   surrogate, and a strict JSON reader of `--api` output would refuse the escape);
//! * nesting deeper than `serde_json`'s limit of 128: in the view, a value nested deeper
//!   than [`VIEW_DEPTH`] levels becomes a string holding its JSON text, exactly as written.
//!   Building it would recurse once per level, here and in every consumer (clone,
//!   serialization, drop), with no bound but the stack.
//!
//! The stored line is never changed: export, `serve`'s load and search read its bytes.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// Levels of arrays and objects built in the view; deeper values are kept as JSON text.
/// Below `serde_json`'s own limit of 128, which then never applies.
pub const VIEW_DEPTH: usize = 100;

/// Parses JSON text leniently (see the module docs); `None` when it is not JSON at all.
pub fn parse_json(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    let text = without_lone_surrogates(text);
    let mut de = serde_json::Deserializer::from_str(&text);
    let value = Depth(0).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Parses an object like [`parse_json`], except that the top-level member `skip` is not
/// built: its value stands in as one of the same JSON truthiness (an empty object or array
/// is itself, any other object, array or string becomes `true`, a scalar is itself). For
/// readers that only test the member, such as resume's API view with `toolUseResult` (the
/// tool's output as the UI showed it, two thirds of a typical transcript's bytes). `None`
/// for what is not a JSON object.
pub fn parse_object_skipping(text: &str, skip: &str) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    if let Ok(value) = Skipping(skip).deserialize(&mut de) {
        if de.end().is_ok() {
            return Some(value);
        }
    }
    // What serde_json refuses (a lone surrogate, deep nesting, not an object) is read the
    // slow way, and the member replaced afterwards.
    let mut value = parse_json(text).filter(Value::is_object)?;
    if let Some(member) = value.as_object_mut().and_then(|m| m.get_mut(skip)) {
        let text = serde_json::to_string(member).ok()?;
        *member = stand_in(&text);
    }
    Some(value)
}

/// A value of the same truthiness as the JSON value `raw`, cheap to build (see
/// [`parse_object_skipping`]).
fn stand_in(raw: &str) -> Value {
    match raw.as_bytes().first() {
        Some(b'{' | b'[' | b'"') if raw.len() > 2 => Value::Bool(true),
        // "", [], {} and scalars: the value itself, which is small.
        _ => serde_json::from_str(raw).unwrap_or(Value::Bool(true)),
    }
}

/// A top-level object whose member named `.0` is kept as a [`stand_in`].
struct Skipping<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for Skipping<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Skipping<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if key == self.0 {
                stand_in(map.next_value::<&RawValue>()?.get())
            } else {
                map.next_value::<Value>()?
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// `text` with every lone surrogate escape inside a string replaced by `\ufffd`; a valid
/// pair (`\ud83d\ude00`) is kept. Borrowed when there is none.
pub fn without_lone_surrogates(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let digits = b.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u16> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| hex(at + 2))
            .flatten()
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let (mut i, mut in_string) = (0, false);
    while i < b.len() {
        match b[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => {
                let Some(unit) = escape_at(i) else {
                    i += 2;
                    continue;
                };
                let high = (0xD800..0xDC00).contains(&unit);
                let paired =
                    high && escape_at(i + 6).is_some_and(|u| (0xDC00..0xE000).contains(&u));
                if paired {
                    i += 12;
                } else if (0xD800..0xE000).contains(&unit) {
                    let s = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    s.push_str(&text[copied..i]);
                    s.push_str("\\ufffd");
                    i += 6;
                    copied = i;
                } else {
                    i += 6;
                }
            }
            _ => i += 1,
        }
    }
    match out {
        Some(mut s) => {
            s.push_str(&text[copied..]);
            Cow::Owned(s)
        }
        None => Cow::Borrowed(text),
    }
}

/// A value at nesting `depth`: built up to [`VIEW_DEPTH`], kept as JSON text below.
struct Depth(usize);

impl<'de> DeserializeSeed<'de> for Depth {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.0 >= VIEW_DEPTH {
            let raw = <Box<RawValue> as serde::Deserialize>::deserialize(d)?;
            let text = raw.get();
            return Ok(match text.as_bytes().first() {
                Some(b'[' | b'{') => Value::String(text.to_owned()),
                _ => serde_json::from_str(text).map_err(serde::de::Error::custom)?,
            });
        }
        d.deserialize_any(DepthVisitor(self.0))
    }
}

struct DepthVisitor(usize);

impl<'de> Visitor<'de> for DepthVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Depth(self.0 + 1))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Depth(self.0 + 1))?;
            // JSON.parse keeps the last of a repeated key.
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_member_keeps_its_truthiness_and_the_rest_is_parse_json() {
        let cases = [
            (
                r#"{"a":1,"toolUseResult":{"file":{"content":"x"}},"b":[2]}"#,
                json_true(),
            ),
            (r#"{"toolUseResult":"Error: no"}"#, json_true()),
            (r#"{"toolUseResult":["x"]}"#, json_true()),
            (r#"{"toolUseResult":""}"#, Value::String(String::new())),
            (r#"{"toolUseResult":{}}"#, Value::Object(Map::new())),
            (r#"{"toolUseResult":[]}"#, Value::Array(Vec::new())),
            (r#"{"toolUseResult":0}"#, Value::from(0)),
            (r#"{"toolUseResult":null}"#, Value::Null),
            (r#"{"toolUseResult":false}"#, Value::Bool(false)),
            // Read the slow way: a lone surrogate, inside and outside the member.
            (
                r#"{"toolUseResult":{"s":"\ud83d"},"x":"\ud83d"}"#,
                json_true(),
            ),
            (r#"{"toolUseResult":"\ud83d"}"#, json_true()),
            // A repeated member: the last value wins, as in parse_json.
            (
                r#"{"toolUseResult":"x","toolUseResult":""}"#,
                Value::String(String::new()),
            ),
        ];
        for (text, member) in cases {
            let mut want = parse_json(text).expect("JSON");
            want["toolUseResult"] = member;
            assert_eq!(
                parse_object_skipping(text, "toolUseResult"),
                Some(want),
                "{text}"
            );
        }
        let whole = r#"{"type":"user","message":{"content":"hi"}}"#;
        assert_eq!(
            parse_object_skipping(whole, "toolUseResult"),
            parse_json(whole)
        );
        for not_an_object in ["[1]", "\"x\"", "{", "{} x", ""] {
            assert_eq!(parse_object_skipping(not_an_object, "toolUseResult"), None);
        }
    }

    fn json_true() -> Value {
        Value::Bool(true)
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let cases = [
            (r#"{"a":"x\ud83d"}"#, "x\u{fffd}"),
            (r#"{"a":"\ude00y"}"#, "\u{fffd}y"),
            (r#"{"a":"\ud83d\ude00"}"#, "😀"),
            (r#"{"a":"\ud83d\ud83d\ude00"}"#, "\u{fffd}😀"),
            (r#"{"a":"\\ud83d"}"#, "\\ud83d"),
            (r#"{"a":"\uD83D!"}"#, "\u{fffd}!"),
        ];
        for (text, want) in cases {
            let v = parse_json(text).expect(text);
            assert_eq!(v["a"], want, "{text}");
        }
        assert!(matches!(
            without_lone_surrogates(r#"{"a":"ok \ud83d\ude00"}"#),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn deep_values_are_kept_as_their_json_text() {
        let depth = 1000;
        let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let text = format!(r#"{{"type":"user","deep":{deep},"after":true}}"#);
        assert!(serde_json::from_str::<Value>(&text).is_err());
        let v = parse_json(&text).expect("lenient");
        assert_eq!(v["after"], true);
        let mut at = &v["deep"];
        for _ in 1..VIEW_DEPTH {
            at = &at[0];
        }
        let kept = at.as_str().expect("JSON text below the view's depth");
        assert_eq!(kept.len(), 2 * (depth - VIEW_DEPTH + 1) + 1);
        // The view serializes to valid JSON.
        let out = serde_json::to_string(&v).expect("serialize");
        assert!(serde_json::from_str::<Value>(&out).is_ok());
    }

    #[test]
    fn not_json_stays_none() {
        for text in ["", "{", "{\"a\":1}{", "[1,]", r#"{"a":"\ud83d"#] {
            assert!(parse_json(text).is_none(), "{text}");
        }
    }
}
