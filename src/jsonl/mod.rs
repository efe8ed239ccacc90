//! The Claude Code JSONL wire format: splitting a file into lines without losing a byte,
//! and projecting the few fields of each line that the store indexes.

/// For lenient serde visitors: every JSON scalar a visitor does not want (booleans, numbers,
/// null) reads as `$out`; with `str`, strings do too. Used wherever a field of an unexpected
/// type must read as absent instead of failing the whole line.
macro_rules! skip_scalars {
    ($out:expr) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($out)
        }
    };
    ($out:expr, str) => {
        $crate::jsonl::skip_scalars!($out);
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($out)
        }
    };
}
pub(crate) use skip_scalars;

mod envelope;
pub(crate) mod fields;
pub mod lenient;
pub mod patch;
pub mod pretty;
mod search_text;

pub use envelope::{Billing, Envelope, LineStatus};

/// The session stamp a record carries after the message's own keys (§2.3 items 9–15): what
/// an appended record is stamped with, and what resume's repairs copy.
pub(crate) const STAMP_KEYS: [&str; 7] = [
    "userType",
    "entrypoint",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "slug",
];
pub(crate) use fields::{array_items_at, pick, pick_at, value_end};
pub use lenient::{parse_json, parse_object_skipping};
pub use search_text::{search_text, SearchText, MAX_PARSED_LINE};

/// One line of a JSONL file: its bytes without the `\n`, and whether a `\n` followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The line's exact bytes (a `\r`, a BOM or invalid UTF-8 included).
    pub bytes: &'a [u8],
    /// False only for a last line that the file ends without a newline.
    pub terminated: bool,
}

/// Splits a buffer into lines. A file that ends with `\n` has no empty last line;
/// joining `bytes` with `\n` after each terminated line gives the buffer back exactly.
pub fn split_lines(buf: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let line = Line {
                    bytes: &rest[..i],
                    terminated: true,
                };
                rest = &rest[i + 1..];
                Some(line)
            }
            None => {
                let line = Line {
                    bytes: rest,
                    terminated: false,
                };
                rest = &[];
                Some(line)
            }
        }
    })
}

/// The text Claude Code's parser sees for a line: BOM stripped, whitespace trimmed.
/// `None` when the bytes are not UTF-8 (Claude Code skips such a line).
pub fn parse_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Some(text.trim())
}

/// Parses a stored line into a JSON object the way Claude Code's loader does: `None`
/// for blank, malformed or non-object lines, which the loader skips. What `JSON.parse`
/// accepts and `serde_json` does not (a lone surrogate escape, nesting deeper than 128) is
/// read by [`lenient::parse_json`].
pub fn parse_record(bytes: &[u8]) -> Option<serde_json::Value> {
    let text = parse_text(bytes)?;
    if text.is_empty() {
        return None;
    }
    parse_json(text).filter(serde_json::Value::is_object)
}

/// [`parse_record`] without building the top-level member `skip`, which stands in as a
/// value of the same truthiness (see [`lenient::parse_object_skipping`]).
pub fn parse_record_skipping(bytes: &[u8], skip: &str) -> Option<serde_json::Value> {
    let text = parse_text(bytes)?;
    if text.is_empty() {
        return None;
    }
    parse_object_skipping(text, skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejoin(buf: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for line in split_lines(buf) {
            out.extend_from_slice(line.bytes);
            if line.terminated {
                out.push(b'\n');
            }
        }
        out
    }

    #[test]
    fn split_and_rejoin_is_identity() {
        let cases: &[&[u8]] = &[
            b"",
            b"\n",
            b"\n\n",
            b"{}",
            b"{}\n",
            b"{}\r\n{}\r\n",
            b"\xef\xbb\xbf{}\n{\"a\":1}",
            b"{}{}\n\xff\xfe\n",
        ];
        for case in cases {
            assert_eq!(rejoin(case), *case, "{case:?}");
        }
    }

    #[test]
    fn only_the_last_line_may_be_unterminated() {
        let lines: Vec<_> = split_lines(b"a\nb").collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].terminated);
        assert!(!lines[1].terminated);
    }

    #[test]
    fn parse_record_skips_what_the_loader_skips() {
        assert!(parse_record(b"").is_none());
        assert!(parse_record(b"   \r").is_none());
        assert!(parse_record(b"{\"a\":1}{\"b\":2}").is_none());
        assert!(parse_record(b"[1,2]").is_none());
        assert!(parse_record(b"\xff{}").is_none());
        assert!(parse_record(b"\xef\xbb\xbf{\"a\":1}\r").is_some());
    }
}
