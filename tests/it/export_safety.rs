//! Issue 13 item 7: `export --all` never stops half-way and never overwrites a file it
//! wrote; what it cannot write is named, and the exit code is 1.

use crate::names::USER;
use crate::support::sessiondb;
use std::path::Path;

fn write_session(project: &Path, id: &str, text: &str) {
    std::fs::create_dir_all(project).expect("mkdir");
    let line = USER.replace("\"hi\"", &format!("{text:?}"));
    std::fs::write(project.join(format!("{id}.jsonl")), format!("{line}\n")).expect("write");
}

#[test]
fn bad_stored_names_are_skipped_and_collisions_never_overwrite() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    for id in ["a", "b", "c", "d", "e"] {
        write_session(&root.join("-p"), id, id);
    }
    let db = dir.path().join("s.db");
    assert!(sessiondb(&db, &["import", &root.to_string_lossy()])
        .status
        .success());
    // What an older sessiondb let in: names that are not one path component, and two
    // stored files that map to one path.
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute_batch(
            "UPDATE sessions SET session_id = '../..' WHERE session_id = 'a';
             UPDATE sessions SET session_id = '.' WHERE session_id = 'b';
             UPDATE sessions SET session_id = 'x/y' WHERE session_id = 'c';
             INSERT INTO session_files (session_id, relpath, content)
                 SELECT id, '../e.jsonl', CAST('overwritten' AS BLOB) FROM sessions
                 WHERE session_id = 'd';",
        )
        .expect("older names");
    }
    let out_dir = dir.path().join("out");
    let out = sessiondb(
        &db,
        &["export", "--all", "--out", &out_dir.to_string_lossy()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for named in ["\"../..\"", "\".\"", "\"x/y\"", "../e.jsonl"] {
        assert!(err.contains(named), "{named} not named: {err}");
    }
    // Everything else was exported, and e.jsonl is e's own transcript, not d's file.
    assert!(out_dir.join("-p/d.jsonl").is_file());
    let e = std::fs::read_to_string(out_dir.join("-p/e.jsonl")).expect("e exported");
    assert!(e.contains("\"e\""), "{e}");
    assert!(!dir.path().join("e.jsonl").exists());
    assert!(!out_dir.join("x").exists());
}

#[test]
fn two_stored_files_for_one_path_keep_the_first() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    write_session(&root.join("-p"), "s", "main");
    let agents = root.join("-p/s/subagents");
    std::fs::create_dir_all(&agents).expect("mkdir");
    std::fs::write(agents.join("agent-1.jsonl"), format!("{USER}\n")).expect("write");
    let db = dir.path().join("s.db");
    assert!(sessiondb(&db, &["import", &root.to_string_lossy()])
        .status
        .success());
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute_batch(
            "INSERT INTO session_files (session_id, relpath, content)
                 SELECT id, 'subagents/agent-1.jsonl', CAST('clobber' AS BLOB) FROM sessions;",
        )
        .expect("collision");
    }
    let out_dir = dir.path().join("out");
    let out = sessiondb(
        &db,
        &["export", "--all", "--out", &out_dir.to_string_lossy()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("subagents/agent-1.jsonl"), "{err}");
    assert!(err.contains("not overwritten"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out_dir.join("-p/s/subagents/agent-1.jsonl")).expect("read"),
        format!("{USER}\n")
    );
}

/// Issue 28 item 13: `export --all --out` into the live tree and `export -o` onto the live
/// file refuse to overwrite a transcript that holds more than the stored session (Claude
/// Code wrote to it after the last import) or other lines, as `restore` does; an earlier
/// export that the session has since outgrown is replaced.
#[test]
fn export_never_overwrites_a_newer_transcript() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    write_session(&root.join("-p"), "a", "first");
    write_session(&root.join("-p"), "b", "other");
    let db = dir.path().join("s.db");
    assert!(sessiondb(&db, &["import", &root.to_string_lossy()])
        .status
        .success());
    let live = root.join("-p/a.jsonl");
    let stored = std::fs::read(&live).expect("read");
    // Into the live tree as it is: nothing to refuse.
    let tree = root.to_string_lossy().into_owned();
    let out = sessiondb(&db, &["export", "--all", "--out", &tree]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Claude Code writes one more line.
    let mut newer = stored.clone();
    newer.extend_from_slice(&stored);
    std::fs::write(&live, &newer).expect("grow");
    let out = sessiondb(&db, &["export", "--all", "--out", &tree]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("a.jsonl") && err.contains("1 more lines"),
        "{err}"
    );
    assert_eq!(std::fs::read(&live).expect("read"), newer, "left alone");
    let live_arg = live.to_string_lossy().into_owned();
    let out = sessiondb(&db, &["export", "a", "-o", &live_arg]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("sessiondb import"), "{err}");
    assert_eq!(std::fs::read(&live).expect("read"), newer, "left alone");

    // A file that differs is refused too, naming the line.
    let other = b"{\"type\":\"user\"}\n";
    std::fs::write(&live, other).expect("rewrite");
    let out = sessiondb(&db, &["export", "a", "-o", &live_arg]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("from line 1 on"), "{err}");
    assert_eq!(std::fs::read(&live).expect("read"), other);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(root.join("-p"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // An earlier export, a beginning of the stored session, is replaced.
    std::fs::write(&live, &stored[..stored.len() / 2]).expect("cut");
    let out = sessiondb(&db, &["export", "a", "-o", &live_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&live).expect("read"), stored);
}
