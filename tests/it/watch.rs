//! `sessiondb watch`: a new file, a grown file and a deleted file, one line each; Ctrl-C
//! stops it cleanly; `--once` is a plain import.

use crate::support::{samples, sessiondb, sessiondb_command};
use sessiondb::Store;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const ID: &str = "5992899e-5e2b-4509-8109-e2acee6ef1ef";

fn turn(n: usize) -> String {
    format!(
        "{{\"parentUuid\":null,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"turn {n}\"}},\"uuid\":\"00000000-0000-4000-8000-{n:012}\",\"timestamp\":\"2026-12-03T10:00:0{n}.000Z\",\"sessionId\":\"{ID}\",\"cwd\":\"/w\"}}\n"
    )
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(text.as_bytes()).expect("append");
}

#[test]
fn watch_imports_new_grown_and_deleted_files_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    let project = root.join("-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let db = dir.path().join("s.db");
    let mut child = sessiondb_command(&db)
        .arg("watch")
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start watch");
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.expect("line")).is_err() {
                break;
            }
        }
    });
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line from watch")
    };
    let first = next();
    assert!(first.starts_with("watching "), "{first}");

    let main = project.join(format!("{ID}.jsonl"));
    append(&main, &format!("{}{}", turn(1), turn(2)));
    assert_eq!(next(), format!("-w/{ID}: 2 new rows"));
    append(&main, &turn(3));
    assert_eq!(next(), format!("-w/{ID}: 1 new rows"));
    let agent_dir = project.join(ID).join("subagents");
    std::fs::create_dir_all(&agent_dir).expect("mkdir");
    append(&agent_dir.join("agent-a1.jsonl"), &turn(4));
    assert_eq!(next(), format!("-w/{ID}: 1 new rows"));
    std::fs::remove_file(&main).expect("delete");
    let line = next();
    assert_eq!(
        line,
        format!("-w/{ID}: 0 new rows, 1 files vanished (rows kept)")
    );

    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    assert_eq!(next(), "stopped");
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");

    let store = Store::open(&db).expect("open");
    let conn = store.reader().expect("reader");
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
        .expect("count");
    assert_eq!(rows, 4, "the deleted file's rows are kept");
    let state: String = conn
        .query_row("SELECT source_state FROM catalog", [], |r| r.get(0))
        .expect("state");
    assert_eq!(state, "vanished");
}

#[test]
fn watch_once_is_a_plain_import() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let out = sessiondb(&db, &["watch", "--once", &samples().to_string_lossy()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 sessions"), "{text}");
}
