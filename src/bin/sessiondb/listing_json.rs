//! `sessions --json` written by hand: the bytes `serde_json::to_writer_pretty` writes for a
//! `[SessionInfo]`, without its byte-by-byte escaping of every key and value, which was a
//! third of the time it took to list 10,000 sessions. Keys are constants; a value is copied
//! as it is unless it holds a character JSON must escape, and only then goes through
//! serde_json. The tests hold the two outputs equal.

use sessiondb::query::SessionInfo;
use std::io::{self, Write};

/// Writes `sessions` as pretty JSON (no trailing newline), as serde_json would.
pub fn write_sessions(out: &mut impl Write, sessions: &[SessionInfo]) -> io::Result<()> {
    if sessions.is_empty() {
        return out.write_all(b"[]");
    }
    out.write_all(b"[")?;
    for (i, s) in sessions.iter().enumerate() {
        out.write_all(if i == 0 { b"\n  {" } else { b",\n  {" })?;
        let mut o = Object { out, first: true };
        o.string("session_id", &s.session_id)?;
        o.opt_string("summary", s.summary.as_deref())?;
        o.int("last_modified", s.last_modified)?;
        o.int("file_size", s.file_size)?;
        o.opt_string("custom_title", s.custom_title.as_deref())?;
        o.opt_string("first_prompt", s.first_prompt.as_deref())?;
        o.opt_string("git_branch", s.git_branch.as_deref())?;
        o.opt_string("cwd", s.cwd.as_deref())?;
        o.opt_string("tag", s.tag.as_deref())?;
        o.opt_int("created_at", s.created_at)?;
        o.string("project", &s.project)?;
        o.bool("listed", s.listed)?;
        o.opt_string("ai_title", s.ai_title.as_deref())?;
        o.int("message_count", s.message_count)?;
        o.bool("has_subagents", s.has_subagents)?;
        o.int("subagent_count", s.subagent_count)?;
        o.string("source_state", &s.source_state)?;
        o.opt_string("first_timestamp", s.first_timestamp.as_deref())?;
        o.opt_string("last_timestamp", s.last_timestamp.as_deref())?;
        out.write_all(b"\n  }")?;
    }
    out.write_all(b"\n]")
}

/// The members of one object of the array, indented as serde_json's pretty printer does.
struct Object<'w, W: Write> {
    out: &'w mut W,
    first: bool,
}

impl<W: Write> Object<'_, W> {
    /// `"key": ` on its own line; `key` needs no escaping (a constant of this file).
    fn key(&mut self, key: &str) -> io::Result<()> {
        self.out.write_all(if self.first {
            b"\n    \""
        } else {
            b",\n    \""
        })?;
        self.first = false;
        self.out.write_all(key.as_bytes())?;
        self.out.write_all(b"\": ")
    }

    fn string(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.key(key)?;
        json_string(self.out, value)
    }

    fn opt_string(&mut self, key: &str, value: Option<&str>) -> io::Result<()> {
        match value {
            Some(v) => self.string(key, v),
            None => self.null(key),
        }
    }

    fn int(&mut self, key: &str, value: i64) -> io::Result<()> {
        self.key(key)?;
        self.out
            .write_all(itoa::Buffer::new().format(value).as_bytes())
    }

    fn opt_int(&mut self, key: &str, value: Option<i64>) -> io::Result<()> {
        match value {
            Some(v) => self.int(key, v),
            None => self.null(key),
        }
    }

    fn bool(&mut self, key: &str, value: bool) -> io::Result<()> {
        self.key(key)?;
        self.out.write_all(if value { b"true" } else { b"false" })
    }

    fn null(&mut self, key: &str) -> io::Result<()> {
        self.key(key)?;
        self.out.write_all(b"null")
    }
}

/// A JSON string: copied between quotes when nothing in it needs an escape (the common
/// case), else written by serde_json.
fn json_string(out: &mut impl Write, value: &str) -> io::Result<()> {
    if value.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        return serde_json::to_writer(out, value).map_err(io::Error::from);
    }
    out.write_all(b"\"")?;
    out.write_all(value.as_bytes())?;
    out.write_all(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(n: i64, text: Option<&str>) -> SessionInfo {
        let text = text.map(str::to_owned);
        SessionInfo {
            session_id: format!("id-{n}"),
            summary: text.clone(),
            last_modified: 1_700_000_000_000 + n,
            file_size: -n,
            custom_title: text.clone(),
            first_prompt: text.clone(),
            git_branch: text.clone(),
            cwd: text.clone(),
            tag: text.clone(),
            created_at: text.as_ref().map(|_| i64::MIN),
            project: text.clone().unwrap_or_default(),
            listed: n % 2 == 0,
            ai_title: text.clone(),
            message_count: i64::MAX,
            has_subagents: n % 3 == 0,
            subagent_count: n,
            source_state: "present".to_owned(),
            first_timestamp: text.clone(),
            last_timestamp: text,
        }
    }

    fn ours(sessions: &[SessionInfo]) -> String {
        let mut out = Vec::new();
        write_sessions(&mut out, sessions).expect("writing to a Vec");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn the_same_bytes_as_serde_json() {
        let texts = [
            None,
            Some(""),
            Some("plain text"),
            Some("quote \" backslash \\ slash / tab \t newline \n"),
            Some("controls \u{0} \u{1f} \u{8} \u{c} \r and DEL \u{7f}"),
            Some("unicode é ✓ 🙂 \u{2028} \u{feff}"),
            Some("\\"),
        ];
        let sessions: Vec<SessionInfo> = texts
            .iter()
            .enumerate()
            .map(|(n, t)| session(n as i64, *t))
            .collect();
        for k in 0..=sessions.len() {
            let want = serde_json::to_string_pretty(&sessions[..k]).expect("serializable");
            assert_eq!(ours(&sessions[..k]), want, "{k} sessions");
        }
    }
}
