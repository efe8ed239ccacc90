//! The command line's contract: exit codes, messages that name the problem, and the
//! sample-sessions set-up command of the README.

use crate::support::{import_samples, samples, sessiondb, sessiondb_command};

#[test]
fn import_of_the_sample_sessions_prints_a_summary_and_json() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let samples = samples();
    let out = sessiondb(&db, &["import", &samples.to_string_lossy()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 sessions"), "{text}");
    assert!(text.contains("MB/s"), "{text}");
    let out = sessiondb(&db, &["import", &samples.to_string_lossy(), "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["new_rows"], 0);
    assert_eq!(report["files_unchanged"], report["files"]);
}

#[test]
fn unknown_and_ambiguous_sessions_exit_1_with_a_message() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    import_samples(&db);
    let out = sessiondb(&db, &["export", "0000dead"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session matches \"0000dead\""));
    // An empty id prefix within the samples' project matches both of its sessions.
    let out = sessiondb(&db, &["resume", "--", "-home-dev-weather-app/"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ambiguous"));
    let out = sessiondb(&db, &["export", "7c9d2e41"]);
    assert!(out.status.success(), "a unique prefix works");
}

#[test]
fn usage_errors_exit_2_and_a_missing_path_is_named() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let out = sessiondb(&db, &["export"]);
    assert_eq!(out.status.code(), Some(2));
    let out = sessiondb(&db, &["no-such-verb"]);
    assert_eq!(out.status.code(), Some(2));
    let missing = dir.path().join("nowhere");
    let out = sessiondb(&db, &["import", &missing.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nowhere"));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    import_samples(&db);
    let mut child = sessiondb_command(&db)
        .args(["export", "8e1f3a52"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}
