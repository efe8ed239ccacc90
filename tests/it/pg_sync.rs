//! `sessiondb sync`: a local SQLite store copied into a PostgreSQL team store, incrementally.
//! Every test needs a server (`SESSIONDB_TEST_PG`); without one it is skipped with a
//! message, and under CI it fails.

use crate::support::*;
use serde_json::{json, Value};
use sessiondb::model::NoProgress;
use sessiondb::pg::sync::{sync, SyncReport};
use sessiondb::pg::PgStore;
use sessiondb::query::{SessionFilter, SessionInfo};
use sessiondb::Store;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn sync_into(store: &Store, url: &str) -> SyncReport {
    let target = PgStore::connect(url).expect("connect");
    sync(store, &target, &NoProgress).expect("sync")
}

/// The corpus, plus oracle trees with sub-agent transcripts, `.meta.json` sidecars and
/// tool-result files (session files), in one local store.
fn sample_store(shared: &Path) -> (tempfile::TempDir, Store) {
    let (dir, store) = temp_store();
    let mut paths = corpus_files(shared);
    for case in ["subagent_resume__step-04", "content_replacement__step-01"] {
        let projects = shared.join("oracle/cases").join(case).join("projects");
        assert!(projects.is_dir(), "{} is missing", projects.display());
        paths.push(projects);
    }
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let report = import(&store, &paths);
    assert_eq!(report.files_failed, 0, "{:?}", report.errors);
    (dir, store)
}

/// Exports both stores' trees and asserts they are the same files, byte for byte.
fn assert_same_export(store: &Store, url: &str) -> usize {
    let local = tempfile::tempdir().expect("temp dir");
    let team = tempfile::tempdir().expect("temp dir");
    sessiondb::export::export_tree(store, local.path(), None).expect("export sqlite");
    let target = PgStore::connect(url).expect("connect");
    sessiondb::pg::export::export_tree(&target, team.path(), None).expect("export postgres");
    assert_same_tree(local.path(), team.path());
    read_tree(local.path()).len()
}

/// Every session's catalog entry, without the team store's origin fields.
fn listing_of(list: Vec<SessionInfo>) -> Vec<SessionInfo> {
    list.into_iter()
        .map(|mut s| {
            s.origin_host = None;
            s.origin_user = None;
            s
        })
        .collect()
}

fn all_sessions() -> SessionFilter {
    SessionFilter {
        include_hidden: true,
        ..SessionFilter::default()
    }
}

fn local_listing(store: &Store) -> Vec<SessionInfo> {
    listing_of(
        sessiondb::query::list_sessions(&store.reader().expect("reader"), &all_sessions())
            .expect("list"),
    )
}

fn team_listing(url: &str) -> Vec<SessionInfo> {
    let target = PgStore::connect(url).expect("connect");
    listing_of(
        target
            .read(|tx| sessiondb::pg::query::list_sessions(tx, &all_sessions()))
            .expect("list"),
    )
}

/// What a team store holds, independent of its row ids: every line with its projections
/// and search vector, the files, the ledger, the side tables and the sessions' origins.
fn team_dump(url: &str) -> Vec<String> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    let queries = [
        "SELECT p.key || '/' || s.session_id || ' ' || s.origin_host || ' ' || s.origin_user
         FROM sessions s JOIN projects p ON p.id = s.project_id",
        "SELECT p.key || ' ' || coalesce(p.cwd, '-') FROM projects p",
        "SELECT s.session_id || '/' || t.subpath || ' ' || coalesce(t.agent_id, '-') || ' '
                || coalesce(encode(t.meta_json, 'hex'), '-') || ' '
                || (t.superseded_at IS NULL)::text
         FROM transcripts t JOIN sessions s ON s.id = t.session_id",
        "SELECT s.session_id || '/' || t.subpath || ' ' || r.ordinal || ' '
                || encode(sha256(r.raw), 'hex') || ' ' || r.terminated || ' ' || r.status || ' '
                || coalesce(r.type, '-') || ' ' || coalesce(r.uuid, '-') || ' '
                || coalesce(r.entry_session_id, '-') || ' ' || r.local || ' '
                || coalesce(r.search::text, '-')
         FROM rows r JOIN transcripts t ON t.id = r.transcript_id
         JOIN sessions s ON s.id = t.session_id WHERE t.superseded_at IS NULL",
        "SELECT s.session_id || '/' || f.relpath || ' ' || encode(sha256(f.content), 'hex')
         FROM session_files f JOIN sessions s ON s.id = f.session_id",
        "SELECT host || ' ' || path || ' ' || size || ' ' || mtime_ns || ' ' || imported_bytes
                || ' ' || prefix_hash || ' ' || (transcript_id IS NULL)::text
         FROM source_files",
        "SELECT 'compactions ' || count(*) FROM compactions",
        "SELECT 'content_replacements ' || count(*) FROM content_replacements",
        "SELECT 'file_history ' || count(*) FROM file_history",
        "SELECT 'metadata ' || string_agg(kind || '=' || coalesce(value, '-'), ',' ORDER BY kind, value)
         FROM metadata",
    ];
    let mut out = Vec::new();
    for q in queries {
        let mut rows: Vec<String> = client
            .query(q, &[])
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .into_iter()
            .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default())
            .collect();
        rows.sort();
        out.extend(rows);
    }
    out
}

