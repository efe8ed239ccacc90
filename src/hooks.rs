//! Claude Code's settings file and the command hooks that run `sessiondb capture`.
//!
//! Only what sessiondb adds is touched: one matcher group per event whose single command hook
//! runs `… sessiondb … capture`. Every other byte of the file stays as it was
//! ([`crate::json_edit`]); the file is written as [`crate::claude_settings`] writes (links
//! followed, read-only refused, locked). A file that is not valid JSON is refused.

use crate::claude_settings::{self, Edited};
use crate::error::{Error, Result};
use crate::json_edit::{Document, Step};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The hook events capture runs on: the end of a turn, of a sub-agent, before compaction
/// (which may rewrite nothing but marks a boundary) and at the session's end.
pub const EVENTS: [&str; 4] = ["Stop", "SubagentStop", "PreCompact", "SessionEnd"];

/// Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else
/// `~/.claude/settings.json`.
pub fn default_settings_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir).join("settings.json"));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(PathBuf::from(home).join(".claude").join("settings.json"))
}

/// The shell command a hook runs: the binary (quoted for the shell when it needs it), `--db`
/// when one was given, then `capture`.
pub fn capture_command(binary: &Path, db: Option<&Path>) -> String {
    let mut command = shell_quote(&binary.to_string_lossy());
    if let Some(db) = db {
        command.push_str(" --db ");
        command.push_str(&shell_quote(&db.to_string_lossy()));
    }
    command.push_str(" capture");
    command
}

/// Quotes a word for a POSIX shell when it needs it (Claude Code runs command hooks through
/// one; `launch --print` prints a command for one).
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:=@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Whether a hook command is one sessiondb installed: its program is a file named
/// `sessiondb` and its last word is `capture`.
fn is_capture_command(command: &str) -> bool {
    let Some(rest) = command.strip_suffix(" capture") else {
        return false;
    };
    let program = match rest.strip_prefix('\'') {
        Some(quoted) => quoted.split('\'').next().unwrap_or(""),
        None => rest.split(' ').next().unwrap_or(""),
    };
    Path::new(program)
        .file_name()
        .is_some_and(|n| n == "sessiondb")
}

/// The program a hook command runs: its first word, unquoted (as [`capture_command`]
/// quotes it).
pub fn command_program(command: &str) -> Option<PathBuf> {
    let program = match command.strip_prefix('\'') {
        Some(quoted) => {
            // 'a'\''b' is a'b.
            let mut word = String::new();
            let mut rest = quoted;
            loop {
                let end = rest.find('\'')?;
                word.push_str(&rest[..end]);
                match rest[end..].strip_prefix("'\\''") {
                    Some(more) => {
                        word.push('\'');
                        rest = more;
                    }
                    None => break,
                }
            }
            word
        }
        None => command.split(' ').next()?.to_owned(),
    };
    (!program.is_empty()).then(|| PathBuf::from(program))
}

/// A matcher group sessiondb added: exactly `{"hooks":[{"type":"command","command":C}]}`
/// with C a capture command.
fn capture_group_command(group: &Value) -> Option<&str> {
    let group = group.as_object()?;
    if group.len() != 1 {
        return None;
    }
    let hooks = group.get("hooks")?.as_array()?;
    let [hook] = hooks.as_slice() else {
        return None;
    };
    let hook = hook.as_object()?;
    if hook.len() != 2 || hook.get("type")?.as_str()? != "command" {
        return None;
    }
    let command = hook.get("command")?.as_str()?;
    is_capture_command(command).then_some(command)
}

fn capture_group(command: &str) -> Value {
    serde_json::json!({"hooks": [{"type": "command", "command": command}]})
}

/// Reads a settings file: `{}` when it does not exist.
///
/// # Errors
/// Fails when it cannot be read, is not valid JSON (naming line and column) or is not a
/// JSON object, or when its `hooks` are not shaped as Claude Code reads them.
pub fn read_settings(path: &Path) -> Result<Value> {
    let value = claude_settings::read(path)?.value();
    check_hooks_shape(path, &value)?;
    Ok(value)
}

