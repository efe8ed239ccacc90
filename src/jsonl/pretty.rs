//! Pretty JSON written by hand: the bytes `serde_json::to_writer_pretty` writes, faster.
//! serde_json looks every byte of a string up in its escape table one at a time, a sixth
//! of `messages --json` and of `resume --api`; here strings are scanned eight bytes at a
//! time and copied in runs between the characters that need an escape. The tests hold the
//! bytes equal to serde_json's.

use serde_json::Value;

/// A pretty-JSON writer into a buffer, for values and for objects a caller spells out.
pub struct Pretty<'a> {
    out: &'a mut Vec<u8>,
    indent: usize,
}

impl<'a> Pretty<'a> {
    /// A writer appending to `out`, at the top level.
    pub fn new(out: &'a mut Vec<u8>) -> Pretty<'a> {
        Pretty { out, indent: 0 }
    }

    /// Writes `value` as serde_json's pretty printer does at this indentation.
    pub fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(b) => self
                .out
                .extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Number(n) => {
                serde_json::to_writer(&mut *self.out, n).expect("writing to a Vec cannot fail");
            }
            Value::String(s) => string(self.out, s),
            Value::Array(items) => {
                if items.is_empty() {
                    self.out.extend_from_slice(b"[]");
                    return;
                }
                self.out.push(b'[');
                self.indent += 1;
                for (i, item) in items.iter().enumerate() {
                    self.next_line(i == 0);
                    self.value(item);
                }
                self.close(b']');
            }
            Value::Object(members) => {
                if members.is_empty() {
                    self.out.extend_from_slice(b"{}");
                    return;
                }
                self.out.push(b'{');
                self.indent += 1;
                for (i, (key, member)) in members.iter().enumerate() {
                    self.next_line(i == 0);
                    string(self.out, key);
                    self.out.extend_from_slice(b": ");
                    self.value(member);
                }
                self.close(b'}');
            }
        }
    }

    /// Writes the JSON text `json` as [`Pretty::value`] writes the value serde_json parses
    /// from it, re-indenting the text instead of building the value. That holds only for
    /// text the parse would give back unchanged, so `false` is returned, with nothing
    /// written, for text holding anything else: an escape serde_json writes another way
    /// (`\/`, `\u00e9`, upper-case hex), a number other than an integer of at most 18
    /// digits, a key twice in one object, nesting deeper than [`TEXT_DEPTH`], or what is
    /// not JSON at all. The caller then parses the text and writes the value.
    pub fn json_text(&mut self, json: &str) -> bool {
        let mark = self.out.len();
        let mut text = Reindent {
            json: json.as_bytes(),
            at: 0,
            out: &mut *self.out,
            indent: self.indent,
        };
        let whole = text.value(0).is_some() && {
            text.skip_space();
            text.at == json.len()
        };
        if !whole {
            self.out.truncate(mark);
        }
        whole
    }

    /// Opens an array or object (`[` or `{`) whose items the caller writes, each after
    /// [`Pretty::item`] or [`Pretty::key`]. It must have at least one.
    pub fn open(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.indent += 1;
    }

    /// Starts the next item of an open array (`first` for its first).
    pub fn item(&mut self, first: bool) {
        self.next_line(first);
    }

    /// Starts the member `key` of an open object (`first` for its first); its value follows.
    pub fn key(&mut self, first: bool, key: &str) {
        self.next_line(first);
        string(self.out, key);
        self.out.extend_from_slice(b": ");
    }

    /// Writes a string value.
    pub fn string(&mut self, text: &str) {
        string(self.out, text);
    }

    /// Closes what [`Pretty::open`] opened (`]` or `}`).
    pub fn close(&mut self, bracket: u8) {
        self.indent -= 1;
        self.out.push(b'\n');
        self.pad();
        self.out.push(bracket);
    }

    /// Writes what is buffered to `sink` and empties the buffer once it holds `at_least`
    /// bytes: a long output then goes out in pieces through one small buffer instead of
    /// growing a buffer as large as itself (fresh pages, copies on every doubling).
    ///
    /// # Errors
    /// Fails as `sink` fails.
    pub fn drain_to(
        &mut self,
        sink: &mut impl std::io::Write,
        at_least: usize,
    ) -> std::io::Result<()> {
        if self.out.len() >= at_least {
            sink.write_all(self.out)?;
            self.out.clear();
        }
        Ok(())
    }

    fn next_line(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
        self.out.push(b'\n');
        self.pad();
    }

    fn pad(&mut self) {
        for _ in 0..self.indent {
            self.out.extend_from_slice(b"  ");
        }
    }
}

/// How deep [`Pretty::json_text`] follows arrays and objects: the depth up to which
/// [`super::lenient::parse_json`] builds values as serde_json does.
pub const TEXT_DEPTH: usize = super::lenient::VIEW_DEPTH;

/// The state of [`Pretty::json_text`]: where it is in the text, and the output.
struct Reindent<'j, 'o> {
    json: &'j [u8],
    at: usize,
    out: &'o mut Vec<u8>,
    indent: usize,
}

