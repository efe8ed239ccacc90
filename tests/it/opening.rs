//! Opening the database: read verbs create nothing, read-only files and folders can be read,
//! racing first opens all succeed, errors name their cause once, and a full disk does not
//! stop `search` from reading.

use crate::support::{import, import_samples, samples, sessiondb, sessiondb_command};
use sessiondb::{search, Error, Store};
use std::path::{Path, PathBuf};
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const SESSION: &str = "7c9d2e41";

/// Every file under `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn read_and_change_verbs_on_a_missing_database_exit_1_and_create_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("typo").join("sessions.db");
    let verbs: &[&[&str]] = &[
        &["sessions"],
        &["sessions", "--limit", "1"],
        &["info", SESSION],
        &["messages", SESSION],
        &["agents", SESSION],
        &["search", "weather"],
        &["resume", SESSION],
        &["continue", "--project", "-home-dev-weather-app"],
        &["export", SESSION],
        &["export", "--all", "--out", "out"],
        &["rename", SESSION, "t"],
        &["tag", SESSION, "t"],
        &["delete", SESSION, "--yes"],
        &["fork", SESSION],
        &["reindex"],
    ];
    for args in verbs {
        let out = sessiondb(&db, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).trim_end(),
            format!("sessiondb: no database at {}", db.display()),
            "{args:?}"
        );
        assert!(
            listing(dir.path()).is_empty(),
            "{args:?} created {:?}",
            listing(dir.path())
        );
    }
    // The verbs that create one still do.
    import_samples(&db);
    assert!(db.is_file());
}

#[test]
fn a_folder_a_text_file_and_a_foreign_sqlite_file_are_named_once() {
    let samples = samples().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().expect("tmp");
    let out = sessiondb(dir.path(), &["sessions"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim_end(),
        format!(
            "sessiondb: cannot open {}: it is a folder",
            dir.path().display()
        )
    );

    let readme = dir.path().join("README.md");
    std::fs::write(
        &readme,
        "# not a database\n\nsome text that is long enough\n",
    )
    .expect("w");
    for args in [
        &["sessions"][..],
        &["import", &samples],
        &["tag", SESSION, "x"],
    ] {
        let out = sessiondb(&readme, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&out).trim_end(),
            format!(
                "sessiondb: {} is not a sessiondb database",
                readme.display()
            ),
            "{args:?}"
        );
    }
    assert_eq!(
        std::fs::read(&readme).expect("read"),
        b"# not a database\n\nsome text that is long enough\n"
    );

    // SQLite, but another application's: refused, not migrated into.
    let foreign = dir.path().join("other.sqlite");
    let conn = rusqlite::Connection::open(&foreign).expect("open");
    conn.execute_batch("CREATE TABLE notes (body TEXT)")
        .expect("create");
    drop(conn);
    for args in [&["sessions"][..], &["import", &samples]] {
        let out = sessiondb(&foreign, args);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            stderr(&out).trim_end(),
            format!(
                "sessiondb: {} is not a sessiondb database",
                foreign.display()
            )
        );
    }
    let tables: i64 = rusqlite::Connection::open(&foreign)
        .expect("open")
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .expect("count");
    assert_eq!(tables, 1, "nothing was added to the foreign database");
}

#[test]
fn errors_name_an_unreadable_file_once() {
    // Root reads any file, so the permission error is checked on the library's message only
    // when the test runs unprivileged; the one-message rule is checked either way.
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    import_samples(&db);
    #[cfg(unix)]
    chmod(&db, 0o000);
    let readable = std::fs::File::open(&db).is_ok();
    let out = sessiondb(&db, &["sessions"]);
    #[cfg(unix)]
    chmod(&db, 0o600);
    if readable {
        eprintln!("running as root: a 0000 file is readable, so only the read-only rule applies");
        // 0000 has no write bit: the database is opened read-only and still lists.
        assert!(out.status.success(), "{}", stderr(&out));
    } else {
        assert_eq!(
            stderr(&out).trim_end(),
            format!("sessiondb: cannot open {}: permission denied", db.display())
        );
    }
}

