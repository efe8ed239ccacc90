//! The names a write may store: project keys, session ids and transcript subpaths.
//!
//! Every stored name becomes a path on `export` (`<project>/<session>.jsonl`,
//! `<project>/<session>/<subpath>.jsonl`), so each is checked where it enters: import, `append`,
//! `fork --session-id` and `serve`. One rule set, here, for all of them.

use crate::error::{Error, Result};

/// Whether a name is a Claude Code session id (spec §1.5: a UUID, any case).
pub(crate) fn is_session_id(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// What kind of name is checked (for the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A project folder name (`project_key`).
    Project,
    /// A session id.
    Session,
}

impl NameKind {
    fn label(self) -> &'static str {
        match self {
            NameKind::Project => "project key",
            NameKind::Session => "session id",
        }
    }
}

/// Why `name` cannot be one path component, or `None` when it can: not empty, not `.` or `..`,
/// no `/`, `\`, NUL or other control character, no drive prefix (`C:`).
pub fn component_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("is empty");
    }
    if name == "." || name == ".." {
        return Some("is a relative path step");
    }
    if name.contains('/') || name.contains('\\') {
        return Some("contains a path separator");
    }
    if name.contains('\0') {
        return Some("contains a NUL character");
    }
    if name.chars().any(char::is_control) {
        return Some("contains a control character");
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Some("has a drive prefix");
    }
    None
}

/// Checks a project key or a session id: one path component (see [`component_problem`]).
///
/// # Errors
/// [`Error::BadName`] naming the kind, the name and the problem.
pub fn check(kind: NameKind, name: &str) -> Result<()> {
    match component_problem(name) {
        None => Ok(()),
        Some(problem) => Err(Error::BadName(format!(
            "{} {name:?} {problem}: it must be one path component",
            kind.label()
        ))),
    }
}

/// Checks a project key and a session id together.
///
/// # Errors
/// As [`check`].
pub fn check_session(project: &str, session_id: &str) -> Result<()> {
    check(NameKind::Project, project)?;
    check(NameKind::Session, session_id)
}

/// Checks a transcript subpath (`subagents/agent-<id>`): relative, `/`-separated, every
/// component one path component by the rule of [`component_problem`].
///
/// # Errors
/// [`Error::BadName`] naming the subpath and the problem.
pub fn check_subpath(subpath: &str) -> Result<()> {
    let bad = |problem: &str| Err(Error::BadName(format!("subpath {subpath:?} {problem}")));
    if subpath.is_empty() {
        return bad("is empty (omit it for the main transcript)");
    }
    if subpath.starts_with('/') || subpath.starts_with('\\') {
        return bad("is absolute");
    }
    for part in subpath.split('/') {
        if let Some(problem) = component_problem(part) {
            return Err(Error::BadName(format!(
                "subpath {subpath:?} has a component {part:?} that {problem}"
            )));
        }
    }
    Ok(())
}

/// Checks that a new session id is a UUID (`fork --session-id`), as Claude Code's own are.
///
/// # Errors
/// [`Error::BadName`] naming the id.
pub fn check_uuid(session_id: &str) -> Result<()> {
    match uuid::Uuid::try_parse(session_id) {
        Ok(_) if session_id.len() == 36 => Ok(()),
        _ => Err(Error::BadName(format!(
            "session id {session_id:?} is not a UUID (like 123e4567-e89b-12d3-a456-426614174000)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_component_names() {
        for ok in [
            "-home-u-proj",
            "abc",
            "a.b",
            "..x",
            "x..",
            "é😀",
            "3f2c1d9e-0000-4000-8000-000000000000",
        ] {
            assert!(check(NameKind::Project, ok).is_ok(), "{ok:?}");
        }
        for bad in [
            "", ".", "..", "a/b", "../..", "/", "/etc", "a\\b", "\\x", "a\0b", "a\nb", "\t", "C:",
            "c:x", "a\u{7f}",
        ] {
            let err = check(NameKind::Session, bad).unwrap_err().to_string();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
            assert!(err.starts_with("session id"), "{err}");
        }
    }

    #[test]
    fn subpaths() {
        for ok in [
            "subagents/agent-1",
            "subagents/workflows/r/agent-2",
            "x",
            "a.b/c..d",
        ] {
            assert!(check_subpath(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "/abs", "\\abs", "C:x", "a/../b", "..", ".", "a/./b", "a//b", "a/", "a\0b", "a\\b",
            "a/\nb",
        ] {
            assert!(check_subpath(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn uuids() {
        assert!(check_uuid("123e4567-e89b-12d3-a456-426614174000").is_ok());
        for bad in [
            "",
            "../x",
            "not-a-uuid",
            "123e4567e89b12d3a456426614174000",
            "{123e4567-e89b-12d3-a456-426614174000}",
        ] {
            assert!(check_uuid(bad).is_err(), "{bad:?}");
        }
    }
}
