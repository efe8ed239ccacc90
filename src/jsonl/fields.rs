//! The fields of a stored line, found without decoding it. A reader that needs a
//! few short fields of a long line (the SDK's chain reads ten; a tool result's line is
//! mostly its `toolUseResult`) skips the other values at memory speed, where a JSON parser
//! would stop at every escape of every string it skips.

/// The `(key, value)` spans of the JSON object `json`, in order: the key's bytes between
/// its quotes and the value's bytes as written. `json` must be valid JSON (import found the
/// line to be; nothing here checks it again). `None` when `json` is not an object, or has
/// a key with an escape: the caller parses the line instead.
#[cfg(test)]
fn top_level_fields(json: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut fields = Vec::new();
    object_fields(json, 0, |key, start| {
        let end = value_end(json, start)?;
        fields.push((key, &json[start..end]));
        Some(end)
    })?;
    Some(fields)
}

/// Walks the fields of the object that starts at `start` (after white space): `field` is
/// called with each key's bytes and where its value starts, and returns where the value
/// ends. Returns where the object ends (one past its `}`); `None` when there is no object
/// there, a key has an escape, or `field` gives up.
fn object_fields<'a>(
    json: &'a [u8],
    start: usize,
    mut field: impl FnMut(&'a [u8], usize) -> Option<usize>,
) -> Option<usize> {
    members(json, start, b'{', b'}', |i| {
        if json.get(i) != Some(&b'"') {
            return None;
        }
        let close = string_close(json, i)?;
        let key = &json[i + 1..close];
        if key.contains(&b'\\') {
            return None;
        }
        let colon = skip_space(json, close + 1);
        if json.get(colon) != Some(&b':') {
            return None;
        }
        field(key, skip_space(json, colon + 1))
    })
}

/// Walks the items of the array that starts at `start` (valid JSON): `item` is called where
/// each one starts and returns where it ends. Returns where the array ends (one past its
/// `]`); `None` when there is no array there or `item` gives up.
pub(crate) fn array_items_at(
    json: &[u8],
    start: usize,
    item: impl FnMut(usize) -> Option<usize>,
) -> Option<usize> {
    members(json, start, b'[', b']', item)
}