#[test]
#[cfg_attr(
    not(all(sessiondb_shared, sessiondb_pg)),
    ignore = "needs ../shared and PostgreSQL (SESSIONDB_TEST_PG)"
)]
fn sync_of_the_sample_store_exports_byte_exact_and_a_second_sync_sends_nothing() {
    let Some(shared) = shared_dir("sync of the sample store") else {
        return;
    };
    let Some(db) = pg_db("sync_of_the_sample_store_exports_byte_exact") else {
        return;
    };
    slow(
        "pg_sync::sync_of_the_sample_store_exports_byte_exact",
        "copies the corpus into PostgreSQL",
    );
    let (_dir, store) = sample_store(&shared);
    let first = sync_into(&store, &db.url);
    assert!(first.conflicts.is_empty(), "{:?}", first.conflicts);
    assert_eq!(first.transcripts_copied, first.transcripts);
    assert_eq!(first.sessions_created, first.sessions);
    assert!(first.files > 0, "the sample has session files");
    assert_eq!(first.files_copied, first.files);
    assert_eq!(first.rows_sent as i64, count(&store, "rows"));
    let exported = assert_same_export(&store, &db.url);
    assert!(exported > 40, "only {exported} files exported");
    assert_eq!(local_listing(&store), team_listing(&db.url));

    // The origin is the syncing machine and account, as the backend records them.
    let target = PgStore::connect(&db.url).expect("connect");
    let origins: Vec<(String, String)> = target
        .read(|tx| {
            Ok(tx
                .query(
                    "SELECT DISTINCT origin_host, origin_user FROM sessions",
                    &[],
                )?
                .into_iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect())
        })
        .expect("origins");
    assert_eq!(
        origins,
        vec![(target.origin().host.clone(), target.origin().user.clone())]
    );

    let before = team_dump(&db.url);
    let second = sync_into(&store, &db.url);
    assert!(second.sent_nothing(), "{second:?}");
    assert_eq!(second.transcripts_unchanged, second.transcripts);
    assert_eq!(second.files_unchanged, second.files);
    assert_eq!(second.sessions_created, 0);
    assert_eq!(
        team_dump(&db.url),
        before,
        "a second sync changed the team store"
    );
}

