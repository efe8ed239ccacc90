//! JSON text straight into Python objects (dict, list, str, int, float, bool, None), in one
//! pass over the bytes. Building each message as a `serde_json::Value` and then again as
//! Python objects was most of `Store.messages()`; Python's own `json.loads` was most of
//! `SessionStore.load()` (it reads the whole text as one `str`, four bytes a character as
//! soon as one emoji is in it, and builds each string again from that).
//!
//! The parser takes only plain JSON and gives up on anything else ([`build`] answers
//! `None`): escapes that are lone surrogates, `NaN`/`Infinity`, nesting deeper than
//! [`MAX_DEPTH`], numbers it does not read exactly as [`Numbers`] asks, malformed text. The
//! caller then reads the text the way it did before, so the answer never depends on which
//! path built it. Objects keep their key order, and a repeated key keeps its first place
//! with its last value, as both `json.loads` and the library's `preserve_order` maps do.

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
/// (the caller falls back to its full reading).
///
/// # Errors
/// Only a Python error (out of memory).
pub fn build<'py>(
    py: Python<'py>,
    text: &str,
    numbers: Numbers,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut parser = Parser {
        py,
        text,
        at: 0,
        numbers,
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
    text: &'t str,
    at: usize,
    numbers: Numbers,
}

/// A parse step: `Ok(None)` gives up (see [`build`]), `Err` is a Python error.
type Step<T> = PyResult<Option<T>>;

impl<'py> Parser<'py, '_> {
    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
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
        let found = self.bytes()[self.at..].starts_with(word.as_bytes());
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
            let Some(key) = self.string()? else {
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
    /// it, the library replaces it, and a Rust string holds neither).
    fn string(&mut self) -> Step<Bound<'py, PyString>> {
        let bytes = self.bytes();
        let start = self.at;
        let mut i = plain_run(bytes, start);
        if bytes.get(i) == Some(&b'"') {
            self.at = i + 1;
            return Ok(Some(PyString::new(self.py, &self.text[start..i])));
        }
        let mut out = String::with_capacity(i - start + 16);
        out.push_str(&self.text[start..i]);
        loop {
            match bytes.get(i) {
                Some(b'"') => {
                    self.at = i + 1;
                    return Ok(Some(PyString::new(self.py, &out)));
                }
                Some(b'\\') => {
                    let Some((c, next)) = escape(bytes, i + 1) else {
                        return Ok(None);
                    };
                    out.push(c);
                    let run = plain_run(bytes, next);
                    out.push_str(&self.text[next..run]);
                    i = run;
                }
                // The end of the text, or a control character.
                _ => return Ok(None),
            }
        }
    }

    /// A number as [`Numbers`] asks; gives up on text that is not JSON's number grammar.
    fn number(&mut self) -> Step<Bound<'py, PyAny>> {
        let bytes = self.bytes();
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
        let token = &self.text[start..i];
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

/// Where the run of string bytes from `at` that need no work ends: at a quote, a
/// backslash, a control character or the end (all ASCII, so a char boundary). Eight bytes
/// are looked at together while none of them ends the run: most of a transcript's bytes
/// are in long strings.
fn plain_run(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whether a byte of `w` is below `n` (n <= 0x80), or zero: exact for "any byte".
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w & HIGH != 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        if below(w, 0x20) || below(w ^ (ONES * 0x22), 1) || below(w ^ (ONES * 0x5C), 1) {
            break;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        at += 1;
    }
    at
}

/// The character an escape stands for (`at` is just after the backslash) and where the
/// text goes on; `None` for an unknown escape or a lone surrogate.
fn escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let c = match bytes.get(at)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(bytes, at + 1)?;
            return match unit {
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
                    Some((char::from_u32(code)?, at + 11))
                }
                0xDC00..=0xDFFF => None,
                _ => Some((char::from_u32(u32::from(unit))?, at + 5)),
            };
        }
        _ => return None,
    };
    Some((c, at + 1))
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
