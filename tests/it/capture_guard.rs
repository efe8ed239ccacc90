//! What `sessiondb capture` refuses to take from a hook payload (issue 28, items 4 and 12):
//! files outside Claude Code's projects folder and links are logged and skipped (exit 0),
//! and a payload whose pipe stays open does not hold the hook.

use crate::capture::{append, line, rows_of, Home, SESSION};
use crate::support::{count, sessiondb_command};
use sessiondb::Store;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn payload_for(home: &Home, transcript: &std::path::Path) -> String {
    serde_json::json!({
        "session_id": SESSION,
        "transcript_path": transcript,
        "cwd": home.cwd,
        "hook_event_name": "Stop",
    })
    .to_string()
}

#[test]
fn capture_takes_only_regular_files_under_the_projects_folder() {
    let home = Home::new();
    let project = home.config.join("projects").join(home.project());
    // A secret outside the tree, and a link to it with a transcript's name inside it.
    let secret = home.cwd.join("shadow.jsonl");
    std::fs::write(&secret, "{\"type\":\"user\",\"secret\":\"hunter2\"}\n").expect("write");
    std::fs::create_dir_all(&project).expect("mkdir");
    let main = project.join(format!("{SESSION}.jsonl"));
    append(&main, &line(1, ""));
    // A first, honest capture creates the database.
    home.capture(&payload_for(&home, &main));
    let store = Store::open(&home.db).expect("open");
    assert_eq!(rows_of(&store, ""), 1);
    #[cfg(unix)]
    {
        let link = project.join("6a7b8c9d-0000-4000-8000-000000000001.jsonl");
        std::os::unix::fs::symlink(&secret, &link).expect("link");
        home.capture(&payload_for(&home, &link));
        // A folder linked into the tree is outside it once resolved.
        let linked_folder = home.config.join("projects").join("-linked");
        std::os::unix::fs::symlink(&home.cwd, &linked_folder).expect("link");
        home.capture(&payload_for(&home, &linked_folder.join("shadow.jsonl")));
    }
    home.capture(&payload_for(&home, &secret));
    let escape = project.join("../../../work/shadow.jsonl");
    home.capture(&payload_for(&home, &escape));
    // A SubagentStop payload whose main transcript is honest but whose sub-agent path is
    // outside the tree: the whole payload is skipped.
    let mut agent =
        serde_json::from_str::<serde_json::Value>(&payload_for(&home, &main)).expect("payload");
    agent["hook_event_name"] = "SubagentStop".into();
    agent["agent_transcript_path"] = secret.to_string_lossy().into_owned().into();
    home.capture(&agent.to_string());
    assert_eq!(
        count(&store, "transcripts"),
        1,
        "only the honest transcript"
    );
    let log = home.log();
    assert!(
        log.contains("not inside Claude Code's projects folder"),
        "{log}"
    );
    #[cfg(unix)]
    assert!(
        log.contains("a symbolic link, which is not followed"),
        "{log}"
    );
    let out_dir = home.cwd.join("out");
    let export = crate::support::sessiondb(
        &home.db,
        &["export", "--all", "--out", &out_dir.to_string_lossy()],
    );
    assert!(export.status.success());
    let out = crate::support::read_tree(&out_dir);
    assert!(
        out.values()
            .all(|bytes| !String::from_utf8_lossy(bytes).contains("hunter2")),
        "the secret was never stored"
    );
}

/// Claude Code writes the payload and may keep the pipe open: capture stops reading at the
/// end of the JSON value and does its work at once.
#[test]
fn capture_reads_the_payload_without_waiting_for_the_pipe_to_close() {
    let home = Home::new();
    let main = home
        .config
        .join("projects")
        .join(home.project())
        .join(format!("{SESSION}.jsonl"));
    append(&main, &line(1, ""));
    let mut command = sessiondb_command(&home.db);
    command
        .arg("capture")
        .env("CLAUDE_CONFIG_DIR", &home.config)
        .env("XDG_STATE_HOME", &home.state)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(payload_for(&home, &main).as_bytes())
        .expect("write");
    stdin.flush().expect("flush");
    // The pipe stays open while we wait.
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "capture still waits for the pipe to close"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    assert!(status.success());
    let store = Store::open(&home.db).expect("open");
    assert_eq!(rows_of(&store, ""), 1, "captured");
    // Nothing at all on an open pipe: capture gives up after its deadline, logged.
    let mut command = sessiondb_command(&home.db);
    command
        .arg("capture")
        .env("CLAUDE_CONFIG_DIR", &home.config)
        .env("XDG_STATE_HOME", &home.state)
        .stdin(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().expect("spawn");
    let held = child.stdin.take();
    let status = child.wait().expect("wait");
    drop(held);
    assert!(status.success());
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(
        home.log().contains("no whole hook payload"),
        "{}",
        home.log()
    );
}
