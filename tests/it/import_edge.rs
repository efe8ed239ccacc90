//! Byte-exact import of odd files, the ledger's incremental rules, and crash safety.

use crate::support::*;
use sessiondb::{export, import::import_paths, model::NoProgress, query, Error, Store};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/edge")
}

fn export_main(store: &Store, arg: &str) -> Vec<u8> {
    let session = query::resolve_session(&store.reader().expect("reader"), arg).expect("session");
    let mut out = Vec::new();
    export::export_session(store, &session, &mut out).expect("export");
    out
}

#[test]
fn every_edge_fixture_round_trips() {
    let (_dir, store) = temp_store();
    let report = import(&store, &[&fixtures()]);
    assert_eq!(report.files_failed, 0);
    for entry in std::fs::read_dir(fixtures()).expect("fixtures") {
        let path = entry.expect("entry").path();
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let original = std::fs::read(&path).expect("read");
        let conn = store.reader().expect("reader");
        let session = query::resolve_session(&conn, &format!("edge/{stem}")).expect("stored");
        let mut out = Vec::new();
        export::export_session(&store, &session, &mut out).expect("export");
        assert!(out == original, "{stem} does not round-trip");
    }
}

#[test]
fn malformed_lines_are_kept_and_reported_with_file_and_line() {
    let (_dir, store) = temp_store();
    let report = import(&store, &[&fixtures()]);
    let mut found: Vec<(String, u64)> = report
        .malformed
        .iter()
        .map(|l| {
            (
                l.path
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned(),
                l.line,
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        vec![
            ("glued-records.jsonl".to_owned(), 1),
            ("invalid-utf8.jsonl".to_owned(), 2),
            ("malformed-line.jsonl".to_owned(), 2),
        ]
    );
    assert_eq!(report.malformed_lines, 3);
}

#[test]
fn unknown_types_and_fields_are_counted_and_kept() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("unknown-type.jsonl");
    std::fs::copy(fixtures().join("unknown-type.jsonl"), &file).expect("copy");
    let report = import(&store, &[&file]);
    assert_eq!(report.unknown_types, 1);
    assert_eq!(report.unknown_fields, 2);
    // Stored under the session its records carry (the file name is not a session id).
    let [named] = report.named_by_records.as_slice() else {
        panic!("{:?}", report.named_by_records)
    };
    assert_eq!(
        export_main(&store, &named.session_id),
        std::fs::read(&file).expect("read")
    );
}

#[test]
fn a_fifty_megabyte_line_round_trips() {
    slow(
        "import_edge::a_fifty_megabyte_line_round_trips",
        "imports, indexes and exports one 50 MB line",
    );
    let (dir, store) = temp_store();
    let project = dir.path().join("big");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("c0ffee00-0000-4000-8000-000000000050.jsonl");
    let text = "x".repeat(50 * 1024 * 1024);
    let line = format!(
        "{{\"parentUuid\":null,\"type\":\"user\",\"uuid\":\"u1\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
    );
    std::fs::write(&file, &line).expect("write");
    let report = import(&store, &[&file]);
    assert_eq!(report.new_rows, 1);
    assert!(export_main(&store, "c0ffee00") == line.as_bytes());
}

#[test]
fn a_torn_last_line_is_replaced_when_the_file_grows() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s.jsonl");
    std::fs::write(
        &file,
        "{\"type\":\"user\",\"uuid\":\"a\"}\n{\"type\":\"assi",
    )
    .expect("write");
    let first = import(&store, &[&file]);
    assert_eq!(first.malformed_lines, 1);
    let whole = "{\"type\":\"user\",\"uuid\":\"a\"}\n{\"type\":\"assistant\",\"uuid\":\"b\"}\n";
    std::fs::write(&file, whole).expect("write");
    let second = import(&store, &[&file]);
    assert_eq!(second.files_rewritten, 0);
    assert_eq!(second.malformed_lines, 0);
    assert_eq!(count(&store, "rows"), 2);
    assert_eq!(export_main(&store, "s"), whole.as_bytes());
}

#[test]
fn a_rewritten_file_is_reimported_and_the_old_version_kept() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s.jsonl");
    std::fs::write(
        &file,
        "{\"type\":\"user\",\"uuid\":\"a\"}\n{\"type\":\"user\",\"uuid\":\"b\"}\n",
    )
    .expect("write");
    import(&store, &[&file]);
    let shorter = "{\"type\":\"user\",\"uuid\":\"c\"}\n";
    std::fs::write(&file, shorter).expect("write");
    let report = import(&store, &[&file]);
    assert_eq!(report.files_rewritten, 1);
    assert_eq!(export_main(&store, "s"), shorter.as_bytes());
    assert_eq!(
        count(&store, "rows"),
        3,
        "the superseded version's rows are kept"
    );
    let superseded: i64 = store
        .reader()
        .expect("reader")
        .query_row(
            "SELECT count(*) FROM transcripts WHERE superseded_at IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .expect("query");
    assert_eq!(superseded, 1);
}

