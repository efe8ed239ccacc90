//! Registering the server with Claude Code, as `claude mcp add` does, changing no other byte.
//!
//! What Claude Code 2.1.332 writes (seen by running `claude mcp add --scope user|project`):
//! an entry `"sessiondb": {"type": "stdio", "command": …, "args": […], "env": {}}` under
//! `mcpServers`, for the user scope in `$CLAUDE_CONFIG_DIR/.claude.json` (else
//! `~/.claude.json`) at the top level, for the project scope in `.mcp.json` of the current
//! folder, both with two-space indentation and no final newline. `claude mcp remove` leaves
//! `"mcpServers": {}` behind.
//!
//! Claude Code rewrites the whole file; this splices: the entry's text is inserted after the
//! last member of `mcpServers` (or `mcpServers` after the last top-level member), and
//! uninstall cuts out exactly that text again (and an `mcpServers` left empty), so that
//! install then uninstall gives the file back byte for byte. The file is read and written
//! by [`claude_settings::edit_text`], as `hooks install` writes `settings.json` (issue 28,
//! item 3): atomically with its permissions, a symbolic link followed and kept (a link to
//! nothing refused), a read-only file refused, under a lock, and started over when Claude
//! Code (which rewrites `~/.claude.json` while it runs) changed the file meanwhile.

use crate::claude_settings::{self, NewText, Options};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The server's name in Claude Code (its tools are `mcp__sessiondb__<tool>`).
pub const NAME: &str = "sessiondb";

/// Where the entry goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every project of this user (`~/.claude.json`).
    User,
    /// This folder's project, shared through `.mcp.json` (Claude Code asks before using it).
    Project,
}

/// The file a scope's entry lives in; `None` when the home folder is unknown.
pub fn config_path(scope: Scope, cwd: &Path) -> Option<PathBuf> {
    match scope {
        Scope::Project => Some(cwd.join(".mcp.json")),
        Scope::User => {
            if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
                return Some(PathBuf::from(dir).join(".claude.json"));
            }
            let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
            Some(PathBuf::from(home).join(".claude.json"))
        }
    }
}

/// The entry `claude mcp add sessiondb -- BINARY mcp [--db DB] [--allow-write]` writes.
pub fn entry(binary: &Path, db: Option<&Path>, allow_write: bool) -> Value {
    let mut args = vec![json!("mcp")];
    if let Some(db) = db {
        args.push(json!("--db"));
        args.push(json!(db.to_string_lossy()));
    }
    if allow_write {
        args.push(json!("--allow-write"));
    }
    json!({
        "type": "stdio",
        "command": binary.to_string_lossy(),
        "args": args,
        "env": {},
    })
}

/// What [`install`] or [`uninstall`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The entry was added.
    Added,
    /// An older sessiondb entry was replaced.
    Replaced,
    /// The file already held this entry (or, for uninstall, none): nothing was written.
    Unchanged,
    /// The entry was removed.
    Removed,
}

/// Adds (or updates) the `sessiondb` entry in `path`, creating the file when missing.
///
/// # Errors
/// When the file is not a JSON object, holds an `mcpServers` that is not an object, or
/// names another program `sessiondb`; or as [`claude_settings::edit_text`] (a link to
/// nothing, a read-only file, a file that kept changing, a failure to read or write).
pub fn install(path: &Path, entry: &Value) -> Result<Change> {
    let (change, _) = claude_settings::edit_text(path, &Options::default(), |file, text| {
        let Some(text) = text else {
            let body = indent(&pretty(&json!({ "mcpServers": { NAME: entry } })), "");
            return Ok((Change::Added, NewText::Write(body)));
        };
        let (top, servers) = locate(file, text)?;
        let value = |level: &str| indent(&pretty(entry), level);
        let (new, change) = match servers {
            Some(servers) => match servers.members.iter().find(|m| m.key == NAME) {
                Some(ours) => {
                    check_ours(file, &text[ours.value.clone()])?;
                    let level = line_indent(text, ours.start);
                    let replaced = splice(text, ours.value.clone(), &value(&level));
                    if replaced == text {
                        return Ok((Change::Unchanged, NewText::Keep));
                    }
                    (replaced, Change::Replaced)
                }
                None => {
                    let (own, inner) = member_indent(text, &servers);
                    (
                        insert_member(text, &servers, &own, NAME, &value(&inner)),
                        Change::Added,
                    )
                }
            },
            None => {
                let (own, inner) = member_indent(text, &top);
                let nested = format!("{inner}  ");
                let servers = format!("{{\n{nested}{}: {}\n{inner}}}", json!(NAME), value(&nested));
                (
                    insert_member(text, &top, &own, "mcpServers", &servers),
                    Change::Added,
                )
            }
        };
        Ok((change, NewText::Write(new)))
    })?;
    Ok(change)
}

