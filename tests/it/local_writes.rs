//! Issue 13 item 9: lines written locally (append, tag, rename, a SessionStore append) to an
//! imported session stay live when a re-import finds its source file rewritten.

use crate::support::{
    assistant_record, output_with_stdin, sessiondb, sessiondb_command, sessiondb_ok, user_record,
};
use serde_json::value::RawValue;
use sessiondb::streams::{self, StreamKey};
use std::path::Path;

const SESSION: &str = "5e550000-0000-4000-8000-000000000001";

fn run_with_stdin(db: &Path, args: &[&str], stdin: &str) {
    let mut command = sessiondb_command(db);
    command.args(args);
    let out = output_with_stdin(command, stdin.as_bytes());
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ok(db: &Path, args: &[&str]) -> String {
    String::from_utf8(sessiondb_ok(db, args)).expect("utf-8")
}

/// Imports a two-line session, lets `write` add lines, rewrites the source file (its first
/// line changed, plus `extra` lines) and re-imports: returns the export and the local lines.
fn rewrite_after(
    write: impl FnOnce(&Path, &Path),
    extra: impl FnOnce(&str) -> Vec<String>,
) -> (String, String, Path2) {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("projects/-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join(format!("{SESSION}.jsonl"));
    let first = [
        user_record(SESSION, "u1", None, "hello"),
        assistant_record(SESSION, "a1", "u1", "hi there"),
    ];
    std::fs::write(&file, format!("{}\n{}\n", first[0], first[1])).expect("write");
    let db = dir.path().join("s.db");
    ok(&db, &["import", &project.to_string_lossy()]);
    let before = ok(&db, &["export", SESSION]);
    write(&db, &project);
    let after_write = ok(&db, &["export", SESSION]);
    let local = after_write
        .strip_prefix(&before)
        .expect("local lines follow the file's")
        .to_owned();
    assert!(!local.is_empty(), "the writer wrote nothing");
    // Rewritten: the first line changed (an edit, a compaction rewrite, a sync).
    let mut rewritten = format!(
        "{}\n{}\n",
        user_record(SESSION, "u1", None, "hello, edited"),
        first[1]
    );
    for line in extra(&local) {
        rewritten.push_str(&line);
        rewritten.push('\n');
    }
    std::fs::write(&file, &rewritten).expect("rewrite");
    let out = sessiondb(&db, &["import", "--json", &project.to_string_lossy()]);
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["files_rewritten"], 1, "{report}");
    let exported = ok(&db, &["export", SESSION]);
    assert!(
        exported.starts_with(&rewritten),
        "the new file's lines first: {exported}"
    );
    (exported, local, Path2(dir, db, rewritten))
}

/// Keeps the temporary folder alive with the database path and the rewritten file.
struct Path2(tempfile::TempDir, std::path::PathBuf, String);

#[test]
fn appended_lines_survive_a_rewrite_and_stay_searchable_and_resumable() {
    let (exported, local, Path2(_dir, db, rewritten)) = rewrite_after(
        |db, _| {
            let entry = user_record(SESSION, "u2", None, "zebracorn question") + "\n";
            run_with_stdin(db, &["append", SESSION], &entry);
        },
        |_| Vec::new(),
    );
    assert_eq!(exported, format!("{rewritten}{local}"));
    let hits = ok(&db, &["search", "zebracorn", "--json"]);
    assert!(hits.contains(SESSION), "{hits}");
    let resumed = ok(&db, &["resume", SESSION, "--api"]);
    assert!(resumed.contains("zebracorn"), "{resumed}");
    let info = ok(&db, &["info", SESSION, "--json"]);
    assert!(info.contains(SESSION), "{info}");
}

#[test]
fn tags_and_titles_survive_a_rewrite() {
    let (exported, local, Path2(_dir, db, rewritten)) = rewrite_after(
        |db, _| {
            ok(db, &["tag", SESSION, "keepme"]);
            ok(db, &["rename", SESSION, "Kept title"]);
        },
        |_| Vec::new(),
    );
    assert_eq!(local.lines().count(), 2);
    assert_eq!(exported, format!("{rewritten}{local}"));
    let info = ok(&db, &["info", SESSION, "--json"]);
    assert!(
        info.contains("keepme") && info.contains("Kept title"),
        "{info}"
    );
}

#[test]
fn serve_appends_survive_a_rewrite() {
    let (exported, local, Path2(_dir, _db, rewritten)) = rewrite_after(
        |db, _| {
            let store = sessiondb::Store::open(db).expect("open");
            let key = StreamKey {
                project_key: "-w".into(),
                session_id: SESSION.into(),
                subpath: None,
            };
            let entry =
                RawValue::from_string(user_record(SESSION, "u3", Some("a1"), "from the sdk"))
                    .expect("raw");
            streams::append(&store, &key, &[&*entry]).expect("append");
        },
        |_| Vec::new(),
    );
    assert_eq!(exported, format!("{rewritten}{local}"));
}

#[test]
fn lines_the_new_file_already_holds_are_not_repeated() {
    // The rewritten file holds the appended line (same uuid, other bytes) and the tag line
    // (same bytes): neither is carried over again.
    let (exported, local, Path2(_dir, _db, rewritten)) = rewrite_after(
        |db, _| {
            run_with_stdin(
                db,
                &["append", SESSION],
                &(user_record(SESSION, "u2", None, "local") + "\n"),
            );
            ok(db, &["tag", SESSION, "t"]);
        },
        |local| {
            let lines: Vec<&str> = local.lines().collect();
            assert_eq!(lines.len(), 2);
            assert!(lines[0].contains("\"u2\""));
            vec![
                user_record(SESSION, "u2", Some("a1"), "synced back, with other bytes"),
                lines[1].to_owned(),
            ]
        },
    );
    assert_eq!(local.lines().count(), 2);
    assert_eq!(exported, rewritten);
}
