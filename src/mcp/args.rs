//! A tool call's arguments, checked, and the errors a tool answers with.
//!
//! A model sends whatever it likes: every argument is checked for its type and range here,
//! and a bad one becomes a [`ToolError`] with a stable code and a sentence that says what to
//! send instead, never a protocol error (Claude Code shows the model no text for those).

use crate::error::Error;
use serde_json::{Map, Value};

/// A tool's failure: a stable `code` (scripts and models branch on it) and a sentence a
/// model can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// One of `invalid_argument`, `unknown_session`, `ambiguous_session`, `not_found`,
    /// `unknown_tool`, `read_only`, `store_error`.
    pub code: &'static str,
    /// What went wrong and what to ask for instead.
    pub message: String,
}

impl ToolError {
    /// A `code` with its sentence.
    pub fn new(code: &'static str, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
        }
    }

    /// An argument that cannot be used as sent.
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::new("invalid_argument", message)
    }
}

impl From<Error> for ToolError {
    fn from(e: Error) -> Self {
        match e {
            Error::SessionNotFound(arg) => ToolError::new(
                "unknown_session",
                format!(
                    "no stored session is {:?}; call find or list_sessions for an id",
                    clip(&arg, 80)
                ),
            ),
            Error::AmbiguousSession { query, candidates } => ToolError::new(
                "ambiguous_session",
                format!(
                    "{:?} names several sessions ({}); send more characters of the id, or \
                     PROJECT/SESSION",
                    clip(&query, 80),
                    candidates.join(", ")
                ),
            ),
            Error::NotFound(what) | Error::NoConversation(what) => {
                ToolError::new("not_found", what)
            }
            Error::Invalid(what) => ToolError::invalid(what),
            other => ToolError::new("store_error", format!("the store failed: {other}")),
        }
    }
}

/// The longest text argument taken (a query, a path, a title): 4 KiB.
pub const MAX_TEXT: usize = 4096;

/// A call's arguments.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// The arguments object (an absent one is empty).
    pub fn new(map: &'a Map<String, Value>) -> Args<'a> {
        Args { map }
    }

    fn value(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// A text argument: at most [`MAX_TEXT`] bytes, no control characters but tab and
    /// newline, `None` when absent or empty.
    pub fn text(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        let Some(v) = self.value(name) else {
            return Ok(None);
        };
        let Some(s) = v.as_str() else {
            return Err(ToolError::invalid(format!("{name} must be a string")));
        };
        if s.len() > MAX_TEXT {
            return Err(ToolError::invalid(format!(
                "{name} is {} bytes; at most {MAX_TEXT} are taken: send the few words or the \
                 path that matter",
                s.len()
            )));
        }
        if s.chars().any(|c| c.is_control() && c != '\t' && c != '\n') {
            return Err(ToolError::invalid(format!(
                "{name} holds control characters; send plain text"
            )));
        }
        let s = s.trim();
        Ok((!s.is_empty()).then_some(s))
    }

    /// A text argument that must be there.
    pub fn required(&self, name: &str) -> Result<&'a str, ToolError> {
        self.text(name)?
            .ok_or_else(|| ToolError::invalid(format!("{name} is required (a non-empty string)")))
    }

    /// A boolean argument, `false` when absent.
    pub fn flag(&self, name: &str) -> Result<bool, ToolError> {
        match self.value(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(ToolError::invalid(format!("{name} must be true or false"))),
        }
    }

    /// A whole-number argument, `None` when absent.
    pub fn int(&self, name: &str) -> Result<Option<i64>, ToolError> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .map(Some)
                .ok_or_else(|| ToolError::invalid(format!("{name} must be a whole number"))),
        }
    }

    /// A count from 1 to `max` (`default` when absent); a larger one is lowered to `max`
    /// (the answer says so), 0 or less is refused.
    pub fn limit(&self, name: &str, default: i64, max: i64) -> Result<i64, ToolError> {
        match self.int(name)? {
            None => Ok(default),
            Some(n) if n < 1 => Err(ToolError::invalid(format!(
                "{name} must be 1 or more (at most {max})"
            ))),
            Some(n) => Ok(n.min(max)),
        }
    }

    /// A time filter (`2026-01-31`, an RFC 3339 time, `3d`, `12h`), as epoch ms.
    pub fn time(&self, name: &str) -> Result<Option<i64>, ToolError> {
        self.text(name)?
            .map(|t| {
                crate::time::parse_time_filter(t).ok_or_else(|| {
                    ToolError::invalid(format!(
                        "{name} {:?} is not a time: send 2026-01-31, an RFC 3339 time, or an \
                         age such as 3d or 12h",
                        clip(t, 40)
                    ))
                })
            })
            .transpose()
    }

    /// The `cursor` a previous answer gave as `next`: an offset, 0 or more.
    pub fn cursor(&self) -> Result<i64, ToolError> {
        let bad = || {
            ToolError::invalid(
                "cursor must be the `next` value of the previous answer, unchanged".to_owned(),
            )
        };
        match self.value("cursor") {
            None => Ok(0),
            Some(Value::String(s)) => s.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(bad),
            Some(v) => v.as_i64().filter(|n| *n >= 0).ok_or_else(bad),
        }
    }

    /// Refuses arguments the tool does not take (a misspelt filter would otherwise be
    /// silently ignored).
    pub fn only(&self, known: &[&str]) -> Result<(), ToolError> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(ToolError::invalid(format!(
                "unknown argument {:?}; this tool takes {}",
                clip(k, 40),
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn texts_are_checked() {
        let m = args(json!({"a": " x ", "b": 3, "c": "a\u{1}b", "d": "", "e": "x".repeat(5000)}));
        let a = Args::new(&m);
        assert_eq!(a.text("a"), Ok(Some("x")));
        assert_eq!(a.text("b").unwrap_err().code, "invalid_argument");
        assert_eq!(a.text("c").unwrap_err().code, "invalid_argument");
        assert_eq!(a.text("d"), Ok(None));
        assert!(a.text("e").unwrap_err().message.contains("5000 bytes"));
        assert_eq!(a.required("zz").unwrap_err().code, "invalid_argument");
    }

    #[test]
    fn counts_are_clamped_or_refused() {
        let m = args(json!({"big": 1_000_000_000_000i64, "neg": -3, "half": 2.5, "s": "4"}));
        let a = Args::new(&m);
        assert_eq!(a.limit("big", 10, 20), Ok(20));
        assert_eq!(a.limit("none", 10, 20), Ok(10));
        assert!(a.limit("neg", 10, 20).is_err());
        assert!(a.int("half").is_err());
        assert!(a.int("s").is_err());
    }

    #[test]
    fn cursors_and_unknown_arguments() {
        let m = args(json!({"cursor": "40", "qury": "x"}));
        let a = Args::new(&m);
        assert_eq!(a.cursor(), Ok(40));
        assert!(a.only(&["cursor", "query"]).is_err());
        let m = args(json!({"cursor": -1}));
        assert!(Args::new(&m).cursor().is_err());
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("hé", 2), "hé");
    }
}
