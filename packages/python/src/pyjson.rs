//! JSON text straight into Python objects (dict, list, str, int, float, bool, None), in one
//! pass over the bytes. Building each message as a `serde_json::Value` and then again as
//! Python objects was most of `Store.messages()`; Python's own `json.loads` was most of
//! `SessionStore.load()` (it reads the whole text as one `str`, four bytes a character as
//! soon as one emoji is in it, and builds each string again from that).
//!
//! The parser takes only plain JSON and gives up on anything else ([`build`] answers
//! `None`): escapes that are lone surrogates, `NaN`/`Infinity`, nesting deeper than
//! [`MAX_DEPTH`], numbers it does not read exactly as [`Numbers`] asks, a string that is not
//! UTF-8, malformed text. The
//! caller then reads the text the way it did before, so the answer never depends on which
//! path built it. Objects keep their key order, and a repeated key keeps its first place
//! with its last value, as both `json.loads` and the library's `preserve_order` maps do.

use pyo3::exceptions::PyUnicodeDecodeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// Nesting levels read here; deeper text is left to the caller's reading.
pub const MAX_DEPTH: usize = 100;

/// Whose reading of numbers the objects must equal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Numbers {
    /// The library's (`serde_json::Value`, as converted to Python for every other answer):
    /// an integer that fits `u64` or `i64` is an int, any other number the float
    /// `serde_json` reads, `-0` included.
    Library,
    /// Python's `json.loads`: every integer an int (exact), every other number the
    /// correctly rounded float (Rust's `str::parse::<f64>` is correctly rounded too).
    Python,
}

/// The Python objects of `text`, or `None` when it is not plain JSON as the module docs say
/// (the caller falls back to its full reading). The text need not be valid UTF-8: each
/// string is checked as Python builds it, and anything else must be ASCII to parse.
///
/// # Errors
/// Only a Python error (out of memory).
pub fn build<'py>(
    py: Python<'py>,
    text: &[u8],
    numbers: Numbers,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut parser = Parser {
        py,
        text,
        at: 0,
        numbers,
        unescaped: Vec::new(),
        keys: KeyCache::default(),
    };
    let value = match parser.value(0)? {
        Some(value) => value,
        None => return Ok(None),
    };
    parser.skip_space();
    Ok((parser.at == text.len()).then_some(value))
}

struct Parser<'py, 't> {
    py: Python<'py>,
    text: &'t [u8],
    at: usize,
    numbers: Numbers,
    /// The bytes of the string being unescaped (one buffer for all of them).
    unescaped: Vec<u8>,
    keys: KeyCache<'py>,
}

/// A parse step: `Ok(None)` gives up (see [`build`]), `Err` is a Python error.
type Step<T> = PyResult<Option<T>>;

