//! Damaged data is found and, where a source still holds it, repaired: line checksums
//! (migration V10), export and resume refusing a damaged line, and `sessiondb check
//! [--repair] [--json]` over lines, the search index and the catalog.

use crate::support;
use std::path::{Path, PathBuf};
use std::process::Output;

const SESSION: &str = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";
const OTHER: &str = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";
const PROJECT: &str = "-home-dev-weather-app";

/// A copy of the sample projects (the source files a repair reads) imported into a new
/// database.
struct Fixture {
    _dir: tempfile::TempDir,
    db: PathBuf,
    projects: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tmp");
        let projects = dir.path().join("projects");
        std::fs::create_dir_all(&projects).expect("mkdir");
        support::copy_tree(&support::samples(), &projects);
        let db = dir.path().join("sessions.db");
        let f = Fixture {
            _dir: dir,
            db,
            projects,
        };
        ok(f.run(&["import", &f.projects.to_string_lossy()]), "import");
        f
    }

    fn run(&self, args: &[&str]) -> Output {
        support::sessiondb(&self.db, args)
    }

    fn run_with_input(&self, args: &[&str], input: &str) -> Output {
        let mut command = support::sessiondb_command(&self.db);
        command.args(args);
        support::output_with_stdin(command, input.as_bytes())
    }

    fn source(&self, session: &str) -> PathBuf {
        self.projects.join(PROJECT).join(format!("{session}.jsonl"))
    }

    fn sql(&self) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(&self.db).expect("open");
        // Lines may be stored compressed: the search view and triggers read them with it.
        sessiondb::codec::sql::register(&conn).expect("register line()");
        conn
    }

    fn check_json(&self, args: &[&str]) -> (bool, serde_json::Value) {
        let out = self.run(&[&["check", "--json"], args].concat());
        let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "check --json printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.success(), report)
    }
}

fn ok(out: Output, what: &str) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Flips the case of one letter of `needle` where it occurs, once, in the database file
/// itself (after a checkpoint has moved everything out of the WAL): the damage a bad disk
/// or a stray write does, below SQLite, which `PRAGMA integrity_check` does not see.
fn flip_in_file(db: &Path, needle: &[u8], at: usize) {
    let conn = rusqlite::Connection::open(db).expect("open");
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint");
    drop(conn);
    let mut bytes = std::fs::read(db).expect("read db");
    let hits: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "the bytes to damage are stored once");
    bytes[hits[0] + at] ^= 0x20;
    std::fs::write(db, bytes).expect("write db");
}