impl Reindent<'_, '_> {
    /// Copies the value at `at` (after white space), `depth` levels down; `None` at
    /// anything [`Pretty::json_text`] does not copy.
    fn value(&mut self, depth: usize) -> Option<()> {
        self.skip_space();
        match *self.json.get(self.at)? {
            b'"' => self.string(),
            b'[' => self.members(depth, b']'),
            b'{' => self.members(depth, b'}'),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.integer(),
        }
    }

    /// An array or object, opened at `at` and closed by `close`.
    fn members(&mut self, depth: usize, close: u8) -> Option<()> {
        if depth >= TEXT_DEPTH {
            return None;
        }
        let open = self.json[self.at];
        self.at += 1;
        self.skip_space();
        if self.json.get(self.at) == Some(&close) {
            self.at += 1;
            self.out.extend_from_slice(&[open, close]);
            return Some(());
        }
        self.out.push(open);
        self.indent += 1;
        // The keys seen so far in this object, as written: with canonical escapes, equal
        // text is an equal key, and a key twice is a value serde_json replaces. Compared
        // one by one, so an object with more than `MAX_KEYS` is left to the parse.
        const MAX_KEYS: usize = 64;
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut first = true;
        loop {
            if !first {
                self.out.push(b',');
            }
            first = false;
            self.out.push(b'\n');
            self.pad();
            if close == b'}' {
                self.skip_space();
                let start = self.at;
                if self.json.get(start) != Some(&b'"') {
                    return None;
                }
                self.string()?;
                let key = &self.json[start..self.at];
                if keys.len() == MAX_KEYS || keys.contains(&key) {
                    return None;
                }
                keys.push(key);
                self.skip_space();
                if self.json.get(self.at) != Some(&b':') {
                    return None;
                }
                self.at += 1;
                self.out.extend_from_slice(b": ");
            }
            self.value(depth + 1)?;
            self.skip_space();
            match *self.json.get(self.at)? {
                b',' => self.at += 1,
                b if b == close => break,
                _ => return None,
            }
        }
        self.at += 1;
        self.indent -= 1;
        self.out.push(b'\n');
        self.pad();
        self.out.push(close);
        Some(())
    }

    /// A string whose escapes are all serde_json's own (see [`string`]), copied as written.
    fn string(&mut self) -> Option<()> {
        let start = self.at;
        let mut i = start + 1;
        loop {
            i = next_special(self.json, i);
            match *self.json.get(i)? {
                b'"' => break,
                b'\\' => {
                    let canonical = match *self.json.get(i + 1)? {
                        b'"' | b'\\' | b'b' | b't' | b'n' | b'f' | b'r' => 2,
                        b'u' => match self.json.get(i + 2..i + 6)? {
                            [b'0', b'0', hi @ (b'0' | b'1'), lo @ (b'0'..=b'9' | b'a'..=b'f')]
                                if !matches!(
                                    (hi, lo),
                                    (b'0', b'8' | b'9' | b'a' | b'c' | b'd')
                                ) =>
                            {
                                6
                            }
                            _ => return None,
                        },
                        _ => return None,
                    };
                    i += canonical;
                }
                // A raw control character: not JSON.
                _ => return None,
            }
        }
        self.at = i + 1;
        self.out.extend_from_slice(&self.json[start..self.at]);
        Some(())
    }