impl<'py> Parser<'py, '_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Step<Bound<'py, PyAny>> {
        self.skip_space();
        let py = self.py;
        Ok(match self.peek() {
            Some(b'{') if depth < MAX_DEPTH => {
                self.at += 1;
                self.object(depth + 1)?.map(Bound::into_any)
            }
            Some(b'[') if depth < MAX_DEPTH => {
                self.at += 1;
                self.array(depth + 1)?.map(Bound::into_any)
            }
            Some(b'"') => {
                self.at += 1;
                self.string()?.map(Bound::into_any)
            }
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') if self.literal("true") => Some(PyBool::new(py, true).to_owned().into_any()),
            Some(b'f') if self.literal("false") => {
                Some(PyBool::new(py, false).to_owned().into_any())
            }
            Some(b'n') if self.literal("null") => Some(py.None().into_bound(py)),
            _ => None,
        })
    }

    fn literal(&mut self, word: &str) -> bool {
        let found = self.text[self.at..].starts_with(word.as_bytes());
        if found {
            self.at += word.len();
        }
        found
    }

    /// After `{`.
    fn object(&mut self, depth: usize) -> Step<Bound<'py, PyDict>> {
        let dict = PyDict::new(self.py);
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Some(dict));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Ok(None);
            }
            self.at += 1;
            let Some(key) = self.key()? else {
                return Ok(None);
            };
            self.skip_space();
            if self.peek() != Some(b':') {
                return Ok(None);
            }
            self.at += 1;
            let Some(value) = self.value(depth)? else {
                return Ok(None);
            };
            dict.set_item(key, value)?;
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Some(dict));
                }
                _ => return Ok(None),
            }
        }
    }

    /// After a key's opening `"`: the key, the same object each time the text repeats a
    /// short plain one (see [`KeyCache`]).
    fn key(&mut self) -> Step<Bound<'py, PyString>> {
        let start = self.at;
        let end = plain_run(self.text, start);
        if self.text.get(end) == Some(&b'"') {
            let key = self.keys.get(self.py, &self.text[start..end]);
            if let Some(key) = key? {
                self.at = end + 1;
                return Ok(Some(key));
            }
        }
        self.string()
    }

    /// After `[`.
    fn array(&mut self, depth: usize) -> Step<Bound<'py, PyList>> {
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Some(PyList::empty(self.py)));
        }
        loop {
            let Some(item) = self.value(depth)? else {
                return Ok(None);
            };
            items.push(item);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Some(PyList::new(self.py, items)?));
                }
                _ => return Ok(None),
            }
        }
    }

    /// After the opening `"`: the text up to the closing one, unescaped. Control
    /// characters must be escaped; an escaped lone surrogate gives up (`json.loads` keeps
    /// it, the library replaces it, and a Rust string holds neither), and so does a string
    /// that is not UTF-8.
    fn string(&mut self) -> Step<Bound<'py, PyString>> {
        let bytes = self.text;
        let start = self.at;
        let mut i = plain_run(bytes, start);
        if bytes.get(i) == Some(&b'"') {
            self.at = i + 1;
            return py_str(self.py, &bytes[start..i]);
        }
        let out = &mut self.unescaped;
        out.clear();
        out.extend_from_slice(&bytes[start..i]);
        loop {
            match bytes.get(i) {
                Some(b'"') => {
                    self.at = i + 1;
                    return py_str(self.py, out);
                }
                Some(b'\\') => {
                    let Some(next) = unescape(bytes, i + 1, out) else {
                        return Ok(None);
                    };
                    let run = plain_run(bytes, next);
                    out.extend_from_slice(&bytes[next..run]);
                    i = run;
                }
                // The end of the text, or a control character.
                _ => return Ok(None),
            }
        }
    }

    /// A number as [`Numbers`] asks; gives up on text that is not JSON's number grammar.
    fn number(&mut self) -> Step<Bound<'py, PyAny>> {
        let bytes = self.text;
        let start = self.at;
        let mut i = start;
        let digits = |i: &mut usize| {
            let from = *i;
            while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - from
        };
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        let n = digits(&mut i);
        if n == 0 || (n > 1 && bytes[int_start] == b'0') {
            return Ok(None);
        }
        let mut integer = true;
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            if digits(&mut i) == 0 {
                return Ok(None);
            }
            integer = false;
        }
        if let Some(b'e' | b'E') = bytes.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = bytes.get(i) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                return Ok(None);
            }
            integer = false;
        }
        self.at = i;
        // Only ASCII signs, digits, `.` and `e` were read.
        let Ok(token) = std::str::from_utf8(&bytes[start..i]) else {
            return Ok(None);
        };
        let py = self.py;
        if integer && token != "-0" {
            if let Ok(v) = token.parse::<i64>() {
                return Ok(Some(v.into_pyobject(py)?.into_any()));
            }
            if let Ok(v) = token.parse::<u64>() {
                return Ok(Some(v.into_pyobject(py)?.into_any()));
            }
        }
        Ok(match self.numbers {
            Numbers::Python if integer => match token.parse::<i128>() {
                Ok(v) => Some(v.into_pyobject(py)?.into_any()),
                Err(_) => None,
            },
            Numbers::Python => token
                .parse::<f64>()
                .ok()
                .map(|v| PyFloat::new(py, v).into_any()),
            // Whatever serde_json makes of the token alone, as it would in the document.
            Numbers::Library => match serde_json::from_str::<Value>(token) {
                Ok(Value::Number(n)) => match n.as_f64() {
                    Some(v) if !n.is_i64() && !n.is_u64() => Some(PyFloat::new(py, v).into_any()),
                    _ => None,
                },
                _ => None,
            },
        })
    }
}

/// A Python str of UTF-8 bytes; `None` (give up) when they are not UTF-8. Python checks
/// them as it copies them, so the text is never checked beforehand as a whole.
fn py_str<'py>(py: Python<'py>, bytes: &[u8]) -> Step<Bound<'py, PyString>> {
    match PyString::from_bytes(py, bytes) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.is_instance_of::<PyUnicodeDecodeError>(py) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Keys made once per parse: a transcript repeats a few dozen keys (`type`, `uuid`,
/// `message`, `content`, …) tens of thousands of times, and a repeated key costs a lookup
/// instead of a new str, whose hash Python then computes again for the dict. `json.loads`
/// shares its keys the same way. Direct-mapped on the key's length and first and last
/// bytes; a collision just replaces the slot.
struct KeyCache<'py> {
    slots: Vec<Option<KeySlot<'py>>>,
}

/// A key's bytes and its str.
type KeySlot<'py> = (Box<[u8]>, Bound<'py, PyString>);

impl Default for KeyCache<'_> {
    fn default() -> Self {
        KeyCache {
            slots: (0..KEY_SLOTS).map(|_| None).collect(),
        }
    }
}

const KEY_SLOTS: usize = 256;
/// Longer keys are rare, and not worth comparing.
const KEY_MAX: usize = 32;

