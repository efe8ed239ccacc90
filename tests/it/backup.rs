//! `sessiondb backup DEST`: a consistent, private, atomic copy while a writer runs.

use crate::support::{import, samples, sessiondb, temp_store};
use sessiondb::record::{self, AppendOptions};
use sessiondb::{backup, query};
use std::path::Path;

/// Each copy must hold whole transactions: the catalog's file size, written in the same
/// transaction as every appended line, equals the bytes of the stored lines.
fn assert_consistent(copy: &Path) -> i64 {
    let conn = rusqlite::Connection::open(copy).expect("open copy");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    assert_eq!(integrity, "ok");
    let (catalog, stored): (i64, i64) = conn
        .query_row(
            "SELECT c.file_size, (SELECT sum(length(r.raw) + r.terminated) FROM rows r
                 JOIN transcripts t ON t.id = r.transcript_id
                 WHERE t.session_id = c.session_key AND t.subpath = '' AND t.superseded_at IS NULL)
             FROM catalog c WHERE c.session_id LIKE '7c9d2e41%'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("sizes");
    assert_eq!(catalog, stored, "a torn copy");
    stored
}

#[test]
fn backups_taken_while_a_writer_appends_are_consistent_private_and_atomic() {
    let (dir, store) = temp_store();
    import(&store, &[&samples()]);
    let session = query::resolve_session(&store.reader().expect("r"), "7c9d2e41").expect("s");
    let out = dir.path().join("copies");
    std::fs::create_dir(&out).expect("mkdir");
    let dest = out.join("backup.db");
    let mut sizes = Vec::new();
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            for i in 0..150 {
                let line = format!(
                    r#"{{"type":"user","uuid":"00000000-0000-4000-8000-{i:012}","message":{{"role":"user","content":"line {i} {}"}}}}"#,
                    "x".repeat(2000)
                );
                let entries = record::parse_batch(line.as_bytes()).expect("parse");
                store
                    .append_with(&session, &entries, &AppendOptions::default())
                    .expect("append");
            }
        });
        while !writer.is_finished() {
            let report = backup::backup(&store, &dest).expect("backup");
            assert!(report.bytes > 0);
            sizes.push(assert_consistent(&dest));
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&dest).expect("meta").permissions().mode();
                assert_eq!(mode & 0o777, 0o600);
            }
        }
        writer.join().expect("writer");
    });
    backup::backup(&store, &dest).expect("final backup");
    sizes.push(assert_consistent(&dest));
    assert!(sizes.len() >= 2, "backups ran while the writer wrote");
    assert!(sizes.windows(2).all(|w| w[0] <= w[1]));
    let names: Vec<String> = std::fs::read_dir(&out)
        .expect("ls")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["backup.db"], "no temporary file is left behind");
    assert!(
        backup::backup(&store, store.path()).is_err(),
        "not onto itself"
    );
}

#[test]
fn the_backup_verb_copies_and_needs_a_database() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let dest = dir.path().join("copy.db");
    let out = sessiondb(&db, &["backup", &dest.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!db.exists() && !dest.exists());
    crate::support::import_samples(&db);
    let out = sessiondb(&db, &["backup", &dest.to_string_lossy(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(report["bytes"].as_u64().unwrap_or(0) > 0);
    let a = sessiondb(&db, &["sessions", "--json"]);
    let b = sessiondb(&dest, &["sessions", "--json"]);
    assert_eq!(a.stdout, b.stdout, "the copy lists the same sessions");
}

/// Issue 28 item 16: the temporary files that killed backups leave beside DEST are removed
/// by the next backup; one a running backup holds (its lock) is kept, and so is a recent
/// temporary of an older sessiondb, which took no lock.
#[test]
fn a_backup_removes_the_temporaries_of_killed_backups() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    assert!(sessiondb(&db, &["import", &samples().to_string_lossy()])
        .status
        .success());
    let out = dir.path().join("copies");
    std::fs::create_dir(&out).expect("mkdir");
    let file = |name: &str| {
        let path = out.join(name);
        std::fs::write(&path, b"half a database").expect("write");
        path
    };
    let killed = file(".sessiondb-backup-Ab12Cd.partial");
    let running = file(".sessiondb-backup-Ef34Gh.partial");
    let held = std::fs::File::open(&running).expect("open");
    held.lock().expect("lock, as a running backup does");
    let old_style = file(".sessiondb-backup-Ij56Kl");
    std::fs::File::options()
        .write(true)
        .open(&old_style)
        .expect("open")
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(7200))
        .expect("age it");
    let recent_old_style = file(".sessiondb-backup-Mn78Op");
    let unrelated = file("notes.partial");

    let dest = out.join("backup.db");
    let run = sessiondb(&db, &["backup", &dest.to_string_lossy()]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(err.contains("removed 2 temporary files"), "{err}");
    assert!(
        !killed.exists() && !old_style.exists(),
        "stale ones removed"
    );
    assert!(
        running.exists() && recent_old_style.exists() && unrelated.exists(),
        "a running backup's, a recent old-style one and other files kept"
    );
    assert!(dest.is_file());
    drop(held);
    let run = sessiondb(&db, &["backup", "--json", &dest.to_string_lossy()]);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).expect("json");
    assert_eq!(report["stale_temporaries_removed"], 1, "{report}");
    assert!(!running.exists(), "its lock released, it is stale");
}
