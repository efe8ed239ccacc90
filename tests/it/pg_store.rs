//! The PostgreSQL team store itself: connecting, migrations, what errors show.

use crate::support::pg_db;
use sessiondb::pg::PgStore;

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn connect_migrates_once_and_again_is_a_no_op() {
    let Some(db) = pg_db("connect_migrates_once_and_again_is_a_no_op") else {
        return;
    };
    let first = PgStore::connect(&db.url).expect("connect");
    let second = PgStore::connect(&db.url).expect("connect again");
    let count = |s: &PgStore| {
        s.read(|tx| {
            Ok(tx
                .query_one("SELECT count(*) FROM refinery_schema_history", &[])?
                .get::<_, i64>(0))
        })
        .expect("history")
    };
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations_pg"))
        .expect("migrations_pg")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".sql"))
        })
        .count() as i64;
    assert!(migrations >= 3);
    assert_eq!(count(&first), migrations);
    assert_eq!(count(&second), migrations);
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn migrations_from_many_processes_at_once_do_not_collide() {
    let Some(db) = pg_db("migrations_from_many_processes_at_once_do_not_collide") else {
        return;
    };
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || PgStore::connect(&url).map(drop))
        })
        .collect();
    for h in handles {
        h.join().expect("thread").expect("connect");
    }
}

/// The team store's migrations, embedded here too so a test can stop short of the newest.
mod embedded_pg {
    refinery::embed_migrations!("migrations_pg");
}

/// A client on `url` whose database holds every embedded migration but the newest, and the
/// versions of all the embedded ones, in order.
fn one_migration_behind(url: &str) -> (postgres::Client, Vec<i32>) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    let mut versions: Vec<i32> = embedded_pg::migrations::runner()
        .get_migrations()
        .iter()
        .map(refinery::Migration::version)
        .collect();
    versions.sort_unstable();
    assert!(versions.len() >= 2, "{versions:?}");
    embedded_pg::migrations::runner()
        .set_target(refinery::Target::Version(versions[versions.len() - 2]))
        .run(&mut client)
        .expect("migrate all but the newest");
    (client, versions)
}