#[cfg(unix)]
#[test]
fn a_read_only_file_or_folder_is_read_and_writes_fail_clearly() {
    let samples = samples().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().expect("tmp");
    let folder = dir.path().join("data");
    std::fs::create_dir(&folder).expect("mkdir");
    let db = folder.join("s.db");
    import_samples(&db);
    assert_eq!(listing(&folder), ["s.db"], "import leaves no -wal/-shm");
    let before = std::fs::read(&db).expect("read");

    // A 0400 file in a writable folder.
    chmod(&db, 0o400);
    for args in [&["sessions"][..], &["info", SESSION], &["export", SESSION]] {
        let out = sessiondb(&db, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(listing(&folder), ["s.db"], "no -wal/-shm left behind");
    let out = sessiondb(&db, &["tag", SESSION, "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim_end(),
        format!(
            "sessiondb: cannot write to {}: the file is read-only (mode 0400)",
            db.display()
        )
    );
    let out = sessiondb(&db, &["import", &samples]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("read-only"), "{}", stderr(&out));
    assert_eq!(listing(&folder), ["s.db"]);

    // A writable file in a read-only folder.
    chmod(&db, 0o600);
    chmod(&folder, 0o500);
    let out = sessiondb(&db, &["sessions", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let out_tag = sessiondb(&db, &["rename", SESSION, "new title"]);
    chmod(&folder, 0o700);
    assert_eq!(listed.as_array().map(Vec::len), Some(2));
    assert_eq!(out_tag.status.code(), Some(1));
    assert_eq!(
        stderr(&out_tag).trim_end(),
        format!(
            "sessiondb: cannot write to {}: its folder {} is read-only (mode 0500)",
            db.display(),
            folder.display()
        )
    );
    assert_eq!(listing(&folder), ["s.db"]);
    assert_eq!(
        std::fs::read(&db).expect("read"),
        before,
        "nothing was written"
    );
}

#[cfg(unix)]
#[test]
fn a_read_only_store_refuses_writes_in_the_library() {
    let (dir, store) = crate::support::temp_store();
    import(&store, &[&samples()]);
    let path = store.path().to_owned();
    drop(store);
    chmod(&path, 0o400);
    let store = Store::open_read(&path).expect("open read-only");
    assert!(store.read_only_reason().is_some());
    let err = store.write(|_| Ok(())).expect_err("read-only");
    assert!(matches!(err, Error::ReadOnly { .. }), "{err}");
    assert!(matches!(
        Store::open(&path).err(),
        Some(Error::ReadOnly { .. })
    ));
    chmod(&path, 0o600);
    drop(dir);
}

#[test]
fn eight_processes_opening_a_new_database_at_once_all_succeed() {
    let sample: PathBuf =
        samples().join("-home-dev-weather-app/7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71.jsonl");
    for round in 0..6 {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("new.db");
        let children: Vec<_> = (0..8)
            .map(|_| {
                sessiondb_command(&db)
                    .arg("import")
                    .arg(&sample)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().expect("wait");
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let out = sessiondb(&db, &["sessions", "--json"]);
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(listed.as_array().map(Vec::len), Some(1));
    }
}

#[test]
fn threads_opening_a_new_database_at_once_all_succeed() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("new.db");
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| Store::open(&db).map(drop)))
            .collect();
        for h in handles {
            h.join().expect("thread").expect("open");
        }
    });
}

#[test]
fn a_search_whose_index_cannot_catch_up_still_reads() {
    // Lines appended by `append` wait in the search queue until the next search indexes them.
    // That write fails on a full disk; SQLite's page limit makes it fail the same way here
    // (SQLITE_FULL, "database or disk is full") on the read store's one connection.
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    import_samples(&db);
    let mut append = sessiondb_command(&db)
        .args(["append", SESSION])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = append.stdin.take().expect("stdin");
        // Enough distinct words that indexing them needs new pages.
        for i in 0..64 {
            let words: Vec<String> = (0..400).map(|w| format!("w{i}x{w}")).collect();
            let line = serde_json::json!({
                "type": "user",
                "message": {"role": "user", "content": format!("zebracorn {}", words.join(" "))},
                "uuid": format!("0b6f2b2e-1111-4222-8333-{i:012}"),
                "timestamp": "2026-01-01T00:00:00.000Z",
            });
            writeln!(stdin, "{line}").expect("write");
        }
    }
    assert!(append.wait().expect("append").success());

    let store = Store::open_read(&db).expect("open");
    {
        let conn = store.reader().expect("reader");
        let pending: i64 = conn
            .query_row("SELECT count(*) FROM search_pending", [], |r| r.get(0))
            .expect("count");
        assert!(pending > 0, "the appended line waits for the index");
        // No free page left to reuse, and no page may be added.
        conn.execute_batch("VACUUM").expect("vacuum");
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .expect("pages");
        conn.pragma_update(None, "max_page_count", pages)
            .expect("limit");
    }
    let err = search::catch_up(&store).expect_err("the disk is full");
    assert!(err.to_string().contains("full"), "{err}");
    let query = search::SearchQuery {
        text: "forecast".to_owned(),
        project: None,
        tag: None,
        role: None,
        tools: false,
        limit: Some(10),
        marks: None,
    };
    let hits = search::search(&store.reader().expect("reader"), &query).expect("search");
    assert!(!hits.is_empty(), "reads work after the failed catch-up");
    drop(store);

    // The command line: a database it cannot write (0400) with lines waiting: a warning, and
    // the search of what is indexed.
    #[cfg(unix)]
    {
        chmod(&db, 0o400);
        let out = sessiondb(&db, &["search", "forecast"]);
        chmod(&db, 0o600);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!out.stdout.is_empty());
        assert!(
            stderr(&out).contains("warning: the search index could not be brought up to date"),
            "{}",
            stderr(&out)
        );
        // Writable again, the next search indexes the appended line.
        let out = sessiondb(&db, &["search", "zebracorn"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("zebracorn"));
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    }
}

/// Issue 28 item 14: a libpq `key=value` connection string as `--db` or `SESSIONDB_PATH` is
/// refused, without being repeated (it may hold a password) and without creating a file of
/// that name; `hooks install` does not write it into the settings.
#[test]
fn a_libpq_keyword_string_is_refused_and_never_echoed() {
    let dir = tempfile::tempdir().expect("tmp");
    let conninfo = "host=db.example user=ann password=s3cret dbname=sessions";
    let settings = dir.path().join("settings.json");
    let run = |args: &[&str], env: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"));
        if env {
            command.env("SESSIONDB_PATH", conninfo);
        } else {
            command
                .arg("--db")
                .arg(conninfo)
                .env_remove("SESSIONDB_PATH");
        }
        command
            .args(args)
            .current_dir(dir.path())
            .env("CLAUDE_CONFIG_DIR", dir.path())
            .output()
            .expect("run")
    };
    let settings_arg = settings.to_string_lossy().into_owned();
    for (args, env) in [
        (vec!["sessions"], false),
        (vec!["import", "."], false),
        (vec!["import", "."], true),
        (vec!["hooks", "install", "--settings", &settings_arg], false),
        (vec!["hooks", "install", "--settings", &settings_arg], true),
    ] {
        let out = run(&args, env);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {all}");
        assert!(
            all.contains("key=value") && all.contains("PGPASSWORD"),
            "{args:?}: {all}"
        );
        assert!(
            !all.contains("s3cret"),
            "{args:?} echoed the password: {all}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(left.is_empty(), "nothing created: {left:?}");
    // `--help` says where a team store's password goes instead of the URL.
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--help")
        .output()
        .expect("run");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("PGPASSWORD") && help.contains(".pgpass"),
        "{help}"
    );
}
