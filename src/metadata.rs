//! Session metadata writes: rename, tag, delete. Each is one IMMEDIATE transaction that
//! also refreshes the catalog (delete's steps are written once for both engines, in the
//! crate's `delete` module, and re-exported here).
//!
//! Rename and tag append the exact line the Agent SDK's `rename_session` / `tag_session`
//! append (`{"type":"custom-title","customTitle":T,"sessionId":S}` and
//! `{"type":"tag","tag":T,"sessionId":S}`, compact, non-ASCII as `\uXXXX`), so an export is
//! what Claude Code would have on disk. One deliberate difference: when the transcript does
//! not end with a newline, the SDK glues its line onto the last record (which then no longer
//! parses); sessiondb ends that last line first.

use crate::error::{Error, Result};
use crate::model::SessionRef;
use crate::store::Store;
use rusqlite::Transaction;
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::UnicodeNormalization;

pub use crate::delete::{delete_session, DeleteReport};

/// Writes `s` as a JSON string the way Python's `json.dumps` does by default
/// (`ensure_ascii`): every non-ASCII character as a `\uXXXX` escape (surrogate pairs above
/// U+FFFF).
pub fn json_ascii_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7f => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Python's `str.strip()`.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// The SDK's tag cleaning: NFKC, then format, private-use and unassigned characters
/// removed, repeated until stable (at most 10 rounds), then trimmed.
pub fn sanitize_tag(tag: &str) -> String {
    let mut current = tag.to_owned();
    for _ in 0..10 {
        let next: String = current
            .nfkc()
            .filter(|c| {
                !matches!(
                    get_general_category(*c),
                    GeneralCategory::Format
                        | GeneralCategory::PrivateUse
                        | GeneralCategory::Unassigned
                ) && !matches!(*c as u32,
                    0x200b..=0x200f | 0x202a..=0x202e | 0x2066..=0x2069 | 0xfeff | 0xe000..=0xf8ff)
            })
            .collect();
        if next == current {
            break;
        }
        current = next;
    }
    py_strip(&current).to_owned()
}

/// The line `rename_session` appends (without its newline).
pub fn custom_title_line(title: &str, session_id: &str) -> String {
    format!(
        "{{\"type\":\"custom-title\",\"customTitle\":{},\"sessionId\":{}}}",
        json_ascii_string(title),
        json_ascii_string(session_id)
    )
}

/// The line `tag_session` appends (without its newline); `""` clears.
pub fn tag_line(tag: &str, session_id: &str) -> String {
    format!(
        "{{\"type\":\"tag\",\"tag\":{},\"sessionId\":{}}}",
        json_ascii_string(tag),
        json_ascii_string(session_id)
    )
}

/// Appends one record line to the session's main transcript and refreshes the catalog,
/// in the caller's transaction ([`crate::record::write::append_line`]). Returns the new
/// row id.
///
/// # Errors
/// [`Error::Invalid`] when the session has no non-empty main transcript (the SDK appends
/// only to an existing, non-empty file); database errors.
pub fn append_line(tx: &Transaction<'_>, session: &SessionRef, line: &str) -> Result<i64> {
    crate::record::write::append_line(&mut crate::record::SqliteLines(tx), session, line)
}

/// `rename_session`: appends a `custom-title` record with the trimmed title. Returns the
/// line written.
///
/// # Errors
/// [`Error::Invalid`] for an empty title or a session without a main transcript.
pub fn rename_session(store: &Store, session: &SessionRef, title: &str) -> Result<String> {
    let line = rename_line(session, title)?;
    store.write(|tx| append_line(tx, session, &line))?;
    Ok(line)
}

/// The `custom-title` line `rename_session` writes, on any backend.
///
/// # Errors
/// [`Error::Invalid`] for an empty title.
pub fn rename_line(session: &SessionRef, title: &str) -> Result<String> {
    let title = py_strip(title);
    if title.is_empty() {
        return Err(Error::Invalid("title must be non-empty".into()));
    }
    Ok(custom_title_line(title, &session.session_id))
}

/// `tag_session`: appends a `tag` record with the cleaned tag, or `""` to clear
/// (`tag == None`). Returns the line written.
///
/// # Errors
/// [`Error::Invalid`] for a tag that is empty after cleaning or a session without a main
/// transcript.
pub fn tag_session(store: &Store, session: &SessionRef, tag: Option<&str>) -> Result<String> {
    let line = tag_record(session, tag)?;
    store.write(|tx| append_line(tx, session, &line))?;
    Ok(line)
}

/// The `tag` line `tag_session` writes, on any backend: the cleaned tag, or `""` to clear.
///
/// # Errors
/// [`Error::Invalid`] for a tag that is empty after cleaning.
pub fn tag_record(session: &SessionRef, tag: Option<&str>) -> Result<String> {
    let tag = match tag {
        Some(t) => {
            let clean = sanitize_tag(t);
            if clean.is_empty() {
                return Err(Error::Invalid(
                    "tag must be non-empty (use --clear to remove it)".into(),
                ));
            }
            clean
        }
        None => String::new(),
    };
    Ok(tag_line(&tag, &session.session_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_match_the_sdk() {
        let sid = "a4e5b271-6948-4581-893b-4595c9ec41ea";
        assert_eq!(
            custom_title_line(py_strip("  Café ☕ refactor  "), sid),
            format!(
                r#"{{"type":"custom-title","customTitle":"Caf\u00e9 \u2615 refactor","sessionId":"{sid}"}}"#
            )
        );
        assert_eq!(
            tag_line(&sanitize_tag(" exp\u{200b}-1\u{202e} "), sid),
            format!(r#"{{"type":"tag","tag":"exp-1","sessionId":"{sid}"}}"#)
        );
        assert_eq!(
            json_ascii_string("a\"\\\u{1}😀"),
            r#""a\"\\\u0001\ud83d\ude00""#
        );
    }

    #[test]
    fn tags_are_cleaned() {
        assert_eq!(sanitize_tag("ｆｕｌｌ"), "full");
        assert_eq!(sanitize_tag("\u{200b}\u{feff} "), "");
        assert_eq!(sanitize_tag("a\u{e000}b"), "ab");
    }
}