fn history(client: &mut postgres::Client) -> Vec<i32> {
    client
        .query(
            "SELECT version FROM refinery_schema_history ORDER BY version",
            &[],
        )
        .expect("history")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_database_one_migration_behind_is_brought_current() {
    let Some(db) = pg_db("a_database_one_migration_behind_is_brought_current") else {
        return;
    };
    let (mut client, versions) = one_migration_behind(&db.url);
    assert_eq!(history(&mut client), versions[..versions.len() - 1]);
    PgStore::connect(&db.url).expect("connect");
    assert_eq!(history(&mut client), versions);
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn many_processes_at_once_bring_a_database_one_migration_behind_current() {
    let Some(db) = pg_db("many_processes_at_once_bring_a_database_one_migration_behind_current")
    else {
        return;
    };
    let (mut client, versions) = one_migration_behind(&db.url);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || PgStore::connect(&url).map(drop))
        })
        .collect();
    for h in handles {
        h.join().expect("thread").expect("connect");
    }
    assert_eq!(history(&mut client), versions);
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_changed_migration_is_reported_not_taken_as_current() {
    let Some(db) = pg_db("a_changed_migration_is_reported_not_taken_as_current") else {
        return;
    };
    PgStore::connect(&db.url).expect("connect");
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");
    // Same versions, one checksum different: the one-query check must not accept it.
    client
        .execute(
            "UPDATE refinery_schema_history SET checksum = '1' WHERE version = 1",
            &[],
        )
        .expect("spoil a checksum");
    let err = PgStore::connect(&db.url)
        .err()
        .expect("a changed migration must fail")
        .to_string();
    assert!(err.contains("migration"), "{err}");
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_refused_login_names_the_server_without_the_password() {
    let Some(db) = pg_db("a_refused_login_names_the_server_without_the_password") else {
        return;
    };
    // A database that does not exist, with a password in the URL.
    let url = db.url.replacen("://", "://sessiondb:hunter2@", 1).replacen(
        "://sessiondb:hunter2@sessiondb@",
        "://sessiondb:hunter2@",
        1,
    ) + "_missing";
    let err = PgStore::connect(&url).err().expect("must fail").to_string();
    assert!(err.contains("cannot connect to"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    assert!(err.contains("***"), "{err}");
}

fn sessiondb(db: &str, host: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env("SESSIONDB_HOST", host)
        .env("SESSIONDB_USER", "tester")
        .output()
        .expect("run sessiondb")
}

fn samples() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sample-projects")
        .to_string_lossy()
        .into_owned()
}

/// The verbs that work on a team store, through the binary: two machines import, each
/// session records the machine that brought it, `--host` filters by it, and the text
/// output names the database without its password.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn cli_verbs_on_a_team_store_record_and_filter_the_origin_host() {
    let Some(db) = pg_db("cli_verbs_on_a_team_store_record_and_filter_the_origin_host") else {
        return;
    };
    let url = db
        .url
        .replacen("://sessiondb@", "://sessiondb:pw-not-shown@", 1);
    let out = sessiondb(&url, "alpha", &["import", &samples()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 sessions"), "{text}");
    assert!(
        !text.contains("pw-not-shown") && text.contains(":***@"),
        "{text}"
    );
    // A second machine re-importing the same files adds no lines and takes no sessions over.
    let out = sessiondb(&url, "beta", &["import", &samples(), "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["new_rows"], 0, "{report}");
    let out = sessiondb(&url, "beta", &["sessions", "--json", "--all"]);
    let all: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(all.len(), 2);
    for s in &all {
        assert_eq!(s["origin_host"], "alpha", "{s}");
        assert_eq!(s["origin_user"], "tester", "{s}");
    }
    let out = sessiondb(
        &url,
        "beta",
        &["sessions", "--json", "--all", "--host", "beta"],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    let id = all[0]["session_id"].as_str().expect("id");
    let out = sessiondb(&url, "beta", &["info", id]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tester@alpha"), "{text}");
    assert!(!text.contains("pw-not-shown"), "{text}");
    let out = sessiondb(&url, "beta", &["resume", id, "--api"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(view.as_array().is_some_and(|v| !v.is_empty()));
    let out = sessiondb(&url, "beta", &["messages", id]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).is_empty());
    // The capture hooks name the team store without its password; nothing is created at
    // a path spelled like the URL.
    let dir = tempfile::tempdir().expect("tmp");
    let settings = dir.path().join("settings.json");
    let out = sessiondb(
        &url,
        "beta",
        &[
            "hooks",
            "install",
            "--settings",
            &settings.to_string_lossy(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&settings).expect("settings");
    assert!(written.contains(" capture"), "{written}");
    assert!(!written.contains("pw-not-shown"), "{written}");
    assert!(!std::path::Path::new("postgres:").exists());
}

/// The uuid rule of append across connections (as across processes and machines): eight
/// writers append overlapping batches of the same messages to one session at once; every
/// message is stored exactly once, and the chain stays one path.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn concurrent_appends_store_each_uuid_once() {
    let Some(db) = pg_db("concurrent_appends_store_each_uuid_once") else {
        return;
    };
    let store = PgStore::connect(&db.url).expect("connect");
    let samples =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects");
    sessiondb::pg::import::import_paths(&store, &[samples], &sessiondb::model::NoProgress)
        .expect("import");
    let session = store
        .read(|tx| {
            let all = sessiondb::pg::query::list_sessions(tx, &Default::default())?;
            sessiondb::pg::query::resolve_session(tx, &all[0].session_id)
        })
        .expect("session");
    let message = |i: usize| {
        serde_json::json!({
            "type": if i.is_multiple_of(2) { "user" } else { "assistant" },
            "uuid": format!("00000000-0000-4000-8000-{i:012}"),
            "message": {"role": if i.is_multiple_of(2) { "user" } else { "assistant" },
                        "content": format!("message {i}")},
        })
    };
    let handles: Vec<_> = (0..8)
        .map(|w| {
            let url = db.url.clone();
            let session = session.clone();
            std::thread::spawn(move || {
                let store = PgStore::connect(&url).expect("connect");
                // Writer w sends messages w..w+12 in batches of 4: neighbours overlap.
                for start in (w..w + 12).step_by(4) {
                    let batch: Vec<_> = (start..start + 4).map(message).collect();
                    sessiondb::pg::record::append_with(
                        &store,
                        &session,
                        &batch,
                        &Default::default(),
                    )
                    .expect("append");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("writer");
    }
    let counts: Vec<(String, i64)> = store
        .read(|tx| {
            Ok(tx
                .query(
                    "SELECT r.uuid, count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                     WHERE t.session_id = $1 AND r.uuid LIKE '00000000-0000-4000-8000-%'
                     GROUP BY r.uuid ORDER BY r.uuid",
                    &[&session.key],
                )?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect())
        })
        .expect("counts");
    assert_eq!(counts.len(), 8 + 11, "every message of 0..19 is stored");
    assert!(counts.iter().all(|(_, n)| *n == 1), "{counts:?}");
    let resumed =
        sessiondb::pg::resume::resume(&store, &session, &Default::default()).expect("resume");
    assert!(resumed.leaf_uuid.is_some());
}

/// Two machines' different copies of one session file: the second machine's import does
/// not hide the first machine's lines (the file is reported and left out, as `sync` reports
/// a conflict), while the first machine's own rewrite replaces its version as on SQLite.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_copy_from_another_machine_does_not_replace_a_version_it_did_not_bring() {
    let Some(db) = pg_db("a_copy_from_another_machine_does_not_replace_a_version") else {
        return;
    };
    const SESSION: &str = "c0ffee00-0000-4000-8000-000000000017";
    let root = tempfile::tempdir().expect("temp dir");
    let project = root.path().join("-w");
    std::fs::create_dir_all(&project).expect("project");
    let path = project.join(format!("{SESSION}.jsonl"));
    let line = |uuid: &str, text: &str| {
        serde_json::json!({"type": "user", "uuid": uuid, "sessionId": SESSION,
            "message": {"role": "user", "content": text}})
        .to_string()
            + "\n"
    };
    let dir = root.path().to_str().expect("utf-8");
    std::fs::write(&path, line("a1", "alpha's")).expect("write");
    let out = sessiondb(&db.url, "alpha", &["import", dir, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Beta's copy of the file went another way.
    std::fs::write(&path, line("b1", "beta's")).expect("write");
    let out = sessiondb(&db.url, "beta", &["import", dir, "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["files_failed"], 1, "{report}");
    assert_eq!(report["files_rewritten"], 0, "{report}");
    assert!(
        report["errors"][0]
            .as_str()
            .is_some_and(|e| e.contains("another machine's copy")),
        "{report}"
    );
    let export = || {
        let out = sessiondb(&db.url, "alpha", &["export", SESSION]);
        String::from_utf8(out.stdout).expect("utf-8")
    };
    assert_eq!(export(), line("a1", "alpha's"), "beta hid alpha's line");
    // Alpha's own file rewritten: a new version, as on SQLite.
    std::fs::write(&path, line("a2", "alpha's rewrite")).expect("write");
    let out = sessiondb(&db.url, "alpha", &["import", dir, "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["files_rewritten"], 1, "{report}");
    assert_eq!(export(), line("a2", "alpha's rewrite"));
}

/// V7 replaces V4's per-line search queue: the lines V4 left queued get their vectors, from
/// their queued words, and V4's table goes.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn lines_queued_before_v7_are_indexed_by_the_migration() {
    let Some(db) = pg_db("lines_queued_before_v7_are_indexed_by_the_migration") else {
        return;
    };
    let runner = embedded_pg::migrations::runner();
    let runs = runner
        .get_migrations()
        .iter()
        .find(|m| m.name() == "search_queue_runs")
        .expect("the search queue runs migration")
        .version();
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");
    embedded_pg::migrations::runner()
        .set_target(refinery::Target::Version(runs - 1))
        .run(&mut client)
        .expect("migrate to the one before");
    client
        .batch_execute(
            "INSERT INTO projects (key) VALUES ('p');
             INSERT INTO sessions (project_id, session_id, origin_host, origin_user)
                 SELECT id, 's', 'h', 'u' FROM projects;
             INSERT INTO transcripts (session_id, subpath) SELECT id, '' FROM sessions;
             INSERT INTO rows (transcript_id, ordinal, raw, local, search)
                 SELECT id, n, '{}'::bytea, true, ''::tsvector
                 FROM transcripts, generate_series(0, 2) n;
             INSERT INTO search_queue (row_id, body, tools)
                 SELECT id, 'wombat ' || ordinal, 'Bash' FROM rows WHERE ordinal < 2;",
        )
        .expect("a queued line as V4 stored it");
    PgStore::connect(&db.url).expect("connect");
    let found: i64 = client
        .query_one(
            "SELECT count(*) FROM rows WHERE search @@ to_tsquery('simple', 'wombat & bash')",
            &[],
        )
        .expect("search")
        .get(0);
    assert_eq!(found, 2);
    let left: i64 = client
        .query_one("SELECT count(*) FROM rows WHERE search = ''::tsvector", &[])
        .expect("count")
        .get(0);
    assert_eq!(left, 1, "the line that was not queued keeps its vector");
    let table: Option<String> = client
        .query_one("SELECT to_regclass('search_queue')::text", &[])
        .expect("regclass")
        .get(0);
    assert_eq!(table, None);
}

/// V8's triggers keep the promises of the foreign key they replaced: an insert naming a
/// transcript that does not exist fails (and stores nothing), a row cannot move to another
/// transcript, and deleting a transcript, or the session holding it, deletes its rows and
/// what hangs on them.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn rows_follow_their_transcript_as_the_foreign_key_made_them() {
    let Some(db) = pg_db("rows_follow_their_transcript_as_the_foreign_key_made_them") else {
        return;
    };
    PgStore::connect(&db.url).expect("connect");
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");
    client
        .batch_execute(
            "INSERT INTO projects (key) VALUES ('p');
             INSERT INTO sessions (project_id, session_id, origin_host, origin_user)
                 SELECT id, s, 'h', 'u' FROM projects, (VALUES ('s1'), ('s2')) v(s);
             INSERT INTO transcripts (session_id, subpath)
                 SELECT id, sub FROM sessions, (VALUES (''), ('subagents/agent-a')) v(sub);
             INSERT INTO rows (transcript_id, ordinal, raw)
                 SELECT id, n, '{}'::bytea FROM transcripts, generate_series(0, 2) n;
             INSERT INTO metadata (transcript_id, row_id, kind, value)
                 SELECT transcript_id, id, 'tag', 'x' FROM rows WHERE ordinal = 0;",
        )
        .expect("two sessions of two transcripts of three rows");
    let mut count = |sql: &str| -> i64 { client.query_one(sql, &[]).expect(sql).get(0) };
    assert_eq!(count("SELECT count(*) FROM rows"), 12);
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");
    let code = |client: &mut postgres::Client, sql: &str| {
        let err = client.batch_execute(sql).expect_err(sql);
        err.code().cloned().expect("a server error")
    };
    let missing = "INSERT INTO rows (transcript_id, ordinal, raw)
                   SELECT id, 9, ''::bytea FROM transcripts
                   UNION ALL SELECT max(id) + 1, 9, ''::bytea FROM transcripts";
    assert_eq!(
        code(&mut client, missing),
        postgres::error::SqlState::FOREIGN_KEY_VIOLATION
    );
    let moved = "UPDATE rows SET transcript_id = transcript_id + 1 WHERE ordinal = 1";
    assert_eq!(
        code(&mut client, moved),
        postgres::error::SqlState::FOREIGN_KEY_VIOLATION
    );
    client
        .batch_execute(
            "UPDATE rows SET status = 1 WHERE ordinal = 2;
             DELETE FROM transcripts WHERE subpath <> '' AND session_id =
                 (SELECT id FROM sessions WHERE session_id = 's1');
             DELETE FROM sessions WHERE session_id = 's2';",
        )
        .expect("other updates and the deletes");
    let mut count = |sql: &str| -> i64 { client.query_one(sql, &[]).expect(sql).get(0) };
    assert_eq!(
        count("SELECT count(*) FROM rows"),
        3,
        "s1's main transcript's"
    );
    assert_eq!(
        count("SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id"),
        3
    );
    assert_eq!(count("SELECT count(*) FROM metadata"), 1);
}

/// Issue 28 item 15: the three migration states refinery reported badly, or panicked on,
/// are clear errors through the binary (exit 1, never a panic's 101).
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn migration_troubles_are_clear_errors() {
    let Some(db) = pg_db("migration_troubles_are_clear_errors") else {
        return;
    };
    let run = |url: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sessiondb"))
            .arg("--db")
            .arg(url)
            .arg("sessions")
            .env_remove("SESSIONDB_PATH")
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut admin = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");

    // A role that may log in but not create tables, on a database without them yet.
    let role = format!("sessiondb_nocreate_{}", std::process::id());
    admin
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN;
             REVOKE CREATE ON SCHEMA public FROM PUBLIC"
        ))
        .expect("role");
    let as_role = db.url.replacen("sessiondb@", &format!("{role}@"), 1);
    assert_ne!(as_role, db.url, "the test URL names its user");
    let (code, err) = run(&as_role);
    admin
        .batch_execute(&format!("DROP ROLE {role}"))
        .expect("drop role");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("may not create tables in schema \"public\"")
            && err.contains("GRANT CREATE ON SCHEMA public"),
        "{err}"
    );

    // A database written by a newer sessiondb.
    PgStore::connect(&db.url).expect("connect");
    admin
        .execute(
            "INSERT INTO refinery_schema_history VALUES (99, 'future', '2030-01-01T00:00:00Z', '1')",
            &[],
        )
        .expect("a newer migration");
    let (code, err) = run(&db.url);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("this database was written by a newer sessiondb") && err.contains("V99"),
        "{err}"
    );

    // History rows refinery could not parse.
    admin
        .execute(
            "DELETE FROM refinery_schema_history WHERE version = 99",
            &[],
        )
        .expect("back");
    let original = admin
        .query_one(
            "SELECT name, applied_on, checksum, (SELECT checksum FROM refinery_schema_history
                 WHERE version = 1) FROM refinery_schema_history WHERE version = 2",
            &[],
        )
        .expect("row 2");
    let (name, applied_on, checksum, first): (String, String, String, String) = (
        original.get(0),
        original.get(1),
        original.get(2),
        original.get(3),
    );
    for spoil in [
        "applied_on = 'yesterday'",
        "checksum = 'abc'",
        "applied_on = NULL",
        "name = NULL",
    ] {
        admin
            .execute(
                &format!("UPDATE refinery_schema_history SET {spoil} WHERE version = 2"),
                &[],
            )
            .expect("spoil");
        // The runner reads the history only when something differs: a checksum too.
        admin
            .execute(
                "UPDATE refinery_schema_history SET checksum = '7' WHERE version = 1",
                &[],
            )
            .expect("spoil a checksum");
        let (code, err) = run(&db.url);
        admin
            .execute(
                "UPDATE refinery_schema_history SET name = $1, applied_on = $2, checksum = $3
                 WHERE version = 2",
                &[&name, &applied_on, &checksum],
            )
            .expect("restore");
        admin
            .execute(
                "UPDATE refinery_schema_history SET checksum = $1 WHERE version = 1",
                &[&first],
            )
            .expect("restore");
        assert_eq!(code, Some(1), "{spoil}: {err}");
        assert!(
            err.contains("malformed row for version 2"),
            "{spoil}: {err}"
        );
    }
    assert_eq!(run(&db.url).0, Some(0), "restored, the store opens");
}

/// A column that no longer holds what its reader expects (changed by another program) fails
/// the read with an error that names the column, its type and the Rust type expected, and
/// the process goes on: first a NULL where the store wrote a number, then a number of
/// another width.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_column_of_an_unexpected_type_or_null_is_an_error_naming_it() {
    let Some(db) = pg_db("a_column_of_an_unexpected_type_or_null_is_an_error_naming_it") else {
        return;
    };
    let store = PgStore::connect(&db.url).expect("connect");
    let samples =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-projects");
    sessiondb::pg::import::import_paths(&store, &[samples], &sessiondb::model::NoProgress)
        .expect("import");
    let list = || store.read(|tx| sessiondb::pg::query::list_sessions(tx, &Default::default()));
    assert!(!list().expect("list").is_empty());
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");

    client
        .batch_execute(
            "ALTER TABLE catalog ALTER COLUMN message_count DROP NOT NULL;
             UPDATE catalog SET message_count = NULL",
        )
        .expect("make message_count NULL");
    let e = list().expect_err("a NULL message_count");
    assert!(matches!(e, sessiondb::Error::Database(_)), "{e:?}");
    let shown = e.to_string();
    for part in ["column \"message_count\"", "int8", "i64", "NULL"] {
        assert!(shown.contains(part), "{part:?} not in {shown:?}");
    }

    client
        .batch_execute(
            "UPDATE catalog SET message_count = 0;
             ALTER TABLE catalog ALTER COLUMN file_size TYPE integer",
        )
        .expect("narrow file_size");
    let e = list().expect_err("an int4 file_size");
    let shown = e.to_string();
    for part in ["column \"file_size\"", "int4", "i64"] {
        assert!(shown.contains(part), "{part:?} not in {shown:?}");
    }
    // The store is still usable: the next read that expects nothing odd succeeds.
    store
        .read(sessiondb::pg::query::project_keys)
        .expect("another read");
}