fn check_hooks_shape(path: &Path, settings: &Value) -> Result<()> {
    let Some(hooks) = settings.get("hooks") else {
        return Ok(());
    };
    let bad = |what: String| {
        Error::Invalid(format!(
            "{}: {what}, not what Claude Code reads; it was left untouched",
            path.display()
        ))
    };
    let hooks = hooks
        .as_object()
        .ok_or_else(|| bad("\"hooks\" is not an object".into()))?;
    for event in EVENTS {
        if let Some(groups) = hooks.get(event) {
            if !groups.is_array() {
                return Err(bad(format!("\"hooks\".\"{event}\" is not a list")));
            }
        }
    }
    Ok(())
}

/// Adds a capture group running `command` to every event of [`EVENTS`]; a capture group
/// already there with another command (another binary path or database) is replaced in
/// place. Only those bytes change (see [`crate::json_edit`]). Returns whether anything
/// changed.
pub fn install(doc: &mut Document, command: &str) -> bool {
    let settings = doc.value();
    let group = capture_group(command);
    let Some(hooks) = settings.get("hooks") else {
        let all: Map<String, Value> = EVENTS
            .iter()
            .map(|e| ((*e).to_owned(), Value::Array(vec![group.clone()])))
            .collect();
        return doc.set(&[], "hooks", &Value::Object(all));
    };
    let mut changed = false;
    for event in EVENTS {
        let Some(groups) = hooks.get(event).and_then(Value::as_array) else {
            changed |= doc.set(&["hooks"], event, &Value::Array(vec![group.clone()]));
            continue;
        };
        let ours: Vec<usize> = (0..groups.len())
            .filter(|&i| capture_group_command(&groups[i]).is_some())
            .collect();
        let path = [Step::Key("hooks"), Step::Key(event)];
        match ours.as_slice() {
            [] => changed |= doc.push(&path, &group),
            [first, rest @ ..] => {
                for &i in rest.iter().rev() {
                    changed |= doc.remove(&[path[0], path[1], Step::Index(i)]);
                }
                if capture_group_command(&groups[*first]) != Some(command) {
                    changed |= doc.replace(&[path[0], path[1], Step::Index(*first)], &group);
                }
            }
        }
    }
    changed
}

/// Removes the capture groups (and an event list or `hooks` object left empty by that, which
/// install created), and nothing else: every other byte stays. Returns whether anything
/// changed.
pub fn uninstall(doc: &mut Document) -> bool {
    let settings = doc.value();
    let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
        return false;
    };
    let mut changed = false;
    let mut emptied = 0;
    for event in EVENTS {
        let Some(groups) = hooks.get(event).and_then(Value::as_array) else {
            continue;
        };
        let ours: Vec<usize> = (0..groups.len())
            .filter(|&i| capture_group_command(&groups[i]).is_some())
            .collect();
        if ours.is_empty() {
            continue;
        }
        if ours.len() == groups.len() {
            changed |= doc.remove(&[Step::Key("hooks"), Step::Key(event)]);
            emptied += 1;
        } else {
            for &i in ours.iter().rev() {
                changed |= doc.remove(&[Step::Key("hooks"), Step::Key(event), Step::Index(i)]);
            }
        }
    }
    if emptied > 0 && emptied == hooks.len() {
        changed |= doc.remove(&[Step::Key("hooks")]);
    }
    changed
}

/// One event's capture hook, as `hooks status` reports it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Installed {
    /// The hook event.
    pub event: String,
    /// The command it runs, when a capture hook is installed.
    pub command: Option<String>,
}

/// Which events have a capture hook, and its command.
pub fn status(settings: &Value) -> Vec<Installed> {
    EVENTS
        .iter()
        .map(|event| Installed {
            event: (*event).to_owned(),
            command: settings
                .get("hooks")
                .and_then(|h| h.get(*event))
                .and_then(Value::as_array)
                .and_then(|groups| groups.iter().find_map(capture_group_command))
                .map(str::to_owned),
        })
        .collect()
}