/// A sync killed with SIGKILL part-way, then run again, leaves the team store as one clean
/// run does: whole units only, nothing twice, nothing missing.
#[test]
#[cfg_attr(
    not(all(sessiondb_shared, sessiondb_pg)),
    ignore = "needs ../shared and PostgreSQL (SESSIONDB_TEST_PG)"
)]
fn a_sync_killed_mid_way_then_rerun_equals_one_clean_run() {
    let Some(shared) = shared_dir("a killed sync") else {
        return;
    };
    let Some(killed) = pg_db("a_sync_killed_mid_way (killed)") else {
        return;
    };
    let Some(clean) = pg_db("a_sync_killed_mid_way (clean)") else {
        return;
    };
    slow(
        "pg_sync::a_sync_killed_mid_way_then_rerun_equals_one_clean_run",
        "syncs the corpus three times through the binary",
    );
    let (dir, store) = sample_store(&shared);
    let local = dir.path().join("sessions.db");
    let transcripts = count(&store, "transcripts");
    drop(store);
    let bin = env!("CARGO_BIN_EXE_sessiondb");
    let run = |url: &str| {
        Command::new(bin)
            .args(["--db"])
            .arg(&local)
            .args(["sync", "--json", "--to", url])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn sync")
    };

    let mut child = run(&killed.url);
    let mut client = connect_when_ready(&killed.url);
    let started = Instant::now();
    let copied_at_kill = loop {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the sync finished before it could be killed"
        );
        let copied: i64 = client
            .query_one("SELECT count(*) FROM transcripts", &[])
            .map_or(0, |r| r.get(0));
        if copied >= 2 {
            child.kill().expect("SIGKILL");
            child.wait().expect("reap");
            break copied;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the sync made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let after_kill: i64 = client
        .query_one("SELECT count(*) FROM transcripts", &[])
        .expect("count")
        .get(0);
    assert!(
        after_kill < transcripts,
        "the sync was killed after it finished ({after_kill} of {transcripts})"
    );
    assert!(after_kill >= copied_at_kill);
    // Whole units: a stored transcript without lines is one that has none in the local store
    // either (the corpus holds an empty sub-agent file).
    let lineless: Vec<(String, String)> = client
        .query(
            "SELECT s.session_id, t.subpath FROM transcripts t JOIN sessions s ON s.id = t.session_id
             WHERE NOT EXISTS (SELECT 1 FROM rows r WHERE r.transcript_id = t.id)",
            &[],
        )
        .expect("lineless transcripts")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let source = rusqlite::Connection::open(&local).expect("open the local store");
    for (session_id, subpath) in &lineless {
        let lines: i64 = source
            .query_row(
                "SELECT count(*) FROM rows r JOIN transcripts t ON t.id = r.transcript_id
                 JOIN sessions s ON s.id = t.session_id
                 WHERE s.session_id = ?1 AND t.subpath = ?2 AND t.superseded_at IS NULL",
                [session_id, subpath],
                |r| r.get(0),
            )
            .expect("local lines");
        assert_eq!(
            lines, 0,
            "{session_id}/{subpath} was stored without its {lines} lines"
        );
    }
    drop(source);

    for url in [&killed.url, &clean.url] {
        let out = run(url).wait_with_output().expect("sync");
        assert!(
            out.status.success(),
            "sync failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).expect("json summary");
        assert_eq!(report["conflicts"], json!([]));
    }
    assert_eq!(team_dump(&killed.url), team_dump(&clean.url));
    assert_eq!(team_listing(&killed.url), team_listing(&clean.url));
    let store = Store::open(&local).expect("reopen");
    assert_same_export(&store, &killed.url);
}

/// A connection to a database the sync is about to create tables in.
fn connect_when_ready(url: &str) -> postgres::Client {
    let started = Instant::now();
    loop {
        match postgres::Client::connect(url, postgres::NoTls) {
            Ok(mut client) => {
                if client
                    .query_one("SELECT to_regclass('transcripts') IS NOT NULL", &[])
                    .is_ok_and(|r| r.get::<_, bool>(0))
                {
                    return client;
                }
            }
            Err(e) => assert!(started.elapsed() < Duration::from_secs(60), "{e}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the sync never created its tables"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A project folder with one session file of `lines`, imported into `store`.
fn write_session(root: &Path, session: &str, bytes: &[u8]) -> PathBuf {
    let project = root.join("-home-me-proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let path = project.join(format!("{session}.jsonl"));
    std::fs::write(&path, bytes).expect("write");
    path
}

const SESSION: &str = "5e55c0de-0000-4000-8000-000000000001";

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn lines_appended_tagged_and_renamed_locally_reach_the_team_store() {
    let Some(db) = pg_db("lines_appended_tagged_and_renamed_locally_reach_the_team_store") else {
        return;
    };
    let src = tempfile::tempdir().expect("temp dir");
    let body =
        user_line(SESSION, "u1", None, "first") + &user_line(SESSION, "u2", Some("u1"), "second");
    let path = write_session(src.path(), SESSION, body.as_bytes());
    let (_dir, store) = temp_store();
    import(&store, &[&path]);
    assert_eq!(sync_into(&store, &db.url).transcripts_copied, 1);

    let session = sessiondb::query::resolve_session(&store.reader().expect("reader"), SESSION)
        .expect("session");
    let entries = vec![
        json!({"type": "user", "uuid": "u3", "message": {"role": "user", "content": "third"}}),
        json!({"type": "assistant", "uuid": "u4", "message": {"role": "assistant", "content": [{"type": "text", "text": "fourth"}]}}),
    ];
    store.append(&session, &entries).expect("append");
    sessiondb::metadata::tag_session(&store, &session, Some("shared")).expect("tag");
    sessiondb::metadata::rename_session(&store, &session, "Team title").expect("rename");
    let local_lines = count(&store, "rows");

    let report = sync_into(&store, &db.url);
    assert_eq!(report.transcripts_extended, 1, "{report:?}");
    assert_eq!(report.rows_sent as i64, local_lines - 2, "{report:?}");
    assert_same_export(&store, &db.url);
    assert_eq!(local_listing(&store), team_listing(&db.url));
    let team = team_listing(&db.url);
    assert_eq!(team[0].tag.as_deref(), Some("shared"));
    assert_eq!(team[0].custom_title.as_deref(), Some("Team title"));
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");
    let local_rows: i64 = client
        .query_one("SELECT count(*) FROM rows WHERE local", &[])
        .expect("count")
        .get(0);
    assert_eq!(local_rows, local_lines - 2, "the local flag is kept");
    assert!(sync_into(&store, &db.url).sent_nothing());
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn grown_rewritten_and_open_ended_files_sync_only_what_changed() {
    let Some(db) = pg_db("grown_rewritten_and_open_ended_files_sync_only_what_changed") else {
        return;
    };
    let src = tempfile::tempdir().expect("temp dir");
    let one = user_line(SESSION, "u1", None, "one");
    let two = user_line(SESSION, "u2", Some("u1"), "two");
    // The last line has no newline yet: Claude Code was writing it.
    let open = two.trim_end_matches('\n');
    let path = write_session(src.path(), SESSION, format!("{one}{open}").as_bytes());
    let (_dir, store) = temp_store();
    import(&store, &[&path]);
    sync_into(&store, &db.url);
    assert_same_export(&store, &db.url);

    // The open line is completed and one more follows: the team store's open line is
    // replaced by its complete version, and only the new lines are sent.
    let three = user_line(SESSION, "u3", Some("u2"), "three");
    std::fs::write(&path, format!("{one}{two}{three}")).expect("grow");
    import(&store, &[&path]);
    let grown = sync_into(&store, &db.url);
    assert_eq!(grown.transcripts_extended, 1, "{grown:?}");
    assert_eq!(grown.rows_sent, 2, "{grown:?}");
    assert_same_export(&store, &db.url);

    // Rewritten (not a prefix any more): the local store supersedes its version, and so
    // does the team store, keeping the old one.
    let other = user_line(SESSION, "v1", None, "rewritten");
    std::fs::write(&path, &other).expect("rewrite");
    import(&store, &[&path]);
    let rewritten = sync_into(&store, &db.url);
    assert_eq!(rewritten.transcripts_replaced, 1, "{rewritten:?}");
    assert_same_export(&store, &db.url);
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");
    let versions: i64 = client
        .query_one(
            "SELECT count(*) FROM transcripts WHERE superseded_at IS NOT NULL",
            &[],
        )
        .expect("count")
        .get(0);
    assert_eq!(versions, 1, "the old version is kept, superseded");
    assert!(sync_into(&store, &db.url).sent_nothing());
}

/// Lines only the team store holds (another writer's) are never hidden: a team store ahead
/// of the local store is left as it is, and one that went another way is a conflict.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn lines_only_the_team_store_holds_are_kept_and_a_divergence_is_reported() {
    let Some(db) = pg_db("lines_only_the_team_store_holds_are_kept") else {
        return;
    };
    let src = tempfile::tempdir().expect("temp dir");
    let path = write_session(
        src.path(),
        SESSION,
        user_line(SESSION, "u1", None, "mine").as_bytes(),
    );
    let (_dir, store) = temp_store();
    import(&store, &[&path]);
    sync_into(&store, &db.url);
    // Another writer adds a line to the team store's transcript.
    let theirs = user_line(SESSION, "t1", Some("u1"), "theirs");
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).expect("connect");
    client
        .execute(
            "INSERT INTO rows (transcript_id, ordinal, raw, type, uuid)
             SELECT id, 1, $1, 'user', 't1' FROM transcripts",
            &[&theirs.trim_end().as_bytes()],
        )
        .expect("another writer");
    let ahead = team_dump(&db.url);
    let report = sync_into(&store, &db.url);
    assert!(report.sent_nothing(), "{report:?}");
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(
        team_dump(&db.url),
        ahead,
        "the team store's own line was touched"
    );

    // The local store goes another way: a conflict, and the team store keeps its lines.
    let session = sessiondb::query::resolve_session(&store.reader().expect("reader"), SESSION)
        .expect("session");
    store
        .append(
            &session,
            &[json!({"type": "user", "uuid": "u2", "message": {"role": "user", "content": "local"}})],
        )
        .expect("append");
    let report = sync_into(&store, &db.url);
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    assert!(
        report.conflicts[0].contains(SESSION),
        "{:?}",
        report.conflicts
    );
    assert!(
        report.conflicts[0].contains("1 line(s) this store never had"),
        "{:?}",
        report.conflicts
    );
    assert_eq!(report.rows_sent, 0);
    assert_eq!(
        team_dump(&db.url),
        ahead,
        "another writer's version was changed"
    );

    // Through the binary: the conflict is a warning and a failing exit status.
    let out = Command::new(env!("CARGO_BIN_EXE_sessiondb"))
        .arg("--db")
        .arg(store.path())
        .args(["sync", "--to", &db.url])
        .output()
        .expect("run sync");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 file not synced"), "{stderr}");
}

#[test]
fn sync_refuses_a_target_that_is_not_postgres_and_never_prints_the_password() {
    let (dir, store) = temp_store();
    drop(store);
    let bin = env!("CARGO_BIN_EXE_sessiondb");
    let local = dir.path().join("sessions.db");
    let out = Command::new(bin)
        .arg("--db")
        .arg(&local)
        .args(["sync", "--to", "other.db"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--to must name a PostgreSQL team store"),
        "{stderr}"
    );

    // A server that does not answer: the message names it without the password.
    let out = Command::new(bin)
        .arg("--db")
        .arg(&local)
        .args([
            "sync",
            "--to",
            "postgres://me:hunter2@127.0.0.1:1/team?connect_timeout=2",
        ])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("hunter2"), "{all}");
    assert!(all.contains("me:***@127.0.0.1:1/team"), "{all}");

    // --from naming a team store is refused before anything is opened.
    let out = Command::new(bin)
        .args([
            "sync",
            "--from",
            "postgres://me:hunter2@127.0.0.1:1/a",
            "--to",
            "postgres://me:hunter2@127.0.0.1:1/b",
        ])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sync copies a local SQLite store"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// Two syncs of one local store into one team store at once: each unit is decided under
/// the session's row lock, so the result is one clean run's, with no line stored twice.
#[test]
#[cfg_attr(
    not(all(sessiondb_shared, sessiondb_pg)),
    ignore = "needs ../shared and PostgreSQL (SESSIONDB_TEST_PG)"
)]
fn two_syncs_at_once_store_every_line_once() {
    let Some(shared) = shared_dir("two syncs at once") else {
        return;
    };
    let Some(raced) = pg_db("two_syncs_at_once (raced)") else {
        return;
    };
    let Some(clean) = pg_db("two_syncs_at_once (clean)") else {
        return;
    };
    slow(
        "pg_sync::two_syncs_at_once_store_every_line_once",
        "syncs the corpus three times",
    );
    let (dir, store) = sample_store(&shared);
    let local = dir.path().join("sessions.db");
    // Both connect (and migrate) first, so that they start copying together.
    let targets: Vec<PgStore> = (0..2)
        .map(|_| PgStore::connect(&raced.url).expect("connect"))
        .collect();
    let reports: Vec<SyncReport> = std::thread::scope(|scope| {
        let handles: Vec<_> = targets
            .iter()
            .map(|target| {
                let local = local.clone();
                scope.spawn(move || {
                    let store = Store::open_read(&local).expect("open");
                    sync(&store, target, &NoProgress).expect("sync")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    for r in &reports {
        assert!(r.conflicts.is_empty(), "{:?}", r.conflicts);
    }
    // Between them, every local line was sent exactly once.
    let sent: u64 = reports.iter().map(|r| r.rows_sent).sum();
    assert_eq!(sent as i64, count(&store, "rows"), "{reports:?}");
    sync_into(&store, &clean.url);
    assert_eq!(team_dump(&raced.url), team_dump(&clean.url));
    assert_eq!(team_listing(&raced.url), team_listing(&clean.url));
    assert_same_export(&store, &raced.url);
}

/// A rewritten file follows import's rule on `sync` too: the team store's version is
/// superseded, and a line a team-store writer appended there through sessiondb (a `serve`
/// client, an `append`) is carried over to the new version instead of being hidden.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn a_rewritten_file_carries_the_team_stores_local_lines_over() {
    let Some(db) = pg_db("a_rewritten_file_carries_the_team_stores_local_lines_over") else {
        return;
    };
    let src = tempfile::tempdir().expect("temp dir");
    let one = user_line(SESSION, "u1", None, "one");
    let path = write_session(src.path(), SESSION, one.as_bytes());
    let (_dir, store) = temp_store();
    import(&store, &[&path]);
    sync_into(&store, &db.url);
    // A writer of the team store appends a message there.
    let team = PgStore::connect(&db.url).expect("connect");
    let session = team
        .read(|tx| sessiondb::pg::query::resolve_session(tx, SESSION))
        .expect("session");
    let theirs =
        json!({"type": "user", "uuid": "t1", "message": {"role": "user", "content": "theirs"}});
    sessiondb::pg::record::append_with(&team, &session, &[theirs], &Default::default())
        .expect("append");
    // The local file is rewritten and imported again.
    let other = user_line(SESSION, "v1", None, "rewritten");
    std::fs::write(&path, &other).expect("rewrite");
    import(&store, &[&path]);
    let report = sync_into(&store, &db.url);
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(report.transcripts_replaced, 1, "{report:?}");
    let mut out = Vec::new();
    sessiondb::pg::export::export_session(&team, &session, &mut out).expect("export");
    let out = String::from_utf8(out).expect("utf-8");
    assert!(out.starts_with(&other), "{out}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.lines().nth(1).is_some_and(|l| l.contains("\"t1\"")),
        "{out}"
    );
    // The carried line is in the team store now: the next sync finds it ahead, not apart.
    assert!(sync_into(&store, &db.url).sent_nothing());
}

/// After a sync the team store holds this machine's ledger as the local store has it, so an
/// import of the grown file from this machine stores only its new lines.
#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn an_import_after_a_sync_goes_on_where_the_local_store_stood() {
    let Some(db) = pg_db("an_import_after_a_sync_goes_on_where_the_local_store_stood") else {
        return;
    };
    let src = tempfile::tempdir().expect("temp dir");
    let one = user_line(SESSION, "u1", None, "one");
    let path = write_session(src.path(), SESSION, one.as_bytes());
    let (_dir, store) = temp_store();
    import(&store, &[&path]);
    sync_into(&store, &db.url);
    let two = user_line(SESSION, "u2", Some("u1"), "two");
    std::fs::write(&path, format!("{one}{two}")).expect("grow");
    let team = PgStore::connect(&db.url).expect("connect");
    let report =
        sessiondb::pg::import::import_paths(&team, std::slice::from_ref(&path), &NoProgress)
            .expect("import");
    assert_eq!(report.files_rewritten, 0, "{report:?}");
    assert_eq!(report.new_rows, 1, "{report:?}");
}
