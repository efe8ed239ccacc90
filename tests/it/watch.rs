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

/// One transcript line of session `id`.
fn line_of(id: &str) -> String {
    format!(
        "{{\"parentUuid\":null,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}},\"uuid\":\"{id}\",\"timestamp\":\"2026-12-03T10:00:00.000Z\",\"sessionId\":\"{id}\",\"cwd\":\"/w\"}}\n"
    )
}

/// Writes `count` one-line sessions into `folder`, numbered from `group`.
fn write_sessions(folder: &Path, group: u32, count: u32) {
    std::fs::create_dir_all(folder).expect("mkdir");
    for n in 0..count {
        let id = format!("{group:08x}-0000-4000-8000-{n:012x}");
        std::fs::write(folder.join(format!("{id}.jsonl")), line_of(&id)).expect("write");
    }
}

/// How many sessions hold at least one stored line.
fn stored_sessions(db: &Path) -> i64 {
    let store = Store::open(db).expect("open");
    let conn = store.reader().expect("reader");
    conn.query_row(
        "SELECT count(DISTINCT t.session_id) FROM transcripts t JOIN rows r ON r.transcript_id = t.id",
        [],
        |r| r.get(0),
    )
    .expect("count")
}

/// A child process killed when the test ends early.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Issue 28 item 5: files that send no event reach the store all the same. A folder moved
/// in whole (no event for what it holds), folders created and filled at once (files written
/// before the watch on the new folder exists), and the kernel's event queue overflowing
/// (the watcher is stopped while more events than `max_queued_events` and then new sessions
/// are written, so the sessions' events are dropped by the kernel).
#[cfg(target_os = "linux")]
#[test]
fn watch_finds_files_that_sent_no_event() {
    let limit: u64 = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .expect("the inotify queue limit")
        .trim()
        .parse()
        .expect("a number");
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    let project = root.join("-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let db = dir.path().join("s.db");
    let mut child = KillOnDrop(
        sessiondb_command(&db)
            .arg("watch")
            .arg(&root)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start watch"),
    );
    let (tx, lines) = mpsc::channel();
    let stdout = child.0.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.expect("line")).is_err() {
                break;
            }
        }
    });
    let first = lines
        .recv_timeout(Duration::from_secs(20))
        .expect("a line from watch");
    assert!(first.starts_with("watching "), "{first}");
    let pid = child.0.id().to_string();
    let signal = |name: &str| {
        let sent = Command::new("kill")
            .args([name, &pid])
            .status()
            .expect("kill");
        assert!(sent.success(), "kill {name}");
    };

    let wait_for = |expected: i64| {
        let deadline = std::time::Instant::now() + Duration::from_secs(90);
        let mut stored = stored_sessions(&db);
        while stored < expected && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(300));
            stored = stored_sessions(&db);
        }
        stored
    };
    let mut printed = Vec::new();

    // A folder filled elsewhere, then moved in, and twenty folders created and filled at
    // once: found by walking the folders that appeared, no rescan needed.
    let staging = dir.path().join("staging");
    write_sessions(&staging.join("-moved"), 1, 10);
    std::fs::rename(staging.join("-moved"), root.join("-moved")).expect("move in");
    for group in 0..20 {
        write_sessions(&root.join(format!("-new{group}")), 100 + group, 25);
    }
    let stored = wait_for(10 + 20 * 25);
    printed.extend(lines.try_iter());
    let rescanned = |printed: &[String]| {
        printed
            .iter()
            .filter(|l| l.starts_with("rescanned (events were lost)"))
            .count()
    };
    let last = |printed: &[String]| printed[printed.len().saturating_sub(3)..].to_vec();
    assert_eq!(
        (stored, rescanned(&printed)),
        (10 + 20 * 25, 0),
        "sessions in new folders imported, without a rescan; {} lines printed, the last: {:?}",
        printed.len(),
        last(&printed)
    );

    // The queue overflows while the watcher is stopped: two files written in turn (the
    // kernel merges only an event equal to the one before it), then sessions are written
    // whose events are all dropped.
    signal("-STOP");
    // SIGSTOP takes effect asynchronously: a watcher thread still running would read events
    // and keep the queue from overflowing, so wait until every thread is stopped.
    wait_until_stopped(&pid);
    {
        let mut a = std::fs::File::create(project.join("a.txt")).expect("a");
        let mut b = std::fs::File::create(project.join("b.txt")).expect("b");
        for _ in 0..=limit / 2 + 100 {
            a.write_all(b"x").expect("write a");
            b.write_all(b"x").expect("write b");
        }
    }
    write_sessions(&project, 2, 30);
    signal("-CONT");
    let stored = wait_for(10 + 20 * 25 + 30);
    // The rescan's line is printed after its import commits: give it time to arrive.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while rescanned(&printed) == 0 && std::time::Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            printed.push(line);
        }
    }
    printed.extend(lines.try_iter());
    signal("-INT");
    let status = child.0.wait().expect("wait");
    assert_eq!(
        (stored, rescanned(&printed)),
        (10 + 20 * 25 + 30, 1),
        "sessions whose events the kernel dropped imported by a rescan; the last lines: {:?}",
        last(&printed)
    );
    assert!(status.success(), "{status}");
}

/// Waits until every thread of the process is in the stopped state (`T` in `/proc`).
#[cfg(target_os = "linux")]
fn wait_until_stopped(pid: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the watcher's threads");
        let all_stopped = tasks.flatten().all(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            // The state follows the command name, which is in parentheses.
            let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
            matches!(state, Some(Some('T' | 't')))
        });
        if all_stopped {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the watcher did not stop on SIGSTOP"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