impl<'py> KeyCache<'py> {
    /// The str of a key's bytes (no escapes), or `None` when they are not UTF-8.
    fn get(&mut self, py: Python<'py>, bytes: &[u8]) -> Step<Bound<'py, PyString>> {
        let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
            return py_str(py, bytes);
        };
        if bytes.len() > KEY_MAX {
            return py_str(py, bytes);
        }
        let slot = (bytes.len() * 31 + usize::from(first) * 7 + usize::from(last)) % KEY_SLOTS;
        if let Some((held, key)) = &self.slots[slot] {
            if **held == *bytes {
                return Ok(Some(key.clone()));
            }
        }
        let key = py_str(py, bytes)?;
        if let Some(key) = &key {
            self.slots[slot] = Some((bytes.into(), key.clone()));
        }
        Ok(key)
    }
}

/// Where the run of string bytes from `at` that need no work ends: at a quote, a
/// backslash, a control character or the end (all ASCII, so a char boundary). The quote or
/// backslash is found with `memchr` (most of a transcript's bytes are in long strings);
/// the run is then checked for control characters in one pass the compiler vectorizes.
fn plain_run(bytes: &[u8], at: usize) -> usize {
    let rest = &bytes[at..];
    let end = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
    let run = &rest[..end];
    if run.iter().fold(false, |any, &b| any | (b < 0x20)) {
        return at + run.iter().position(|&b| b < 0x20).unwrap_or(end);
    }
    at + end
}

/// Appends the character an escape stands for (`at` is just after the backslash) to `out`
/// as UTF-8, and says where the text goes on; `None` for an unknown escape or a lone
/// surrogate.
fn unescape(bytes: &[u8], at: usize, out: &mut Vec<u8>) -> Option<usize> {
    let b = match bytes.get(at)? {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0C,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => {
            let unit = hex4(bytes, at + 1)?;
            let (code, next) = match unit {
                0xD800..=0xDBFF => {
                    if bytes.get(at + 5) != Some(&b'\\') || bytes.get(at + 6) != Some(&b'u') {
                        return None;
                    }
                    let low = hex4(bytes, at + 7)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code =
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    (code, at + 11)
                }
                0xDC00..=0xDFFF => return None,
                _ => (u32::from(unit), at + 5),
            };
            let c = char::from_u32(code)?;
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            return Some(next);
        }
        _ => return None,
    };
    out.push(b);
    Some(at + 1)
}

fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    let digits = bytes.get(at..at + 4)?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// Writes `value` as `json.dumps(value, ensure_ascii=False, separators=(",", ":"),
/// allow_nan=False)` does, UTF-8 encoded; `false` (with `out` partly written) for what it
/// leaves to `json.dumps`: any type but exact dict (with str keys), list, tuple, str, int,
/// float, bool and None; a str that is not valid Unicode (a lone surrogate); a float that
/// is not finite; nesting deeper than [`MAX_DEPTH`] (a cycle ends there too). Floats are
/// written by `float.__repr__`, as `json.dumps` writes them.
///
/// # Errors
/// Only a Python error from `repr`.
pub fn write(value: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<bool> {
    write_at(value, out, 0)
}

fn write_at(value: &Bound<'_, PyAny>, out: &mut Vec<u8>, depth: usize) -> PyResult<bool> {
    if value.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(s) = value.cast_exact::<PyString>() {
        let Ok(text) = s.to_cow() else {
            return Ok(false);
        };
        write_str(&text, out);
    } else if let Ok(b) = value.cast_exact::<PyBool>() {
        out.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if let Ok(i) = value.cast_exact::<PyInt>() {
        match i.extract::<i64>() {
            Ok(v) => out.extend_from_slice(v.to_string().as_bytes()),
            Err(_) => out.extend_from_slice(i.str()?.to_cow()?.as_bytes()),
        }
    } else if let Ok(f) = value.cast_exact::<PyFloat>() {
        if !f.value().is_finite() {
            return Ok(false);
        }
        out.extend_from_slice(f.repr()?.to_cow()?.as_bytes());
    } else if depth >= MAX_DEPTH {
        return Ok(false);
    } else if let Ok(dict) = value.cast_exact::<PyDict>() {
        out.push(b'{');
        for (n, (k, v)) in dict.iter().enumerate() {
            let Ok(key) = k.cast_exact::<PyString>() else {
                return Ok(false);
            };
            let Ok(key) = key.to_cow() else {
                return Ok(false);
            };
            if n > 0 {
                out.push(b',');
            }
            write_str(&key, out);
            out.push(b':');
            if !write_at(&v, out, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(b'}');
    } else if let Ok(list) = value.cast_exact::<PyList>() {
        out.push(b'[');
        for (n, item) in list.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            if !write_at(&item, out, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(b']');
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        out.push(b'[');
        for (n, item) in tuple.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            if !write_at(&item, out, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(b']');
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// A JSON string as `json.dumps(ensure_ascii=False)` writes it: `"` and `\` escaped, the
/// control characters below 0x20 as `\n`-style escapes or `\u00xx`, all else as is.
fn write_str(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        let run = plain_run(bytes, at);
        out.extend_from_slice(&bytes[at..run]);
        let Some(&b) = bytes.get(run) else {
            break;
        };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
        }
        at = run + 1;
    }
    out.push(b'"');
}