/// Removes the `sessiondb` entry from `path` (and the `mcpServers` it leaves empty; a
/// project's `.mcp.json` left as `{}` is deleted).
///
/// # Errors
/// As [`install`].
pub fn uninstall(path: &Path, scope: Scope) -> Result<Change> {
    let (change, _) = claude_settings::edit_text(path, &Options::default(), |file, text| {
        let unchanged = Ok((Change::Unchanged, NewText::Keep));
        let Some(text) = text else {
            return unchanged;
        };
        let (top, servers) = locate(file, text)?;
        let Some(servers) = servers else {
            return unchanged;
        };
        let Some(at) = servers.members.iter().position(|m| m.key == NAME) else {
            return unchanged;
        };
        check_ours(file, &text[servers.members[at].value.clone()])?;
        let new = if servers.members.len() == 1 {
            let at = top
                .members
                .iter()
                .position(|m| m.key == "mcpServers")
                .expect("located");
            remove_member(text, &top, at)
        } else {
            remove_member(text, &servers, at)
        };
        if scope == Scope::Project && new.trim() == "{}" {
            Ok((Change::Removed, NewText::Remove))
        } else {
            Ok((Change::Removed, NewText::Write(new)))
        }
    })?;
    Ok(change)
}

/// An entry named `sessiondb` that runs another program is not ours to change.
fn check_ours(path: &Path, value: &str) -> Result<()> {
    let v: Value = serde_json::from_str(value).unwrap_or(Value::Null);
    let program = v.get("command").and_then(Value::as_str).unwrap_or("");
    let ours = Path::new(program)
        .file_stem()
        .is_some_and(|n| n == "sessiondb");
    if ours {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{} has an MCP server named {NAME} that runs {program:?}, not sessiondb; it was \
             left alone",
            path.display()
        )))
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("a JSON value serializes")
}

/// `text` (pretty JSON) with every line after the first indented by `level`.
fn indent(text: &str, level: &str) -> String {
    text.replace('\n', &format!("\n{level}"))
}

fn splice(text: &str, range: Range<usize>, with: &str) -> String {
    format!("{}{with}{}", &text[..range.start], &text[range.end..])
}

/// One member of an object: where its key starts and its value's bytes.
struct Member {
    key: String,
    start: usize,
    value: Range<usize>,
}