/// Walks the members of the object or array that starts at `start` (`open` ... `close`):
/// `member` is called where each one starts and returns where it ends. Returns one past
/// the `close`; `None` when `json` has no `open` there or a member cannot be read.
fn members(
    json: &[u8],
    start: usize,
    open: u8,
    close: u8,
    mut member: impl FnMut(usize) -> Option<usize>,
) -> Option<usize> {
    let mut i = skip_space(json, start);
    if json.get(i) != Some(&open) {
        return None;
    }
    i = skip_space(json, i + 1);
    if json.get(i) == Some(&close) {
        return Some(i + 1);
    }
    loop {
        i = skip_space(json, member(i)?);
        match json.get(i) {
            Some(b',') => i = skip_space(json, i + 1),
            Some(&b) if b == close => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The values of `keys` in the JSON object `json` (valid JSON), as written: `None` when
/// [`object_fields`] cannot take it apart or one of `keys` is there twice (a parse into
/// a struct rejects that), for the caller to parse it in full.
pub(crate) fn pick<'a, const N: usize>(
    json: &'a [u8],
    keys: [&[u8]; N],
) -> Option<[Option<&'a [u8]>; N]> {
    pick_at(json, 0, keys, None).map(|(values, _)| values)
}

/// Reads the value that starts at the given position and returns where it ends: how
/// [`pick_at`] lets its caller take one value apart in the same pass.
pub(crate) type Reader<'r> = &'r mut dyn FnMut(usize) -> Option<usize>;

/// [`pick`] on the object that starts at `start`, also returning where it ends. With
/// `deep = Some((k, read))`, the value of `keys[k]` is read by `read` instead of being
/// skipped: a caller that needs fields of a nested value (a record's `message`, its
/// `content` blocks) scans each byte once instead of once per level.
pub(crate) fn pick_at<'a, const N: usize>(
    json: &'a [u8],
    start: usize,
    keys: [&[u8]; N],
    mut deep: Option<(usize, Reader<'_>)>,
) -> Option<([Option<&'a [u8]>; N], usize)> {
    let mut values = [None; N];
    let end = object_fields(json, start, |key, at| {
        let k = keys.iter().position(|k| *k == key);
        let end = match (k, deep.as_mut()) {
            (Some(k), Some((d, read))) if k == *d => read(at)?,
            _ => value_end(json, at)?,
        };
        if let Some(k) = k {
            if values[k].replace(&json[at..end]).is_some() {
                return None;
            }
        }
        Some(end)
    })?;
    Some((values, end))
}

fn skip_space(json: &[u8], mut i: usize) -> usize {
    while json
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// Where the value starting at `start` ends (one past its last byte).
pub(crate) fn value_end(json: &[u8], start: usize) -> Option<usize> {
    match json.get(start)? {
        b'"' => Some(string_close(json, start)? + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match json.get(i)? {
                    b'"' => i = string_close(json, i)?,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => Some(
            json[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .map_or(json.len(), |n| start + n),
        ),
    }
}

/// The closing quote of the string whose opening quote is at `open`: the first quote
/// after it preceded by an even number of backslashes.
fn string_close(json: &[u8], open: usize) -> Option<usize> {
    let mut from = open + 1;
    loop {
        let quote = find_quote(json, from)?;
        let backslashes = json[from..quote]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return Some(quote);
        }
        from = quote + 1;
    }
}

/// The first `"` at or after `from`. memchr compares 32 bytes an instruction where the
/// CPU has AVX2: tool output makes most of a transcript's bytes long strings.
fn find_quote(json: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(b'"', json.get(from..)?).map(|n| from + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array_items(json: &[u8]) -> Option<Vec<&[u8]>> {
        let mut items = Vec::new();
        array_items_at(json, 0, |i| {
            let end = value_end(json, i)?;
            items.push(&json[i..end]);
            Some(end)
        })?;
        Some(items)
    }

    fn fields(json: &str) -> Option<Vec<(String, String)>> {
        top_level_fields(json.as_bytes()).map(|f| {
            f.into_iter()
                .map(|(k, v)| {
                    (
                        String::from_utf8(k.to_vec()).expect("utf-8"),
                        String::from_utf8(v.to_vec()).expect("utf-8"),
                    )
                })
                .collect()
        })
    }

    #[test]
    fn values_of_every_kind_are_spanned_exactly() {
        let got = fields(
            r#" { "a" : 1 , "b":"x\"y\\","c":{"d":["}",{"e":"\\\""}]},"f":[],"g":null,"h":-2.5e3,"i":true}"#,
        )
        .expect("an object");
        let want = [
            ("a", "1"),
            ("b", r#""x\"y\\""#),
            ("c", r#"{"d":["}",{"e":"\\\""}]}"#),
            ("f", "[]"),
            ("g", "null"),
            ("h", "-2.5e3"),
            ("i", "true"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(fields("{}"), Some(Vec::new()));
    }

    #[test]
    fn arrays_and_picked_keys() {
        let items = array_items(br#"[ {"a":[1,"]"]} ,"x",3,[]]"#).expect("an array");
        assert_eq!(items, [&br#"{"a":[1,"]"]}"#[..], br#""x""#, b"3", b"[]"]);
        assert_eq!(array_items(b"[]"), Some(Vec::new()));
        assert_eq!(array_items(b"{}"), None);
        let json =
            br#"{"m":{"id":"x","content":[{"type":"a","id":1},"s",{"tool_use_id":"t"}]},"z":[2]}"#;
        let mut kinds = Vec::new();
        let mut read_content = |at: usize| {
            array_items_at(json, at, |item| {
                let (found, end) = pick_at(json, item, [b"type", b"tool_use_id"], None)
                    .unwrap_or(([None, None], value_end(json, item)?));
                kinds.push(found);
                Some(end)
            })
        };
        let mut read_message = |at: usize| {
            let ([id, _], end) =
                pick_at(json, at, [b"id", b"content"], Some((1, &mut read_content)))?;
            assert_eq!(id, Some(&br#""x""#[..]));
            Some(end)
        };
        let ([m, z], end) =
            pick_at(json, 0, [b"m", b"z"], Some((0, &mut read_message))).expect("picked");
        assert_eq!(end, json.len());
        assert_eq!(z, Some(&b"[2]"[..]));
        assert_eq!(m, Some(&json[5..json.len() - 9]));
        assert_eq!(
            kinds,
            [
                [Some(&br#""a""#[..]), None],
                [None, None],
                [None, Some(&br#""t""#[..])]
            ]
        );
        let [a, c] = pick(br#"{"a":1,"b":{"a":2},"c":"3"}"#, [b"a", b"c"]).expect("picked");
        assert_eq!((a, c), (Some(&b"1"[..]), Some(&br#""3""#[..])));
        assert_eq!(pick(br#"{"a":1,"b":2}"#, [b"z"]), Some([None]));
        assert_eq!(pick(br#"{"a":1,"a":2}"#, [b"a"]), None);
        assert_eq!(pick(br#"{"a":1,"a":2}"#, [b"b"]), Some([None]));
    }

    #[test]
    fn what_it_cannot_take_apart_is_left_to_the_parser() {
        assert_eq!(fields(r#"{"t\u0079pe":"user"}"#), None);
        assert_eq!(fields("[1]"), None);
        assert_eq!(fields(r#""s""#), None);
    }

    #[test]
    fn quotes_are_found_across_word_boundaries() {
        for pad in 0..20 {
            let text = format!(r#"{{"k":"{}\\\\","z":{}}}"#, "a".repeat(pad), pad);
            let got = fields(&text).expect("an object");
            assert_eq!(got[1].1, pad.to_string(), "{text}");
            assert_eq!(find_quote(text.as_bytes(), 6), Some(6 + pad + 4), "{text}");
        }
    }
}