    /// An integer of at most 18 digits, which serde_json reads as an `i64` or `u64` and
    /// writes back as it was (`-0` is read as a float).
    fn integer(&mut self) -> Option<()> {
        let start = self.at;
        let digits_at = start + usize::from(self.json[start] == b'-');
        let digits = self.json[digits_at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let leading_zero = self.json.get(digits_at) == Some(&b'0');
        let ok = (1..=18).contains(&digits)
            && !(leading_zero && (digits > 1 || digits_at > start))
            && !matches!(self.json.get(digits_at + digits), Some(b'.' | b'e' | b'E'));
        if !ok {
            return None;
        }
        self.at = digits_at + digits;
        self.out.extend_from_slice(&self.json[start..self.at]);
        Some(())
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        if !self.json[self.at..].starts_with(word) {
            return None;
        }
        self.at += word.len();
        self.out.extend_from_slice(word);
        Some(())
    }

    fn skip_space(&mut self) {
        while matches!(self.json.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn pad(&mut self) {
        for _ in 0..self.indent {
            self.out.extend_from_slice(b"  ");
        }
    }
}

/// A JSON string with serde_json's escapes: `\"`, `\\`, the short forms of backspace, tab,
/// newline, form feed and carriage return, and `\u00xx` (lower-case hex) for the other
/// control characters.
fn string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0;
    let mut at = next_special(bytes, 0);
    while at < bytes.len() {
        out.extend_from_slice(&bytes[copied..at]);
        match bytes[at] {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0C => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            control => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(control >> 4)]);
                out.push(HEX[usize::from(control & 0xF)]);
            }
        }
        copied = at + 1;
        at = next_special(bytes, copied);
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// The first byte at or after `from` that JSON escapes (`"`, `\` or below 0x20), or the
/// length. A word may be flagged for nothing (a borrow between bytes); its bytes are then
/// looked at one by one, so the answer is exact.
pub fn next_special(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let special = |b: &u8| *b < 0x20 || *b == b'"' || *b == b'\\';
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let flagged = zero_byte(w ^ (ONES * u64::from(b'"')))
            | zero_byte(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS);
        if flagged != 0 {
            if let Some(n) = chunk.iter().position(special) {
                return i + n;
            }
        }
        i += 8;
    }
    bytes[i.min(bytes.len())..]
        .iter()
        .position(special)
        .map_or(bytes.len(), |n| i + n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(value: &Value) -> String {
        let mut out = Vec::new();
        Pretty::new(&mut out).value(value);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn every_character_below_0x80_is_written_as_serde_json_writes_it() {
        for c in 0u8..0x80 {
            for text in [
                format!("{}", c as char),
                format!("ab{}cdefghijklmnop", c as char),
                format!("abcdefghijklmno{}", c as char),
            ] {
                let v = Value::String(text);
                assert_eq!(ours(&v), serde_json::to_string_pretty(&v).expect("json"));
            }
        }
    }

    #[test]
    fn values_are_the_same_bytes_as_serde_json() {
        let cases = [
            json!(null),
            json!([]),
            json!({}),
            json!([[], {}, [[]], {"a": {}}]),
            json!({"type": "user", "n": -3, "f": 1.0, "g": 2.5e-300, "big": u64::MAX,
                   "s": "tab\there \"quoted\" back\\slash \u{1} é 😀 \u{7f}\r\n",
                   "content": [{"type": "text", "text": "x"}, true, false, null],
                   "k\"ey\n": "v"}),
        ];
        for v in &cases {
            assert_eq!(
                ours(v),
                serde_json::to_string_pretty(v).expect("json"),
                "{v}"
            );
        }
    }

    /// What [`Pretty::json_text`] writes for `text` at one level of indentation, if it
    /// copies it.
    fn copied(text: &str) -> Option<String> {
        let mut out = Vec::new();
        let mut p = Pretty::new(&mut out);
        p.open(b'[');
        p.item(true);
        let copied = p.json_text(text);
        String::from_utf8(out).ok().filter(|_| copied)
    }

    /// What [`Pretty::value`] writes for the value serde_json parses from `text`.
    fn parsed(text: &str) -> String {
        let v: Value = serde_json::from_str(text).expect("JSON");
        let mut out = Vec::new();
        let mut p = Pretty::new(&mut out);
        p.open(b'[');
        p.item(true);
        p.value(&v);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn json_text_is_copied_as_the_parsed_value_is_written() {
        let texts = [
            r#"{"role":"user","content":[{"type":"text","text":"a \"b\" \\ \n\t\r\b\f \u0001\u001f é 😀"},{"type":"tool_use","id":"t","input":{}},[],{"n":[0,-1,123456789012345678,-5]},true,false,null]}"#,
            " { \"a\" : [ 1 , { } , [ ] ] ,\n\t\"b\":\"\" } ",
            r#""just a string""#,
            "0",
            "[]",
        ];
        for text in texts {
            assert_eq!(copied(text), Some(parsed(text)), "{text}");
        }
        let deep = format!("{}{}", "[".repeat(TEXT_DEPTH), "]".repeat(TEXT_DEPTH));
        assert_eq!(copied(&deep), Some(parsed(&deep)));
    }

    #[test]
    fn json_text_the_parse_would_change_is_left_to_the_caller() {
        let deeper = format!(
            "{}{}",
            "[".repeat(TEXT_DEPTH + 1),
            "]".repeat(TEXT_DEPTH + 1)
        );
        let many_keys = format!(
            "{{{}}}",
            (0..65)
                .map(|i| format!("\"k{i}\":{i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let texts = [
            r#""a\/b""#,
            r#""\u00e9""#,
            r#""\u001F""#,
            r#""\u000a""#,
            r#""\ud83d""#,
            "1.5",
            "1e3",
            "-0",
            "1234567890123456789",
            r#"{"a":1,"a":2}"#,
            "[1,]",
            "[1 2]",
            "{\"a\" 1}",
            "\"tab\there\"",
            "nul",
            "[1]x",
            "",
            &deeper,
            &many_keys,
        ];
        for text in texts {
            let mut out = b"kept".to_vec();
            assert!(!Pretty::new(&mut out).json_text(text), "{text}");
            assert_eq!(out, b"kept", "{text}: nothing written");
        }
    }

    #[test]
    fn a_caller_spelled_object_matches_serde_json() {
        let mut out = Vec::new();
        let mut p = Pretty::new(&mut out);
        p.open(b'[');
        p.item(true);
        p.open(b'{');
        p.key(true, "a");
        p.string("x\ny");
        p.key(false, "b");
        p.value(&json!({"c": [1]}));
        p.close(b'}');
        p.close(b']');
        let want =
            serde_json::to_string_pretty(&json!([{"a": "x\ny", "b": {"c": [1]}}])).expect("json");
        assert_eq!(String::from_utf8(out).expect("UTF-8"), want);
    }
}
