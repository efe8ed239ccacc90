//! `sessions --json` written by hand: the bytes `serde_json::to_writer_pretty` writes for a
//! `[SessionInfo]`, one session at a time as the catalog yields them. serde_json escaped
//! every key and value byte by byte, which was a third of the time it took to list 10,000
//! sessions; here keys are constants and a value is copied as it is unless it holds a
//! character JSON must escape, and only then goes through serde_json. The tests hold the
//! two outputs equal.

use sessiondb::query::SessionRow;

/// Pretty JSON of an array of sessions, appended to a byte buffer row by row.
#[derive(Debug, Default)]
pub struct SessionsJson {
    rows: usize,
}

impl SessionsJson {
    /// Appends one session (as the next item of the array).
    pub fn row(&mut self, out: &mut Vec<u8>, s: &SessionRow<'_>) {
        out.extend_from_slice(if self.rows == 0 { b"[\n  {" } else { b",\n  {" });
        self.rows += 1;
        let mut o = Object { out, first: true };
        o.string("session_id", s.session_id);
        o.opt_string("summary", s.summary);
        o.int("last_modified", s.last_modified);
        o.int("file_size", s.file_size);
        o.opt_string("custom_title", s.custom_title);
        o.opt_string("first_prompt", s.first_prompt);
        o.opt_string("git_branch", s.git_branch);
        o.opt_string("cwd", s.cwd);
        o.opt_string("tag", s.tag);
        o.opt_int("created_at", s.created_at);
        o.string("project", s.project);
        o.bool("listed", s.listed);
        o.opt_string("ai_title", s.ai_title);
        o.int("message_count", s.message_count);
        o.bool("has_subagents", s.has_subagents);
        o.int("subagent_count", s.subagent_count);
        o.string("source_state", s.source_state);
        o.opt_string("first_timestamp", s.first_timestamp);
        o.opt_string("last_timestamp", s.last_timestamp);
        // Only a team store records them; absent, not null, elsewhere (as serde skips them).
        if let Some(host) = s.origin_host {
            o.string("origin_host", host);
        }
        if let Some(user) = s.origin_user {
            o.string("origin_user", user);
        }
        out.extend_from_slice(b"\n  }");
    }

    /// Closes the array (no trailing newline).
    pub fn finish(self, out: &mut Vec<u8>) {
        out.extend_from_slice(if self.rows == 0 { b"[]" } else { b"\n]" });
    }
}

/// The members of one object of the array, indented as serde_json's pretty printer does.
struct Object<'w> {
    out: &'w mut Vec<u8>,
    first: bool,
}

impl Object<'_> {
    /// `"key": ` on its own line; `key` needs no escaping (a constant of this file).
    fn key(&mut self, key: &str) {
        self.out.extend_from_slice(if self.first {
            b"\n    \""
        } else {
            b",\n    \""
        });
        self.first = false;
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\": ");
    }

    fn string(&mut self, key: &str, value: &str) {
        self.key(key);
        json_string(self.out, value);
    }

    fn opt_string(&mut self, key: &str, value: Option<&str>) {
        match value {
            Some(v) => self.string(key, v),
            None => self.null(key),
        }
    }

    fn int(&mut self, key: &str, value: i64) {
        self.key(key);
        self.out
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
    }

    fn opt_int(&mut self, key: &str, value: Option<i64>) {
        match value {
            Some(v) => self.int(key, v),
            None => self.null(key),
        }
    }

    fn bool(&mut self, key: &str, value: bool) {
        self.key(key);
        self.out
            .extend_from_slice(if value { b"true" } else { b"false" });
    }

    fn null(&mut self, key: &str) {
        self.key(key);
        self.out.extend_from_slice(b"null");
    }
}

/// A JSON string: copied between quotes when nothing in it needs an escape (the common
/// case), else written by serde_json.
fn json_string(out: &mut Vec<u8>, value: &str) {
    if needs_escape(value.as_bytes()) {
        serde_json::to_writer(out, value).expect("writing to a Vec cannot fail");
        return;
    }
    out.push(b'"');
    out.extend_from_slice(value.as_bytes());
    out.push(b'"');
}

/// Whether `text` holds a byte JSON escapes (`"`, `\` or a control character below 0x20),
/// found by the library's word-at-a-time scanner.
fn needs_escape(text: &[u8]) -> bool {
    sessiondb::jsonl::pretty::next_special(text, 0) < text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sessiondb::query::SessionInfo;

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
            last_timestamp: text.clone(),
            // A team store's rows carry an origin, a SQLite store's none (either alone too).
            origin_host: text.clone().filter(|_| n % 2 == 0),
            origin_user: text.filter(|_| n % 3 != 1),
        }
    }

    fn ours(sessions: &[SessionInfo]) -> String {
        let mut out = Vec::new();
        let mut json = SessionsJson::default();
        for s in sessions {
            json.row(&mut out, &s.as_row());
        }
        json.finish(&mut out);
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
            Some("eight by\"eight by"),
            Some("a long line without anything to escape, then at the end\u{1}"),
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

    /// Every byte value at every position of a word and of the tail.
    #[test]
    fn escapes_are_found_wherever_they_are() {
        for len in 1..20 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    let want = b < 0x20 || b == b'"' || b == b'\\';
                    assert_eq!(needs_escape(&text), want, "{len} {at} {b}");
                }
            }
        }
    }
}
