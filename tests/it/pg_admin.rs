//! The maintenance verbs on a team store: `reindex`, `check [--repair]`, `watch`, `launch`,
//! `backup` and `restore`, through the binary. Needs `SESSIONDB_TEST_PG`.

use crate::support::pg_db;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sessiondb(db: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env("SESSIONDB_HOST", "admin-test")
        .env("SESSIONDB_USER", "tester")
        .output()
        .expect("run sessiondb")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects")
}

fn client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).expect("connect")
}

/// Every line's search vector and every catalog row, as text, in a fixed order.
fn derived(url: &str) -> (Vec<(i64, Option<String>)>, Vec<String>) {
    let mut c = client(url);
    let vectors = c
        .query("SELECT id, search::text FROM rows ORDER BY id", &[])
        .expect("vectors")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let catalog = c
        .query("SELECT c::text FROM catalog c ORDER BY session_key", &[])
        .expect("catalog")
        .iter()
        .map(|r| r.get(0))
        .collect();
    (vectors, catalog)
}

/// Makes the derived data stale the ways a bug or a hand edit could: search vectors
/// emptied or wrong, catalog fields changed, a catalog row removed.
fn spoil(url: &str) {
    client(url)
        .batch_execute(
            "CREATE TEMP TABLE unsearched AS SELECT min(id) AS id FROM rows WHERE search IS NULL;
             UPDATE rows SET search = NULL
               WHERE id IN (SELECT id FROM rows WHERE search IS NOT NULL ORDER BY id LIMIT 3);
             UPDATE rows SET search = to_tsvector('simple', 'bogus words')
               WHERE id = (SELECT max(id) FROM rows WHERE search IS NOT NULL);
             UPDATE rows SET search = to_tsvector('simple', 'not searched')
               WHERE id = (SELECT id FROM unsearched);
             UPDATE catalog SET message_count = message_count + 7, first_prompt = 'edited'
               WHERE session_key = (SELECT min(session_key) FROM catalog);
             DELETE FROM catalog WHERE session_key = (SELECT max(session_key) FROM catalog);",
        )
        .expect("spoil");
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn check_finds_stale_vectors_and_catalog_rows_and_repair_restores_what_import_made() {
    let Some(db) =
        pg_db("check_finds_stale_vectors_and_catalog_rows_and_repair_restores_what_import_made")
    else {
        return;
    };
    ok(&sessiondb(
        &db.url,
        &["import", &samples().display().to_string()],
    ));
    let imported = derived(&db.url);
    assert!(imported.0.iter().any(|(_, v)| v.is_some()));

    // What import made passes the check: both compute the same.
    let clean: serde_json::Value =
        serde_json::from_str(&ok(&sessiondb(&db.url, &["check", "--json"]))).expect("JSON");
    assert_eq!(clean["ok"], true, "{clean}");
    assert_eq!(clean["vectors_checked"], imported.0.len(), "{clean}");
    assert_eq!(clean["sessions_checked"], imported.1.len(), "{clean}");

    spoil(&db.url);
    let out = sessiondb(&db.url, &["check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(found["ok"], false);
    let problems = found["problems"].as_array().expect("problems");
    let search = problems
        .iter()
        .find(|p| p["kind"] == "search_index")
        .expect("stale vectors found");
    assert!(
        search["detail"].as_str().unwrap().contains("5 lines"),
        "{search}"
    );
    let catalog: Vec<&serde_json::Value> =
        problems.iter().filter(|p| p["kind"] == "catalog").collect();
    assert_eq!(catalog.len(), 2, "{found}");
    let columns: Vec<&serde_json::Value> = catalog
        .iter()
        .flat_map(|p| p["columns"].as_array().unwrap())
        .collect();
    for want in ["message_count", "first_prompt", "(missing)"] {
        assert!(columns.iter().any(|c| *c == want), "{want}: {found}");
    }
    // The text form names the problems and the database, without a password.
    let url = db
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    let out = sessiondb(&url, &["check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("problem: search index"), "{text}");
    assert!(text.contains("catalog row of session"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3 problems"), "{err}");
    assert!(!text.contains("pw-secret") && !err.contains("pw-secret"));

    let repaired: serde_json::Value =
        serde_json::from_str(&ok(&sessiondb(&db.url, &["check", "--repair", "--json"])))
            .expect("JSON");
    assert_eq!(repaired["ok"], true, "{repaired}");
    assert_eq!(repaired["repair"]["search_index_rebuilt"], true);
    assert!(repaired["repair"]["catalog_rebuilt"].as_u64().unwrap() >= 2);
    assert_eq!(repaired["remaining"], serde_json::json!([]));
    assert_eq!(
        derived(&db.url),
        imported,
        "repair gives back what import made"
    );
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn reindex_rebuilds_vectors_and_catalog_as_import_made_them() {
    let Some(db) = pg_db("reindex_rebuilds_vectors_and_catalog_as_import_made_them") else {
        return;
    };
    ok(&sessiondb(
        &db.url,
        &["import", &samples().display().to_string()],
    ));
    let imported = derived(&db.url);
    let lines_before: i64 = client(&db.url)
        .query_one("SELECT count(*) FROM rows", &[])
        .unwrap()
        .get(0);
    spoil(&db.url);
    assert_ne!(derived(&db.url), imported);
    let report: serde_json::Value =
        serde_json::from_str(&ok(&sessiondb(&db.url, &["reindex", "--json"]))).expect("JSON");
    let indexed = imported.0.iter().filter(|(_, v)| v.is_some()).count();
    assert_eq!(report["indexed"], indexed, "{report}");
    assert_eq!(report["sessions"], imported.1.len(), "{report}");
    assert_eq!(derived(&db.url), imported);
    let lines_after: i64 = client(&db.url)
        .query_one("SELECT count(*) FROM rows", &[])
        .unwrap()
        .get(0);
    assert_eq!(lines_after, lines_before, "no line lost");
    // Search finds by the rebuilt vectors; the text output names the store without the
    // password.
    let url = db
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    let out = sessiondb(&url, &["reindex"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("indexed"), "{err}");
    assert!(!err.contains("pw-secret") && err.contains(":***@"), "{err}");
}

const PROJECT: &str = "-home-dev-weather-app";
const WITH_AGENT: &str = "8e1f3a52-6c7b-4091-8b2c-3d4e5f6a7b82";
const PLAIN: &str = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";

/// The samples copied with their own old mtimes, imported into the team store.
fn imported_copy(url: &str, dir: &Path) -> PathBuf {
    use std::time::{Duration, UNIX_EPOCH};
    let source = dir.join("source/projects");
    std::fs::create_dir_all(&source).expect("mkdir");
    crate::support::copy_tree(&samples(), &source);
    for (i, rel) in crate::support::read_tree(&source).keys().enumerate() {
        let when = UNIX_EPOCH + Duration::from_secs(1_700_000_000 + 1000 * i as u64);
        std::fs::File::options()
            .write(true)
            .open(source.join(rel))
            .expect("open")
            .set_modified(when)
            .expect("set mtime");
    }
    ok(&sessiondb(url, &["import", &source.display().to_string()]));
    source
}

fn mtime(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .expect("meta")
        .modified()
        .expect("mtime")
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn restore_from_a_team_store_writes_its_bytes_and_mtimes_and_never_overwrites() {
    let Some(db) =
        pg_db("restore_from_a_team_store_writes_its_bytes_and_mtimes_and_never_overwrites")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let source = imported_copy(&db.url, dir.path());
    let config = dir.path().join("claude");
    let config_arg = config.display().to_string();
    for session in [WITH_AGENT, PLAIN] {
        ok(&sessiondb(
            &db.url,
            &["restore", session, "--config-dir", &config_arg],
        ));
    }
    let restored = config.join("projects");
    crate::support::assert_same_tree(&source, &restored);
    for rel in crate::support::read_tree(&source).keys() {
        assert_eq!(
            mtime(&restored.join(rel)),
            mtime(&source.join(rel)),
            "{rel}"
        );
    }
    let report: serde_json::Value = serde_json::from_str(&ok(&sessiondb(
        &db.url,
        &["restore", WITH_AGENT, "--config-dir", &config_arg, "--json"],
    )))
    .expect("JSON");
    assert_eq!(report["written"], 0, "{report}");
    assert_eq!(report["unchanged"], 4, "{report}");

    // A different file in the way stays as it is; --as-new restores a fork instead.
    let main = restored.join(PROJECT).join(format!("{WITH_AGENT}.jsonl"));
    std::fs::write(&main, b"{\"type\":\"user\"}\n").expect("write");
    let out = sessiondb(
        &db.url,
        &["restore", WITH_AGENT, "--config-dir", &config_arg],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not restored"), "{err}");
    assert_eq!(std::fs::read(&main).unwrap(), b"{\"type\":\"user\"}\n");
    let report: serde_json::Value = serde_json::from_str(&ok(&sessiondb(
        &db.url,
        &[
            "restore",
            WITH_AGENT,
            "--config-dir",
            &config_arg,
            "--as-new",
            "--json",
        ],
    )))
    .expect("JSON");
    assert_eq!(report["forked_from"], WITH_AGENT, "{report}");
    let fork = report["session_id"].as_str().expect("id");
    assert_ne!(fork, WITH_AGENT);
    assert_eq!(std::fs::read(&main).unwrap(), b"{\"type\":\"user\"}\n");
    let forked = restored.join(PROJECT).join(format!("{fork}.jsonl"));
    let exported = sessiondb(&db.url, &["export", fork]);
    assert_eq!(
        std::fs::read(&forked).expect("fork restored"),
        ok(&exported).as_bytes()
    );
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn launch_from_a_team_store_hands_the_session_to_claude() {
    let Some(db) = pg_db("launch_from_a_team_store_hands_the_session_to_claude") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let source = imported_copy(&db.url, dir.path());
    let config = dir.path().join("claude");
    let bin = crate::restore::fake_claude(dir.path());
    let log = dir.path().join("fake");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let work = std::fs::canonicalize(&work).expect("real");
    let out = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(&db.url)
        .args(["launch", WITH_AGENT, "--here", "--", "--model", "opus"])
        .env("SESSIONDB_CLAUDE", bin.join("claude"))
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("FAKE_CLAUDE_LOG", &log)
        .current_dir(&work)
        .output()
        .expect("run");
    ok(&out);
    let read = |ext: &str| std::fs::read_to_string(log.with_extension(ext)).expect("log");
    assert_eq!(
        read("args"),
        format!("--resume\n{WITH_AGENT}\n--model\nopus\n")
    );
    assert_eq!(read("cwd").trim(), work.to_string_lossy());
    let project = sessiondb::paths::sanitize_path(&work.to_string_lossy());
    let files = read("files");
    assert!(
        files.contains(&format!(
            "./{project}/{WITH_AGENT}/subagents/agent-a1b2c3d4e5f60718.jsonl\n"
        )),
        "{files}"
    );
    // The transcript Claude Code reads is the team store's bytes, with only `cwd` moved.
    let written = std::fs::read(
        config
            .join("projects")
            .join(&project)
            .join(format!("{WITH_AGENT}.jsonl")),
    )
    .expect("restored");
    let stored =
        std::fs::read(source.join(PROJECT).join(format!("{WITH_AGENT}.jsonl"))).expect("source");
    let moved = String::from_utf8_lossy(&stored).replace(
        "\"cwd\":\"/home/dev/weather-app\"",
        &format!("\"cwd\":\"{}\"", work.display()),
    );
    assert_ne!(
        moved.as_bytes(),
        stored.as_slice(),
        "the sample records a cwd"
    );
    assert_eq!(String::from_utf8_lossy(&written), moved);
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn watch_imports_changes_into_a_team_store() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    use std::time::Duration;
    let Some(db) = pg_db("watch_imports_changes_into_a_team_store") else {
        return;
    };
    const ID: &str = "5992899e-5e2b-4509-8109-e2acee6ef1ef";
    let turn = |n: usize| {
        format!(
            "{{\"parentUuid\":null,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"turn {n}\"}},\"uuid\":\"00000000-0000-4000-8000-{n:012}\",\"timestamp\":\"2026-12-03T10:00:0{n}.000Z\",\"sessionId\":\"{ID}\",\"cwd\":\"/w\"}}\n"
        )
    };
    let append = |path: &Path, text: &str| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open")
            .write_all(text.as_bytes())
            .expect("append");
    };
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects");
    let project = root.join("-w");
    std::fs::create_dir_all(&project).expect("mkdir");
    let url = db
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    let mut child = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(&url)
        .arg("watch")
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start watch");
    let (tx, lines) = std::sync::mpsc::channel();
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
            .recv_timeout(Duration::from_secs(30))
            .expect("a line from watch")
    };
    let first = next();
    assert!(first.starts_with("watching "), "{first}");
    let main = project.join(format!("{ID}.jsonl"));
    append(&main, &format!("{}{}", turn(1), turn(2)));
    assert_eq!(next(), format!("-w/{ID}: 2 new rows"));
    append(&main, &turn(3));
    assert_eq!(next(), format!("-w/{ID}: 1 new rows"));
    let agents = project.join(ID).join("subagents");
    std::fs::create_dir_all(&agents).expect("mkdir");
    append(&agents.join("agent-a1.jsonl"), &turn(4));
    assert_eq!(next(), format!("-w/{ID}: 1 new rows"));
    // The team store exports what watch saw, byte for byte.
    let export = dir.path().join("export");
    ok(&sessiondb(
        &db.url,
        &["export", "--all", "--out", &export.display().to_string()],
    ));
    crate::support::assert_same_tree(&root, &export);
    // A deleted transcript keeps its rows and is marked vanished, as on SQLite.
    std::fs::remove_file(&main).expect("delete");
    assert_eq!(
        next(),
        format!("-w/{ID}: 0 new rows, 1 files vanished (rows kept)")
    );
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    assert_eq!(next(), "stopped");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("pw-secret"));
    let db_client = &mut client(&db.url);
    let rows: i64 = db_client
        .query_one("SELECT count(*) FROM rows", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 4, "the deleted file's rows are kept");
    let state: String = db_client
        .query_one("SELECT source_state FROM catalog", &[])
        .unwrap()
        .get(0);
    assert_eq!(state, "vanished");
}

/// Whether PostgreSQL's client programs the backup test needs are on PATH (under CI they
/// must be).
fn have_pg_client() -> bool {
    let found = ["pg_dump", "pg_restore"].iter().all(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "pg_dump and pg_restore must be on PATH under CI"
        );
        eprintln!("skipping the team store backup test: pg_dump or pg_restore is not on PATH");
    }
    found
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn backup_with(url: &str, pg_dump: &Path, dest: &Path, log: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(url)
        .arg("backup")
        .arg(dest)
        .arg("--json")
        .env("PG_DUMP", pg_dump)
        .env("LOG", log)
        .env_remove("PGPASSWORD")
        .output()
        .expect("run sessiondb")
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn backup_of_a_team_store_is_a_pg_dump_that_pg_restore_reads_back() {
    let Some(db) = pg_db("backup_of_a_team_store_is_a_pg_dump_that_pg_restore_reads_back") else {
        return;
    };
    if !have_pg_client() {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let (tools, out_dir) = (dir.path().join("tools"), dir.path().join("out"));
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(&out_dir).unwrap();
    // The store: the samples, plus lines sessiondb wrote itself (queued for the index).
    ok(&sessiondb(
        &db.url,
        &["import", &samples().display().to_string()],
    ));
    let listed: serde_json::Value =
        serde_json::from_str(&ok(&sessiondb(&db.url, &["sessions", "--json"]))).unwrap();
    let id = listed[0]["session_id"].as_str().unwrap().to_owned();
    ok(&sessiondb(&db.url, &["rename", &id, "kept by the backup"]));
    ok(&sessiondb(&db.url, &["tag", &id, "backed-up"]));

    // pg_dump through a wrapper that notes what it was given.
    let wrapper = tools.join("pg_dump-wrapper");
    script(
        &wrapper,
        "printf '%s\\n' \"$@\" > \"$LOG/args\"\nprintf '%s' \"$PGPASSWORD\" > \"$LOG/password\"\nexec pg_dump \"$@\"\n",
    );
    // The test server trusts its users, so the password is accepted and not needed.
    let url = db
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-secret@", 1);
    let dest = out_dir.join("team.dump");
    let out = backup_with(&url, &wrapper, &dest, &tools);
    let said = ok(&out);
    let all = format!("{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("pw-secret"), "{all}");
    let report: serde_json::Value = serde_json::from_str(&said).expect("JSON");
    assert!(
        report["source"].as_str().unwrap().contains(":***@"),
        "{report}"
    );
    assert_eq!(report["bytes"], std::fs::metadata(&dest).unwrap().len());
    let args = std::fs::read_to_string(tools.join("args")).unwrap();
    assert!(
        !args.contains("pw-secret"),
        "password on pg_dump's command line: {args}"
    );
    assert!(args.contains("--format=custom"), "{args}");
    assert_eq!(
        std::fs::read_to_string(tools.join("password")).unwrap(),
        "pw-secret",
        "the password goes by PGPASSWORD"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dest).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let names: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["team.dump"], "only the copy is left");

    // Read back into a new database: the same sessions, byte for byte.
    let restored = pg_db("backup_of_a_team_store_is_a_pg_dump_that_pg_restore_reads_back 2")
        .expect("a second database");
    let out = Command::new("pg_restore")
        .arg("--no-owner")
        .arg("--dbname")
        .arg(&restored.url)
        .arg(&dest)
        .output()
        .expect("run pg_restore");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (url, to) in [(&db.url, &a), (&restored.url, &b)] {
        ok(&sessiondb(
            url,
            &["export", "--all", "--out", &to.display().to_string()],
        ));
    }
    crate::support::assert_same_tree(&a, &b);
    assert!(
        std::fs::read_dir(&a).unwrap().count() > 0,
        "the export wrote nothing"
    );
    let list = |url: &str| ok(&sessiondb(url, &["sessions", "--json"]));
    assert_eq!(list(&db.url), list(&restored.url));
    let find = |url: &str| ok(&sessiondb(url, &["search", "fetch_forecast", "--json"]));
    assert_eq!(find(&db.url), find(&restored.url));
    let hits: serde_json::Value = serde_json::from_str(&find(&db.url)).unwrap();
    assert!(!hits.as_array().unwrap().is_empty(), "{hits}");

    // A pg_dump that fails: its message is shown with the password hidden, and the file
    // already at the destination is left as it was, with nothing beside it.
    std::fs::write(&dest, b"the previous copy").unwrap();
    let failing = tools.join("failing");
    script(
        &failing,
        "echo \"pg_dump: error: no luck with pw-secret\" >&2\nexit 1\n",
    );
    let out = backup_with(&url, &failing, &dest, &tools);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no luck with ***") && err.contains("failed"),
        "{err}"
    );
    assert!(!err.contains("pw-secret"), "{err}");
    assert_eq!(std::fs::read(&dest).unwrap(), b"the previous copy");
    assert_eq!(
        std::fs::read_dir(&out_dir).unwrap().count(),
        1,
        "a temporary file left"
    );

    // No pg_dump at all: a clear message, nothing written.
    let out = backup_with(&url, &tools.join("no-such-pg_dump"), &dest, &tools);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not found") && err.contains("PG_DUMP"),
        "{err}"
    );
    assert_eq!(std::fs::read(&dest).unwrap(), b"the previous copy");
    assert_eq!(
        std::fs::read_dir(&out_dir).unwrap().count(),
        1,
        "a temporary file left"
    );
}
