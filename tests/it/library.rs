//! The library API ([`sessiondb::SessionDb`]) as an application uses it: every verb of the
//! facade on the sample sessions, on a SQLite file and on a team store.

use crate::support::*;
use sessiondb::fork::ForkOptions;
use sessiondb::resume::ResumeOptions;
use sessiondb::search::SearchQuery;
use sessiondb::SessionDb;

const SESSION: &str = "7c9d2e41-5b6a-4f80-9a1b-2c3d4e5f6a71";

/// Runs every verb of the facade on `db`, a fresh store.
fn every_verb(db: &SessionDb) {
    let report = db.import(&[samples()]).expect("import");
    assert_eq!(report.files_failed, 0, "{:?}", report.errors);
    assert!(report.new_rows > 0);
    assert_eq!(db.import(&[samples()]).expect("again").new_rows, 0);

    let listed = db.sessions(&Default::default()).expect("sessions");
    assert!(listed.iter().any(|s| s.session_id == SESSION), "{listed:?}");

    let session = db.session("7c9d2e41").expect("by prefix");
    assert_eq!(session.session_id, SESSION);

    let file = samples().join(format!("-home-dev-weather-app/{SESSION}.jsonl"));
    let mut out = Vec::new();
    let bytes = db.export(&session, &mut out).expect("export");
    assert_eq!(bytes as usize, out.len());
    assert!(
        out == std::fs::read(&file).expect("read"),
        "export is byte-exact"
    );

    let messages = db.messages(&session).expect("messages");
    assert!(messages.iter().any(|m| m.kind == "user"));
    assert!(messages.iter().any(|m| m.kind == "assistant"));

    let resumed = db
        .resume(&session, &ResumeOptions::default())
        .expect("resume");
    assert_eq!(resumed.session_id, SESSION);

    let found = db
        .search(&SearchQuery {
            text: "fetch_forecast".into(),
            ..Default::default()
        })
        .expect("search");
    assert!(found.not_indexed.is_none(), "{:?}", found.not_indexed);
    assert!(found.hits.iter().any(|h| h.session_id == SESSION));

    let forked = db.fork(&session, &ForkOptions::default()).expect("fork");
    assert_ne!(forked.session_id, SESSION);
    let fork = db.session(&forked.session_id).expect("the fork is stored");

    let entry = serde_json::json!({
        "type": "user",
        "uuid": "0000f00d-0000-4000-8000-000000000001",
        "message": {"role": "user", "content": "zebracorn follow-up"},
    });
    let appended = db.append(&fork, &[entry]).expect("append");
    assert_eq!(appended.written, 1);
    let found = db
        .search(&SearchQuery {
            text: "zebracorn".into(),
            ..Default::default()
        })
        .expect("search");
    assert_eq!(found.hits.len(), 1, "{:?}", found.hits);
    assert_eq!(found.hits[0].session_id, forked.session_id);

    let checked = db.check(false).expect("check");
    assert!(checked.ok, "{checked:?}");
}

#[test]
fn every_verb_on_a_sqlite_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = SessionDb::open(dir.path().join("s.db").to_str().expect("utf-8")).expect("open");
    every_verb(&db);
    drop(db);
    let read =
        SessionDb::open_read(dir.path().join("s.db").to_str().expect("utf-8")).expect("open_read");
    assert!(read.sessions(&Default::default()).expect("list").len() >= 3);
}

#[test]
#[cfg_attr(not(sessiondb_pg), ignore = "needs PostgreSQL (SESSIONDB_TEST_PG)")]
fn every_verb_on_a_team_store() {
    let Some(pg) = pg_db("every_verb_on_a_team_store") else {
        return;
    };
    every_verb(&SessionDb::open(&pg.url).expect("open"));
}

/// An app shares one store between its threads.
#[test]
fn a_store_is_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<SessionDb>();
    shareable::<sessiondb::Error>();
}