#[test]
fn a_flipped_byte_in_a_stored_line_is_found_refused_and_repaired_from_the_source() {
    let f = Fixture::new();
    let source = std::fs::read(f.source(SESSION)).expect("source");
    let needle = br#""content":"What does fetch_forecast"#;
    // The W of "What".
    flip_in_file(&f.db, needle, br#""content":""#.len());

    // SQLite itself sees nothing wrong.
    let integrity: String = f
        .sql()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    assert_eq!(integrity, "ok");

    // check names the line.
    let out = f.run(&["check"]);
    assert_eq!(out.status.code(), Some(1), "check: {}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("line 2 of {PROJECT}/{SESSION}.jsonl")) && text.contains("damaged"),
        "{text}"
    );
    let (clean, report) = f.check_json(&[]);
    assert!(!clean);
    assert_eq!(report["ok"], false);
    assert_eq!(report["problems"].as_array().expect("problems").len(), 1);
    let problem = &report["problems"][0];
    assert_eq!(problem["kind"], "damaged_line");
    assert_eq!(problem["session_id"], SESSION);
    assert_eq!(problem["project"], PROJECT);
    assert_eq!(problem["file"], format!("{PROJECT}/{SESSION}.jsonl"));
    assert_eq!(problem["line"], 2);
    assert_eq!(problem["superseded"], false);
    assert!(report["lines_checked"].as_u64().expect("count") >= 13);
    assert_eq!(report["repair"], serde_json::Value::Null);

    // export refuses it, naming session and line; --force exports it with a warning.
    let out = f.run(&["export", SESSION]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(SESSION) && err.contains("line 2 of"),
        "export: {err}"
    );
    let out = f.run(&["export", SESSION, "--force"]);
    assert!(out.status.success(), "export --force: {}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: line 2 of"),
        "{}",
        stderr(&out)
    );
    let differing = out
        .stdout
        .iter()
        .zip(&source)
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(out.stdout.len(), source.len());
    assert_eq!(differing, 1, "--force exports the stored bytes as they are");
    // The tree export writes everything else and exits 1.
    let tree = f._dir.path().join("tree");
    let out = f.run(&["export", "--all", "--out", &tree.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("line 2 of"), "{}", stderr(&out));
    assert!(tree.join(PROJECT).join(format!("{OTHER}.jsonl")).is_file());
    assert!(!tree.join(PROJECT).join(format!("{SESSION}.jsonl")).exists());
    // The other session is untouched.
    ok(f.run(&["export", OTHER]), "export of the other session");

    // resume refuses to build a conversation from it.
    let out = f.run(&["resume", SESSION, "--api"]);
    assert!(!out.status.success(), "resume used the damaged line");
    assert!(
        stderr(&out).contains("line 2 of") && stderr(&out).contains("damaged"),
        "{}",
        stderr(&out)
    );

    // --repair reads it again from the source file; the export is byte-exact again.
    let (clean, report) = f.check_json(&["--repair"]);
    assert!(clean, "{report:#}");
    assert_eq!(report["ok"], true);
    let repair = &report["repair"];
    assert_eq!(repair["restored"].as_array().expect("restored").len(), 1);
    assert_eq!(repair["restored"][0]["line"], 2);
    assert_eq!(
        repair["restored"][0]["source"],
        f.source(SESSION).to_string_lossy().as_ref()
    );
    assert_eq!(repair["not_repaired"], serde_json::json!([]));
    assert_eq!(repair["search_index_rebuilt"], true);
    assert_eq!(report["remaining"], serde_json::json!([]));
    assert_eq!(ok(f.run(&["export", SESSION]), "export"), source);
    ok(
        f.run(&["resume", SESSION, "--api"]),
        "resume after the repair",
    );
    ok(f.run(&["check"]), "check after the repair");
}

#[test]
fn a_damaged_line_no_source_holds_is_reported_not_repaired() {
    let f = Fixture::new();
    let conn = f.sql();
    // A line changed without its checksum, as a stray UPDATE would.
    conn.execute(
        "UPDATE rows SET raw = CAST(replace(CAST(raw AS TEXT), 'Find every', 'Find EVERY') AS BLOB)
         WHERE CAST(raw AS TEXT) LIKE '%Find every caller%' AND type = 'user'",
        [],
    )
    .expect("damage");
    drop(conn);
    std::fs::remove_file(f.source(OTHER)).expect("remove the source");
    let (clean, report) = f.check_json(&["--repair"]);
    assert!(!clean);
    let repair = &report["repair"];
    assert_eq!(repair["restored"], serde_json::json!([]));
    let left = &repair["not_repaired"][0];
    assert_eq!(left["problem"]["kind"], "damaged_line");
    assert_eq!(left["problem"]["session_id"], OTHER);
    assert!(
        left["reason"]
            .as_str()
            .expect("reason")
            .contains("cannot read the source file"),
        "{left}"
    );
    assert_eq!(report["remaining"][0]["kind"], "damaged_line");
    let out = f.run(&["export", OTHER]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_tampered_catalog_row_is_found_and_recomputed() {
    let f = Fixture::new();
    let before = ok(f.run(&["sessions", "--json", "--all"]), "sessions");
    f.sql()
        .execute(
            "UPDATE catalog SET summary = 'tampered', message_count = 99 WHERE session_id = ?1",
            [SESSION],
        )
        .expect("tamper");
    let (clean, report) = f.check_json(&[]);
    assert!(!clean);
    let problem = &report["problems"][0];
    assert_eq!(problem["kind"], "catalog");
    assert_eq!(problem["session_id"], SESSION);
    assert_eq!(
        problem["columns"],
        serde_json::json!(["summary", "message_count"])
    );
    let (clean, report) = f.check_json(&["--repair"]);
    assert!(clean, "{report:#}");
    assert_eq!(report["repair"]["catalog_rebuilt"], 1);
    assert_eq!(report["repair"]["search_index_rebuilt"], false);
    assert_eq!(
        ok(f.run(&["sessions", "--json", "--all"]), "sessions"),
        before
    );
}

#[test]
fn a_damaged_search_index_is_found_and_rebuilt() {
    let f = Fixture::new();
    let search = |f: &Fixture| ok(f.run(&["search", "forecast", "--json"]), "search");
    let before = search(&f);
    assert_ne!(before, b"[]\n".to_vec());
    // One indexed line leaves the index, and a line that does not exist enters it.
    f.sql()
        .execute_batch(
            "INSERT INTO rows_fts (rows_fts, rowid, body, tools)
                 SELECT 'delete', id, body, tools FROM search_source
                 WHERE CAST(body AS TEXT) LIKE '%fetch_forecast%' LIMIT 1;
             INSERT INTO rows_fts (rowid, body) VALUES (999999, 'ghost words');",
        )
        .expect("damage the index");
    assert_ne!(search(&f), before);
    let (clean, report) = f.check_json(&[]);
    assert!(!clean);
    let kinds: Vec<&serde_json::Value> = report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| &p["kind"])
        .collect();
    assert_eq!(kinds, ["search_index"], "{report:#}");
    let (clean, report) = f.check_json(&["--repair"]);
    assert!(clean, "{report:#}");
    assert_eq!(report["repair"]["search_index_rebuilt"], true);
    assert_eq!(search(&f), before);
}

#[test]
fn every_writer_stores_checksums_and_lines_from_before_v10_are_summed_by_repair() {
    let f = Fixture::new();
    ok(f.run(&["tag", SESSION, "checked"]), "tag");
    ok(f.run(&["rename", SESSION, "Checked title"]), "rename");
    let line = r#"{"type":"user","message":{"role":"user","content":"appended"},"uuid":"9a000000-0000-4000-8000-000000000001"}"#;
    ok(f.run_with_input(&["append", SESSION], line), "append");
    ok(f.run(&["fork", SESSION]), "fork");
    let conn = f.sql();
    let unsummed: i64 = conn
        .query_row(
            "SELECT count(*) FROM rows WHERE checksum IS NULL",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(unsummed, 0, "a writer stored a line without its checksum");
    let local: i64 = conn
        .query_row("SELECT count(*) FROM rows WHERE local = 1", [], |r| {
            r.get(0)
        })
        .expect("count");
    assert!(local >= 4, "tag, rename, append and fork wrote lines");
    let (clean, report) = f.check_json(&[]);
    assert!(clean, "{report:#}");
    let total = report["lines_checked"].as_u64().expect("n");

    // A database from before V10: no checksums. Nothing is reported damaged; the lines
    // are counted as not checked until a repair sums them.
    conn.execute("UPDATE rows SET checksum = NULL", [])
        .expect("forget the checksums");
    drop(conn);
    let (clean, report) = f.check_json(&[]);
    assert!(clean, "{report:#}");
    assert_eq!(report["lines_checked"], 0);
    assert_eq!(report["lines_unsummed"], total);
    ok(f.run(&["export", SESSION]), "export of unsummed lines");
    let (clean, report) = f.check_json(&["--repair"]);
    assert!(clean, "{report:#}");
    assert_eq!(report["repair"]["summed"], total);
    let (_, report) = f.check_json(&[]);
    assert_eq!(report["lines_checked"], total);
    assert_eq!(report["lines_unsummed"], 0);
}

/// Issue 28 item 18: the viewer's transcript page and the line's own page mark a line whose
/// checksum fails and say how to repair it (download, resume and the API refuse it).
#[test]
fn the_viewer_marks_a_damaged_line_and_says_how_to_repair_it() {
    let f = Fixture::new();
    // A byte changed inside the second line, its checksum kept: what a bad disk does.
    let changed = f
        .sql()
        .execute(
            "UPDATE rows SET raw = CAST(replace(CAST(raw AS TEXT), '\"user\"', '\"usEr\"') AS BLOB)
             WHERE ordinal = 1 AND transcript_id = (SELECT t.id FROM transcripts t
                 JOIN sessions s ON s.id = t.session_id
                 WHERE s.session_id = ?1 AND t.subpath = '')",
            [SESSION],
        )
        .expect("damage");
    assert_eq!(changed, 1);
    let store = sessiondb::Store::open(&f.db).expect("open");
    let server = crate::serve::Server::start(store, sessiondb::serve::http::Config::default());
    let session = format!("/session/{PROJECT}/{SESSION}");
    let mark = "does not match its checksum";
    let page = crate::web::get(server.addr, &session);
    assert_eq!(page.status, 200);
    assert_eq!(page.body.matches(mark).count(), 1, "{}", page.body);
    assert!(page.body.contains("Line 2 does not match"), "{}", page.body);
    assert!(page.body.contains("sessiondb check --repair"));
    let record = crate::web::get(server.addr, &format!("{session}/record/1"));
    assert_eq!(record.status, 200);
    assert!(record.body.contains(mark) && record.body.contains("check --repair"));
    let fold = crate::web::get(server.addr, &format!("{session}/record/1?fragment=1"));
    assert!(fold.body.contains(mark), "{}", fold.body);
    // Another line of the same session is not marked.
    let other = crate::web::get(server.addr, &format!("{session}/record/0"));
    assert!(!other.body.contains(mark));
}
