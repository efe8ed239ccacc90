//! How sessiondb edits Claude Code's settings files (issue 28, items 3, 9, 10 and 11):
//! through a symbolic link, byte for byte, never a read-only file, and never losing a
//! concurrent writer's update. `src/claude_settings.rs` is the module; `hooks install` and
//! `hooks uninstall` are its users here.

use crate::support::*;
use serde_json::json;
use sessiondb::claude_settings::{self, Options};
use std::path::Path;
use std::process::Output;

fn hooks(settings: &Path, verb: &str) -> Output {
    let dir = settings.parent().expect("folder");
    let mut command = sessiondb_command(&dir.join("s.db"));
    command
        .args(["hooks", verb, "--settings"])
        .arg(settings)
        .env("XDG_STATE_HOME", dir.join("state"));
    output_with_stdin(command, b"")
}

/// Odd but valid formatting that a re-serialisation would change: four-space indentation,
/// a `\u` escape, `1.0e3`, a trailing blank line, other hooks.
const ODD: &str = "{\n    \"model\": \"op\\u0065s\",\n    \"n\": 1.0e3,\n    \"hooks\": {\n        \"Stop\": [\n            {\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n        ]\n    },\n    \"list\": [1, 2.50, -0]\n}\n\n";

#[test]
fn uninstall_gives_back_every_byte_and_keeps_the_backup() {
    let dir = tempfile::tempdir().expect("tmp");
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, ODD).expect("write");
    assert_success(&hooks(&settings, "install"));
    let installed = std::fs::read_to_string(&settings).expect("read");
    assert!(installed.contains("SubagentStop"), "{installed}");
    assert!(
        installed.starts_with("{\n    \"model\": \"op\\u0065s\",\n    \"n\": 1.0e3,"),
        "the rest is kept as written: {installed}"
    );
    let bak = claude_settings::backup_path(&settings);
    assert_eq!(std::fs::read_to_string(&bak).expect("backup"), ODD);
    assert_success(&hooks(&settings, "uninstall"));
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), ODD);
    assert_eq!(
        std::fs::read_to_string(&bak).expect("backup"),
        ODD,
        "uninstall leaves the backup of the original alone"
    );
    // A file install created is removed by uninstall.
    let new = dir.path().join("new/settings.json");
    assert_success(&hooks(&new, "install"));
    assert!(new.is_file());
    assert_success(&hooks(&new, "uninstall"));
    assert!(!new.exists(), "the file install created is gone");
}

#[cfg(unix)]
#[test]
fn a_linked_settings_file_is_edited_where_it_lives_and_stays_a_link() {
    let dir = tempfile::tempdir().expect("tmp");
    let dotfiles = dir.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).expect("mkdir");
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, "{\"model\": \"opus\"}\n").expect("write");
    let config = dir.path().join("claude");
    std::fs::create_dir_all(&config).expect("mkdir");
    let link = config.join("settings.json");
    std::os::unix::fs::symlink("../dotfiles/claude-settings.json", &link).expect("link");
    assert_success(&hooks(&link, "install"));
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    let text = std::fs::read_to_string(&real).expect("read");
    assert!(
        text.contains("SessionEnd"),
        "the target gets the hooks: {text}"
    );
    assert!(
        std::fs::read_dir(&config).expect("ls").count() == 1,
        "nothing written beside the link"
    );
    assert_success(&hooks(&link, "uninstall"));
    assert_eq!(
        std::fs::read_to_string(&real).expect("read"),
        "{\"model\": \"opus\"}\n"
    );
    // A link to nothing is refused, and stays.
    let dangling = config.join("dangling.json");
    std::os::unix::fs::symlink("../nowhere/settings.json", &dangling).expect("link");
    let out = hooks(&dangling, "install");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    assert!(std::fs::symlink_metadata(&dangling).is_ok());
}

#[cfg(unix)]
#[test]
fn a_read_only_settings_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tmp");
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, "{}").expect("write");
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    for verb in ["install", "uninstall"] {
        let out = hooks(&settings, verb);
        let err = String::from_utf8_lossy(&out.stderr);
        if verb == "install" {
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(err.contains("read-only (mode 0444)"), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&settings).expect("read"), "{}");
        assert_eq!(
            std::fs::metadata(&settings)
                .expect("meta")
                .permissions()
                .mode()
                & 0o777,
            0o444
        );
    }
}

/// Another writer sets 300 keys through the same module while hooks are installed and
/// removed over and over: none of its updates is lost.
#[test]
fn concurrent_edits_lose_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let settings = dir.path().join("settings.json");
    std::fs::write(&settings, "{\"keep\": true}\n").expect("write");
    let writer = {
        let settings = settings.clone();
        std::thread::spawn(move || {
            for i in 0..300 {
                claude_settings::edit(&settings, &Options::default(), |doc| {
                    Ok(doc.set(&["counters"], &format!("k{i}"), &json!(i)))
                })
                .expect("edit");
            }
        })
    };
    let command = "/opt/sessiondb capture";
    while !writer.is_finished() {
        for install in [true, false] {
            sessiondb::hooks::edit_settings(&settings, install.then_some(command))
                .expect("hooks edit");
        }
    }
    writer.join().expect("writer");
    let value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&settings).expect("read")).expect("json");
    let counters = value["counters"].as_object().expect("counters");
    assert_eq!(counters.len(), 300, "every update kept");
    assert_eq!(value["keep"], json!(true));
}