/// Installs or uninstalls the capture hooks in the settings file at `path`
/// ([`claude_settings::edit`]: links followed, read-only refused, locked, every other byte
/// kept). Install keeps the previous file as `<file>.sessiondb.bak`; uninstall leaves that
/// copy alone and removes a file left holding only `{}\n` (what install creates a missing
/// file from).
///
/// # Errors
/// As [`claude_settings::edit`], and a `hooks` shaped otherwise than Claude Code reads it.
pub fn edit_settings(path: &Path, command: Option<&str>) -> Result<(bool, Edited)> {
    let options = claude_settings::Options {
        backup: command.is_some(),
        remove_when_empty: command.is_none(),
    };
    claude_settings::edit(path, &options, |doc| {
        check_hooks_shape(path, &doc.value())?;
        Ok(match command {
            Some(command) => install(doc, command),
            None => uninstall(doc),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CMD: &str = "/opt/bin/sessiondb capture";

    #[test]
    fn commands_are_quoted_and_recognised() {
        let cmd = capture_command(Path::new("/my tools/sessiondb"), Some(Path::new("/d/s.db")));
        assert_eq!(cmd, "'/my tools/sessiondb' --db /d/s.db capture");
        assert!(is_capture_command(&cmd));
        assert!(is_capture_command(CMD));
        assert!(is_capture_command("sessiondb capture"));
        assert!(!is_capture_command("/bin/notify capture"));
        assert!(!is_capture_command("/opt/bin/sessiondb import"));
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    fn doc(v: Value) -> Document {
        Document::parse(serde_json::to_string_pretty(&v).expect("json")).expect("valid")
    }

    #[test]
    fn install_keeps_other_hooks_and_is_idempotent() {
        let original = json!({
            "model": "opus",
            "hooks": {
                "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]
            },
            "z": [1, 2]
        });
        let mut d = doc(original.clone());
        let text = d.text().to_owned();
        assert!(install(&mut d, CMD));
        let once = d.clone();
        assert!(!install(&mut d, CMD), "a second install changes nothing");
        assert_eq!(d, once);
        let s = d.value();
        assert_eq!(s["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
        assert_eq!(s["hooks"]["Stop"][1]["hooks"][0]["command"], CMD);
        assert_eq!(s["hooks"]["PreToolUse"], original["hooks"]["PreToolUse"]);
        assert!(status(&s).iter().all(|i| i.command.as_deref() == Some(CMD)));
        let keys: Vec<_> = s.as_object().expect("obj").keys().cloned().collect();
        assert_eq!(keys, ["model", "hooks", "z"], "key order kept");
        assert!(uninstall(&mut d));
        assert_eq!(
            d.text(),
            text,
            "uninstall removes exactly what install added"
        );
        assert!(!uninstall(&mut d));
    }

    #[test]
    fn install_into_empty_settings_and_back() {
        let mut d = Document::parse("{}\n".to_owned()).expect("valid");
        assert!(install(&mut d, CMD));
        for event in EVENTS {
            assert_eq!(d.value()["hooks"][event].as_array().map(Vec::len), Some(1));
        }
        assert!(uninstall(&mut d));
        assert_eq!(d.text(), "{}\n");
    }

    #[test]
    fn a_moved_binary_replaces_the_old_group() {
        let mut d = Document::parse("{}".to_owned()).expect("valid");
        install(&mut d, "/old/sessiondb capture");
        assert!(install(&mut d, CMD));
        let s = d.value();
        assert_eq!(s["hooks"]["Stop"].as_array().map(Vec::len), Some(1));
        assert_eq!(s["hooks"]["Stop"][0]["hooks"][0]["command"], CMD);
    }

    #[test]
    fn a_group_with_more_than_our_hook_is_not_ours() {
        let shared = json!({"hooks": [
            {"type": "command", "command": CMD},
            {"type": "command", "command": "other"}
        ]});
        let mut d = doc(json!({"hooks": {"Stop": [shared.clone()]}}));
        assert!(!uninstall(&mut d));
        assert_eq!(d.value()["hooks"]["Stop"][0], shared);
    }
}
