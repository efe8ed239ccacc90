//! Re-recording a stored line with some of its top-level fields changed, on its own bytes.
//!
//! `fork` writes the source's messages with a new `sessionId`, recomputed `parentUuid`s and
//! a few other keys changed. Serializing the in-memory view would also change what the view
//! cannot hold as written: a lone surrogate escape (`"\ud83d"`, U+FFFD in the view), a value
//! nested deeper than [`super::lenient::VIEW_DEPTH`] (a string of its JSON text in the view),
//! a number's spelling. [`patch_object`] keeps the stored bytes of every field whose value
//! the new record leaves as the stored line had it, and serializes only the others.

use serde_json::{Map, Value};

/// One top-level member of a JSON object as written: the key's string token (quotes
/// included) and the value's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Member<'a> {
    key: &'a [u8],
    value: &'a [u8],
}

/// The top-level members of a JSON object text, as written, or `None` when `raw` is not
/// one object. Nested values are skipped by counting brackets outside strings, without
/// recursion, so any depth is fine; the values themselves are not validated (the line was
/// parsed before, see [`super::parse_record`]).
fn members(raw: &[u8]) -> Option<Vec<Member<'_>>> {
    let text = super::parse_text(raw)?.as_bytes();
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let skip_ws = |mut i: usize| {
        while i < text.len() && ws(text[i]) {
            i += 1;
        }
        i
    };
    // The index just past the string token starting at `i` (a `"`).
    let string_end = |mut i: usize| -> Option<usize> {
        i += 1;
        while i < text.len() {
            match text[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    };
    let mut out = Vec::new();
    let mut i = skip_ws(0);
    if text.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(i + 1);
    if text.get(i) == Some(&b'}') {
        return (skip_ws(i + 1) == text.len()).then_some(out);
    }
    loop {
        if text.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(i)?;
        let key = &text[i..key_end];
        i = skip_ws(key_end);
        if text.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(i + 1);
        let mut depth = 0usize;
        i = start;
        loop {
            match *text.get(i)? {
                b'"' => {
                    i = string_end(i)?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth > 0 => depth -= 1,
                b',' | b'}' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let mut end = i;
        while end > start && ws(text[end - 1]) {
            end -= 1;
        }
        out.push(Member {
            key,
            value: &text[start..end],
        });
        if text[i] == b'}' {
            return (skip_ws(i + 1) == text.len()).then_some(out);
        }
        i = skip_ws(i + 1);
    }
}

/// `record` serialized as compact JSON with its keys in its order, where every member whose
/// key and value the stored line `raw` has (read leniently, as resume read it) is written
/// with `raw`'s own bytes. `None` when `raw` is not a JSON object; the caller then
/// serializes `record` as it is.
pub fn patch_object(raw: &[u8], record: &Map<String, Value>) -> Option<Vec<u8>> {
    // The stored values as resume read them: nested in the whole line, so that values cut
    // at the view's depth compare equal to the record's.
    let Value::Object(view) = super::parse_record(raw)? else {
        return None;
    };
    let stored: Vec<(String, Member<'_>, &Value)> = members(raw)?
        .into_iter()
        .filter_map(|m| {
            let key = match super::parse_json(std::str::from_utf8(m.key).ok()?)? {
                Value::String(k) => k,
                _ => return None,
            };
            let value = view.get(&key)?;
            Some((key, m, value))
        })
        .collect();
    let mut out = Vec::with_capacity(raw.len() + 64);
    out.push(b'{');
    for (n, (key, value)) in record.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        // The last member with the key is the one JSON.parse keeps.
        match stored.iter().rev().find(|(k, _, _)| k == key) {
            Some((_, m, v)) if *v == value => {
                out.extend_from_slice(m.key);
                out.push(b':');
                out.extend_from_slice(m.value);
            }
            Some((_, m, _)) => {
                out.extend_from_slice(m.key);
                out.push(b':');
                out.extend(serde_json::to_vec(value).ok()?);
            }
            None => {
                out.extend(serde_json::to_vec(key).ok()?);
                out.push(b':');
                out.extend(serde_json::to_vec(value).ok()?);
            }
        }
    }
    out.push(b'}');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patched(raw: &str, record: Value) -> String {
        let Value::Object(map) = record else {
            panic!("an object")
        };
        String::from_utf8(patch_object(raw.as_bytes(), &map).expect("patched")).expect("utf-8")
    }

    #[test]
    fn members_are_split_as_written_at_any_depth() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let raw = format!(r#" {{ "a" : "x,}}\"\ud83d" , "b":{deep},"c":{{"d":[1,{{}}]}} }} "#);
        let got = members(raw.as_bytes()).expect("members");
        let text: Vec<(&str, &str)> = got
            .iter()
            .map(|m| {
                (
                    std::str::from_utf8(m.key).unwrap(),
                    std::str::from_utf8(m.value).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            text,
            [
                (r#""a""#, r#""x,}\"\ud83d""#),
                (r#""b""#, deep.as_str()),
                (r#""c""#, r#"{"d":[1,{}]}"#)
            ]
        );
        assert_eq!(members(b"{}"), Some(vec![]));
        for bad in ["[1]", "{", r#"{"a"}"#, r#"{"a":1"#, r#"{"a":1} x"#, ""] {
            assert_eq!(members(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn unchanged_values_keep_their_bytes_and_changed_ones_are_serialized() {
        let raw = r#"{"parentUuid":"p","type":"user","message":{"content":"cut \ud83d"},"n":1.0,"sessionId":"old","slug":"s"}"#;
        let view = crate::jsonl::parse_record(raw.as_bytes()).expect("view");
        let mut record = view.as_object().expect("object").clone();
        record.insert("parentUuid".into(), Value::Null);
        record.insert("sessionId".into(), Value::String("new".into()));
        record.shift_remove("slug");
        record.insert("requestSessionId".into(), Value::String("old".into()));
        assert_eq!(
            patched(raw, Value::Object(record)),
            r#"{"parentUuid":null,"type":"user","message":{"content":"cut \ud83d"},"n":1.0,"sessionId":"new","requestSessionId":"old"}"#
        );
    }

    #[test]
    fn the_record_key_order_is_kept() {
        let raw = r#"{"b":2,"a":1}"#;
        assert_eq!(
            patched(raw, serde_json::json!({"a": 1, "b": 2})),
            r#"{"a":1,"b":2}"#
        );
    }
}