/// An object's members and the position of its `{` and `}`.
struct Object {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

/// The top-level object and its `mcpServers` object, if any.
fn locate(path: &Path, text: &str) -> Result<(Object, Option<Object>)> {
    let bad = |what: &str| Error::Invalid(format!("{} {what}; it was left alone", path.display()));
    let parsed: Value =
        serde_json::from_str(text).map_err(|e| bad(&format!("is not valid JSON ({e})")))?;
    if !parsed.is_object() {
        return Err(bad("is not a JSON object"));
    }
    let b = text.as_bytes();
    let top = scan_object(b, ws(b, 0)).ok_or_else(|| bad("could not be read"))?;
    let servers = match top.members.iter().find(|m| m.key == "mcpServers") {
        None => None,
        Some(m) if b[m.value.start] == b'{' => {
            Some(scan_object(b, m.value.start).ok_or_else(|| bad("could not be read"))?)
        }
        Some(_) => return Err(bad("has an mcpServers that is not an object")),
    };
    // A key written twice: JSON readers keep the last, so splicing the first would lie.
    if parsed.get("mcpServers").is_some()
        && top.members.iter().filter(|m| m.key == "mcpServers").count() > 1
    {
        return Err(bad("names mcpServers twice"));
    }
    Ok((top, servers))
}

/// The indentation of the line `at` is on.
fn line_indent(text: &str, at: usize) -> String {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line..at]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The indentation of `object`'s own line, and the one its members take (their own when it
/// has some, else two spaces more).
fn member_indent(text: &str, object: &Object) -> (String, String) {
    let own = line_indent(text, object.open);
    let inner = match object.members.first() {
        Some(m) => line_indent(text, m.start),
        None => format!("{own}  "),
    };
    (own, inner)
}

/// Inserts `"key": value` as `object`'s last member.
fn insert_member(text: &str, object: &Object, own: &str, key: &str, value: &str) -> String {
    let key = json!(key);
    match object.members.last() {
        Some(last) => {
            let inner = line_indent(text, last.start);
            let at = last.value.end;
            splice(text, at..at, &format!(",\n{inner}{key}: {value}"))
        }
        None => splice(
            text,
            object.open + 1..object.close,
            &format!("\n{own}  {key}: {value}\n{own}"),
        ),
    }
}

/// Cuts member `at` out of `object`, with the comma and line break that joined it.
fn remove_member(text: &str, object: &Object, at: usize) -> String {
    let m = &object.members;
    let range = if m.len() == 1 {
        object.open + 1..object.close
    } else if at + 1 < m.len() {
        m[at].start..m[at + 1].start
    } else {
        m[at - 1].value.end..m[at].value.end
    };
    splice(text, range, "")
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (just past its closing quote).
fn scan_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of the value starting at `i`.
fn scan_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => scan_string(b, i),
        b'{' => scan_object(b, i).map(|o| o.close + 1),
        b'[' => {
            let mut j = ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Some(j + 1);
            }
            loop {
                j = ws(b, scan_value(b, j)?);
                match b.get(j)? {
                    b',' => j = ws(b, j + 1),
                    b']' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// The object starting at `i` (which must be `{`), with its members.
fn scan_object(b: &[u8], i: usize) -> Option<Object> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    let mut j = ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Some(Object {
            open: i,
            close: j,
            members,
        });
    }
    loop {
        let start = j;
        let key_end = scan_string(b, j)?;
        let key: String = serde_json::from_slice(&b[start..key_end]).ok()?;
        j = ws(b, key_end);
        if b.get(j) != Some(&b':') {
            return None;
        }
        let value_start = ws(b, j + 1);
        let value_end = scan_value(b, value_start)?;
        members.push(Member {
            key,
            start,
            value: value_start..value_end,
        });
        j = ws(b, value_end);
        match b.get(j)? {
            b',' => j = ws(b, j + 1),
            b'}' => {
                return Some(Object {
                    open: i,
                    close: j,
                    members,
                })
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_for_test() -> Value {
        entry(Path::new("/usr/bin/sessiondb"), None, false)
    }

    fn round_trip(before: &str) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, before).unwrap();
        assert_eq!(install(&path, &entry_for_test()).unwrap(), Change::Added);
        let installed = std::fs::read_to_string(&path).unwrap();
        let v: Value = serde_json::from_str(&installed).unwrap();
        assert_eq!(v["mcpServers"][NAME], entry_for_test(), "{installed}");
        assert_eq!(
            install(&path, &entry_for_test()).unwrap(),
            Change::Unchanged
        );
        assert_eq!(uninstall(&path, Scope::User).unwrap(), Change::Removed);
        (installed, std::fs::read_to_string(&path).unwrap())
    }

    #[test]
    fn install_then_uninstall_gives_the_same_bytes() {
        for before in [
            "{\n  \"a\": 1,\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  },\n  \"z\": [1, {\"b\": \"}\"}]\n}",
            "{\"a\":1}",
            "{}",
            "{\n\t\"mcpServers\": {\"o\": {}}, \"k\": \"v\\\"}\"\n}\n",
        ] {
            let (installed, after) = round_trip(before);
            assert_eq!(after, before, "installed as:\n{installed}");
        }
    }

    #[test]
    fn installs_as_claude_writes_it() {
        let (installed, _) = round_trip("{\n  \"mcpServers\": {}\n}");
        assert_eq!(
            installed,
            "{\n  \"mcpServers\": {\n    \"sessiondb\": {\n      \"type\": \"stdio\",\n      \
             \"command\": \"/usr/bin/sessiondb\",\n      \"args\": [\n        \"mcp\"\n      \
             ],\n      \"env\": {}\n    }\n  }\n}"
        );
    }

    #[test]
    fn a_new_project_file_is_removed_again_and_links_stay_links() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        install(&path, &entry_for_test()).unwrap();
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("{\n  \"mcpServers\""));
        uninstall(&path, Scope::Project).unwrap();
        assert!(!path.exists());
        #[cfg(unix)]
        {
            let real = dir.path().join("real.json");
            std::fs::write(&real, "{\"x\": 1}").unwrap();
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink(&real, &link).unwrap();
            install(&link, &entry_for_test()).unwrap();
            assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
            assert!(std::fs::read_to_string(&real)
                .unwrap()
                .contains("sessiondb"));
        }
    }

    /// Issue 28, items 3 and 10, for `.claude.json` and `.mcp.json` as for `settings.json`:
    /// a read-only file is refused, and a link to nothing is refused and stays a link (a
    /// regular file written over it would cut the link).
    #[cfg(unix)]
    #[test]
    fn read_only_files_and_links_to_nothing_are_refused_untouched() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude.json");
        std::fs::write(&path, "{\"a\": 1}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = install(&path, &entry_for_test()).unwrap_err().to_string();
        assert!(err.contains("read-only (mode 0444)"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\": 1}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o444);
        let link = dir.path().join(".mcp.json");
        let nowhere = dir.path().join("dotfiles/mcp.json");
        std::os::unix::fs::symlink(&nowhere, &link).unwrap();
        assert!(install(&link, &entry_for_test()).is_err());
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert!(!nowhere.exists());
    }

    #[test]
    fn refuses_what_is_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let other = "{\"mcpServers\": {\"sessiondb\": {\"command\": \"/bin/evil\"}}}";
        std::fs::write(&path, other).unwrap();
        assert!(install(&path, &entry_for_test()).is_err());
        assert!(uninstall(&path, Scope::User).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), other);
        std::fs::write(&path, "[1]").unwrap();
        assert!(install(&path, &entry_for_test()).is_err());
        std::fs::write(&path, "{\"mcpServers\": 3}").unwrap();
        assert!(install(&path, &entry_for_test()).is_err());
    }
}
