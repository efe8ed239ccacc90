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
            "UPDATE rows SET search = NULL
               WHERE id IN (SELECT id FROM rows WHERE search IS NOT NULL ORDER BY id LIMIT 3);
             UPDATE rows SET search = to_tsvector('simple', 'bogus words')
               WHERE id = (SELECT max(id) FROM rows WHERE search IS NOT NULL);
             UPDATE rows SET search = to_tsvector('simple', 'not searched')
               WHERE id = (SELECT min(id) FROM rows WHERE search IS NULL);
             UPDATE catalog SET message_count = message_count + 7, first_prompt = 'edited'
               WHERE session_key = (SELECT min(session_key) FROM catalog);
             DELETE FROM catalog WHERE session_key = (SELECT max(session_key) FROM catalog);",
        )
        .expect("spoil");
}

#[test]
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
