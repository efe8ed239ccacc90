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
fn next_special(bytes: &[u8], from: usize) -> usize {
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