/// `n` user lines of about 600 bytes, each with its newline: a transcript longer than the
/// tail the ledger checks.
fn long_lines(n: usize) -> Vec<String> {
    let pad = "p".repeat(560);
    (0..n)
        .map(|i| {
            format!("{{\"type\":\"user\",\"uuid\":\"u{i}\",\"message\":{{\"role\":\"user\",\"content\":\"{pad} {i}\"}}}}\n")
        })
        .collect()
}

fn superseded(store: &Store) -> i64 {
    count_where(store, "transcripts", "superseded_at IS NOT NULL")
}

fn count_where(store: &Store, table: &str, condition: &str) -> i64 {
    store
        .reader()
        .expect("reader")
        .query_row(
            &format!("SELECT count(*) FROM {table} WHERE {condition}"),
            [],
            |r| r.get(0),
        )
        .expect("count")
}

#[test]
fn a_grown_file_is_read_from_shortly_before_its_new_lines() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s.jsonl");
    let mut lines = long_lines(3000);
    std::fs::write(&file, lines.concat()).expect("write");
    import(&store, &[&file]);
    let more = long_lines(3002).split_off(3000);
    lines.extend(more.iter().cloned());
    std::fs::write(&file, lines.concat()).expect("write");
    let report = import(&store, &[&file]);
    assert_eq!((report.new_rows, report.files_rewritten), (2, 0));
    let whole = lines.concat().len() as u64;
    let new = more.concat().len() as u64;
    assert!(
        report.bytes_read <= new + sessiondb::import::TAIL_BYTES as u64,
        "read {} of {whole} bytes to add {new}",
        report.bytes_read
    );
    assert_eq!(export_main(&store, "s"), lines.concat().as_bytes());
}

/// Claude Code's tombstone slow path rewrites a transcript without a line; when new turns
/// then make it longer than what was imported, the rewrite is still seen, though import
/// checks only the end of what it imported: removing the line moved other bytes there.
#[test]
fn a_file_rewritten_in_its_middle_then_grown_is_a_new_version() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s.jsonl");
    let lines = long_lines(3000);
    std::fs::write(&file, lines.concat()).expect("write");
    import(&store, &[&file]);
    let mut rewritten = lines.clone();
    rewritten.remove(1000);
    rewritten.extend(long_lines(3003).split_off(3000));
    assert!(rewritten.concat().len() > lines.concat().len());
    std::fs::write(&file, rewritten.concat()).expect("write");
    let report = import(&store, &[&file]);
    assert_eq!(report.files_rewritten, 1);
    assert_eq!(superseded(&store), 1);
    assert_eq!(export_main(&store, "s"), rewritten.concat().as_bytes());
    // Bytes replaced by as many others near the end of what was imported, then a new line.
    let mut edited = rewritten.clone();
    edited[2990] = edited[2990].replace("pppp", "qqqq");
    edited.extend(long_lines(3004).split_off(3003));
    std::fs::write(&file, edited.concat()).expect("write");
    let report = import(&store, &[&file]);
    assert_eq!(report.files_rewritten, 1);
    assert_eq!(superseded(&store), 2);
    assert_eq!(export_main(&store, "s"), edited.concat().as_bytes());
}

/// A ledger entry written before migration V11 holds a hash of the whole prefix and no tail
/// hash: it is still checked (reading the whole file once) and then given a tail hash.
#[test]
fn a_whole_prefix_hash_in_the_ledger_is_still_checked() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s.jsonl");
    let mut lines = long_lines(1000);
    std::fs::write(&file, lines.concat()).expect("write");
    import(&store, &[&file]);
    let set_whole_hash = |hash: i64| {
        store
            .write(|tx| {
                tx.execute(
                    "UPDATE source_files SET prefix_hash = ?1, tail_hash = NULL",
                    [hash],
                )?;
                Ok(())
            })
            .expect("update");
    };
    set_whole_hash(sessiondb::import::prefix_hash(lines.concat().as_bytes()));
    lines.extend(long_lines(1001).split_off(1000));
    std::fs::write(&file, lines.concat()).expect("write");
    let report = import(&store, &[&file]);
    assert_eq!((report.new_rows, report.files_rewritten), (1, 0));
    assert_eq!(report.bytes_read, lines.concat().len() as u64, "read whole");
    assert_eq!(
        count_where(&store, "source_files", "tail_hash IS NOT NULL"),
        1
    );
    // A whole-prefix hash the file does not match: a rewrite.
    set_whole_hash(12345);
    lines.extend(long_lines(1002).split_off(1001));
    std::fs::write(&file, lines.concat()).expect("write");
    let report = import(&store, &[&file]);
    assert_eq!(report.files_rewritten, 1);
    assert_eq!(export_main(&store, "s"), lines.concat().as_bytes());
}

