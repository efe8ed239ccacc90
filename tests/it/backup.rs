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

/// The `.partial` temporaries in `dir`.
fn temporaries(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .expect("ls")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with(".sessiondb-backup-") && name.ends_with(".partial")
        })
        .collect()
}

/// Issue 28, item 16, with real processes: `sessiondb backup` killed with SIGKILL at several
/// moments (before it made its temporary, as soon as it did, halfway through the copy, once
/// the copy is as large as the database) leaves the store as it was and DEST the last whole
/// backup, never a part of one; the next backup removes what the killed ones left and
/// writes a whole copy.
#[test]
fn a_backup_killed_at_any_moment_leaves_the_last_whole_backup_and_the_next_cleans_up() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    crate::support::import_samples(&db);
    // Padding, so that a copy takes long enough to be killed in the middle of it.
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute_batch(
            "CREATE TABLE backup_test_padding (b BLOB);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 96)
             INSERT INTO backup_test_padding SELECT randomblob(1048576) FROM n;",
        )
        .expect("pad");
    }
    let db_bytes = std::fs::metadata(&db).expect("meta").len();
    let sessions = |path: &Path| sessiondb(path, &["sessions", "--json"]).stdout;
    let listed = sessions(&db);
    let integrity = |path: &Path| -> String {
        rusqlite::Connection::open(path)
            .expect("open")
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("integrity")
    };
    let out = dir.path().join("copies");
    std::fs::create_dir(&out).expect("mkdir");
    let dest = out.join("backup.db");
    let first = sessiondb(&db, &["backup", &dest.to_string_lossy()]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let whole = std::fs::read(&dest).expect("read the first backup");

    // Kill points: a temporary's size to wait for (None: kill at once).
    let points = [None, Some(0), Some(db_bytes / 2), Some(db_bytes)];
    let mut killed_with_temporary = 0;
    for point in points {
        let before = temporaries(&out);
        let mut child = crate::support::sessiondb_command(&db)
            .arg("backup")
            .arg(&dest)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        // Not a timing bound: only a guard against a hung child.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        let killed = loop {
            if child.try_wait().expect("wait").is_some() {
                break false;
            }
            let reached = match point {
                None => true,
                Some(size) => temporaries(&out).iter().any(|t| {
                    !before.contains(t) && std::fs::metadata(t).is_ok_and(|m| m.len() >= size)
                }),
            };
            if reached || std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break true;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        // Each backup first removes the temporaries earlier killed ones left: a new one
        // here is this run's.
        let left_its_own = temporaries(&out).iter().any(|t| !before.contains(t));
        if killed && left_its_own {
            killed_with_temporary += 1;
        }
        // The store is untouched.
        assert_eq!(integrity(&db), "ok", "the store after a kill at {point:?}");
        assert_eq!(sessions(&db), listed, "the store after a kill at {point:?}");
        // DEST is a whole backup: the last one, or (the kill came after the rename) a new one.
        let now = std::fs::read(&dest).expect("DEST is still there");
        if killed && left_its_own {
            assert!(now == whole, "killed before its rename, yet DEST changed");
        } else if now != whole {
            assert_eq!(integrity(&dest), "ok", "kill at {point:?}");
            assert_eq!(sessions(&dest), listed, "kill at {point:?}");
        }
    }
    assert!(
        killed_with_temporary >= 2,
        "kills landed while a temporary existed: {killed_with_temporary}"
    );

    // The next backup removes every temporary the killed ones left and writes a whole copy.
    let left = temporaries(&out).len();
    let run = sessiondb(&db, &["backup", &dest.to_string_lossy()]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(
        err.contains(&format!("removed {left} temporary file")),
        "{left} left: {err}"
    );
    assert!(temporaries(&out).is_empty(), "{:?}", temporaries(&out));
    let names: Vec<String> = std::fs::read_dir(&out)
        .expect("ls")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["backup.db"]);
    assert_eq!(integrity(&dest), "ok");
    assert_eq!(sessions(&dest), listed);
}