#[test]
fn a_vanished_file_keeps_its_rows() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s.jsonl");
    let body = "{\"type\":\"user\",\"uuid\":\"a\"}\n";
    std::fs::write(&file, body).expect("write");
    std::fs::write(project.join("t.jsonl"), body).expect("write");
    import(&store, &[&project]);
    std::fs::remove_file(&file).expect("rm");
    let report = import(&store, &[&project]);
    assert_eq!(report.vanished_files, 1);
    assert_eq!(count(&store, "rows"), 2);
    assert_eq!(export_main(&store, "p/s"), body.as_bytes());
}

#[test]
fn unchanged_files_are_not_read_again() {
    let (_dir, store) = temp_store();
    import(&store, &[&fixtures()]);
    let again = import(&store, &[&fixtures()]);
    assert_eq!(again.bytes_read, 0);
    assert_eq!(again.new_rows, 0);
}

#[test]
fn the_database_file_is_private() {
    let (dir, _store) = temp_store();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("sessions.db"))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn readers_map_the_database_file_and_the_writer_does_not() {
    let (_dir, store) = temp_store();
    let mapped: i64 = store
        .reader()
        .expect("reader")
        .query_row("PRAGMA mmap_size", [], |r| r.get(0))
        .expect("mmap_size");
    assert!(mapped >= 1 << 30, "readers map {mapped} bytes");
    let written: i64 = store
        .write(|tx| Ok(tx.query_row("PRAGMA mmap_size", [], |r| r.get(0))?))
        .expect("writer");
    assert_eq!(written, 0);
}

#[test]
fn a_database_from_a_newer_sessiondb_is_refused_untouched() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("future.db");
    drop(Store::open(&path).expect("open"));
    {
        let conn = rusqlite::Connection::open(&path).expect("raw open");
        conn.execute(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum)
             VALUES (999, 'from_the_future', '2030-01-01T00:00:00Z', '0')",
            [],
        )
        .expect("insert");
        conn.pragma_update(None, "journal_mode", "DELETE")
            .expect("journal");
    }
    let before = std::fs::read(&path).expect("read");
    let err = Store::open(&path).err().expect("refused");
    assert!(
        matches!(err, Error::SchemaTooNew { found: 999, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("V999"));
    assert!(
        std::fs::read(&path).expect("read") == before,
        "the file was modified"
    );
    assert!(!dir.path().join("future.db-wal").exists());
}

#[test]
fn reopening_runs_no_migration_twice() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("s.db");
    drop(Store::open(&path).expect("open"));
    let store = Store::open(&path).expect("reopen");
    let applied: i64 = store
        .reader()
        .expect("reader")
        .query_row("SELECT count(*) FROM refinery_schema_history", [], |r| {
            r.get(0)
        })
        .expect("count");
    assert_eq!(applied, sessiondb::schema::newest_known().0);
}

/// kill -9 in the middle of an import leaves each file either wholly imported or absent.
/// Sixteen files of 2.2 MB make more than one write group (import writes small files
/// together, up to 16 MiB a transaction); the kills land at several stages (see
/// `support::KILL_POINTS`).
#[test]
fn killing_an_import_leaves_whole_files_only() {
    slow(
        "import_edge::killing_an_import_leaves_whole_files_only",
        "kills three imports of 320,000 lines and checks each database",
    );
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let mut expected = std::collections::BTreeMap::new();
    for f in 0..16 {
        let mut body = String::new();
        let lines = 20_000;
        for i in 0..lines {
            body.push_str(&format!(
                "{{\"parentUuid\":null,\"type\":\"user\",\"uuid\":\"{f}-{i}\",\"message\":{{\"role\":\"user\",\"content\":\"line {i} of file {f} padding padding padding\"}}}}\n"
            ));
        }
        let name = format!("s{f}");
        std::fs::write(project.join(format!("{name}.jsonl")), body).expect("write");
        expected.insert(name, lines as i64);
    }
    let mut killed = 0;
    for wal_bytes in KILL_POINTS {
        // A database of its own each time: removing the last one's file would leave its
        // `-wal` and `-shm` behind whenever a connection outlived it.
        let db = dir.path().join(format!("kill-{wal_bytes}.db"));
        killed += usize::from(import_killed_at(&db, &project, wal_bytes));
        if !db.exists() {
            continue;
        }
        let store = Store::open(&db).expect("the database opens after a kill");
        let conn = store.reader().expect("reader");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(ok, "ok");
        let mut stmt = conn
            .prepare(
                "SELECT s.session_id, count(r.id) FROM sessions s
                 JOIN transcripts t ON t.session_id = s.id
                 LEFT JOIN rows r ON r.transcript_id = t.id GROUP BY s.id",
            )
            .expect("prepare");
        let counts: Vec<(String, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        for (session, n) in counts {
            assert_eq!(n, expected[&session], "{session} was imported in part");
        }
        drop(stmt);
        drop(conn);
        // A second import completes the job.
        let report =
            import_paths(&store, std::slice::from_ref(&project), &NoProgress).expect("import");
        assert_eq!(report.files_failed, 0);
    }
    assert!(killed > 0, "no import was killed before it ended");
}

/// An empty transcript (made here: an empty file needs no fixture) is stored and exports
/// back empty.
#[test]
fn an_empty_file_round_trips() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("empty.jsonl");
    std::fs::write(&file, b"").expect("write");
    let report = import(&store, &[&file]);
    assert_eq!(report.files_failed, 0);
    assert_eq!(report.new_rows, 0);
    assert!(export_main(&store, "p/empty").is_empty());
}

#[test]
fn a_line_session_id_is_projected_only_when_it_is_another_session() {
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s1.jsonl");
    let text = "{\"type\":\"user\",\"uuid\":\"a\",\"sessionId\":\"s1\"}\n\
                {\"type\":\"user\",\"uuid\":\"b\",\"sessionId\":\"s0\"}\n\
                {\"type\":\"user\",\"uuid\":\"c\"}\n";
    std::fs::write(&file, text).expect("write");
    import(&store, &[&file]);
    let reader = store.reader().expect("reader");
    let projected: Vec<(String, Option<String>)> = reader
        .prepare("SELECT uuid, entry_session_id FROM rows ORDER BY ordinal")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let want = [("a", None), ("b", Some("s0")), ("c", None)];
    let want: Vec<(String, Option<String>)> = want
        .iter()
        .map(|(u, s)| (u.to_string(), s.map(str::to_owned)))
        .collect();
    assert_eq!(projected, want);
    assert_eq!(export_main(&store, "s1"), text.as_bytes());
}

/// `import copy.jsonl` (issue 31): a file named by hand keeps the session its records name
/// (the first user or assistant record's `sessionId`; a progress record of another session
/// before it does not count), and says so; a file whose records name none keeps its name;
/// the bytes are stored as they are.
#[test]
fn a_file_not_named_by_a_session_id_takes_the_id_its_records_carry() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("s.db");
    let old = "0f0f0f0f-0000-4000-8000-000000000001";
    let id = "7c7c7c7c-0000-4000-8000-000000000002";
    let copy = dir.path().join("copy.jsonl");
    let progress = serde_json::json!({"type": "progress", "sessionId": old, "uuid": "p0"});
    let text = progress.to_string()
        + "\n"
        + &user_line(id, "u2", None, "the question")
        + &assistant_record(id, "a3", "u2", "answer")
        + "\n";
    std::fs::write(&copy, &text).expect("write");
    let notes = dir.path().join("notes.jsonl");
    std::fs::write(
        &notes,
        "{\"type\":\"summary\",\"summary\":\"no session here\"}\n",
    )
    .expect("write");
    for (file, expected) in [(&copy, id), (&notes, "notes")] {
        let out = sessiondb(&db, &[Path::new("import"), file.as_path()]);
        assert_success(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.contains(&format!("stored as session {id}, the id its records carry")),
            expected == id,
            "{err}"
        );
        let listed: Vec<serde_json::Value> =
            serde_json::from_slice(&sessiondb_ok(&db, &["sessions", "--all", "--json"]))
                .expect("json");
        assert!(
            listed.iter().any(|s| s["session_id"] == expected),
            "{expected} not among {listed:?}"
        );
    }
    let exported = sessiondb_ok(&db, &["export", id]);
    assert_eq!(exported, text.as_bytes());
    let listed = String::from_utf8(sessiondb_ok(&db, &["sessions", "--all", "--json"])).unwrap();
    assert!(!listed.contains("\"copy\""), "{listed}");
    // A file imported under its name (no message yet) keeps that session as it grows.
    let mut grown = std::fs::read(&notes).expect("read");
    grown.extend_from_slice(user_line(id, "u9", None, "later").as_bytes());
    std::fs::write(&notes, &grown).expect("write");
    let out = sessiondb(&db, &[Path::new("import"), notes.as_path()]);
    assert_success(&out);
    assert_eq!(sessiondb_ok(&db, &["export", "notes"]), grown);
}
