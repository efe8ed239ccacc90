//! Upgrades: shipped migrations never change, and a database made by every commit that
//! landed a schema opens, upgrades and reads like a fresh import of the same sessions.
//!
//! `tests/fixtures/db/NN-COMMIT.db.gz` were made by the sessiondb binary built at COMMIT
//! (`sessiondb --db F import` of `tests/fixtures/sample-projects`), one per commit of
//! `git log -- migrations`; see `tests/fixtures/db/README.md`.

use crate::support::{samples, sessiondb};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// SHA-256 of every shipped migration. A migration is frozen once it lands: add a new
/// `V<n>__name.sql` instead of editing one, and pin it here.
const PINNED: &[(&str, &str)] = &[
    (
        "V1__init.sql",
        "0b2a938bd48d6e30c29227b1039cbb48bb8837f4214317ed8991839bb4874b7c",
    ),
    (
        "V2__catalog.sql",
        "b879adee7e5d85a30719e397a45d9149a124ed29043850554859e58729445ea0",
    ),
    (
        "V3__search.sql",
        "48f353e7a9c5023dcbee4c0303336d8b5d67251659eda65b9f7ab2c406ac460f",
    ),
    (
        "V4__forks.sql",
        "5cd5c37a7559bf06ba279da5f48911c3d7f77bf7a52aa0ac52455c68406d20f5",
    ),
    (
        "V5__catalog_watermark.sql",
        "afada45038430f2dae40d7881022a2b1b8522c25abd6392d97c67ac09c6e3ff5",
    ),
    (
        "V6__search_queue.sql",
        "1a4e9ed982ee313e9b08622d0099a45f5c480208eca99d70cf46a90f13c92d42",
    ),
    (
        "V7__session_store.sql",
        "68a3de4061ed2aa15531cad00485847ef54aa81dda88f461f7a30b0c62bac73e",
    ),
    (
        "V8__local_rows.sql",
        "6e47ee3c1e150e7e3ed62c502a9c0e56ceae299519694e7100733e45194a15dd",
    ),
    (
        "V9__search_cap.sql",
        "b4a32b161e86cf22601b6a251407561b43711766350e54f95e9c4ace32b8a0fe",
    ),
    (
        "V10__line_checksum.sql",
        "04ca91e86d1db3010d854bb97ca79c30b073a86b63f4e355865c4b5dcaefdc89",
    ),
    (
        "V11__ledger_tail.sql",
        "3dfd6904222f0318318741e3f321718936595cbe66484e3598ec7703891a7a5b",
    ),
    (
        "V12__usage.sql",
        "6f7bda9e789af8a9647479187fd0c730699e075d722f914b5c301ecbcc8d183c",
    ),
    (
        "V13__transcripts_by_session.sql",
        "9f3583980844d22ea33b134882a4e69652f488434393334a1461cf95583d8245",
    ),
    (
        "V14__compressed_lines.sql",
        "133dad292f65e06447fe28422cdecf8dd740d3549ae7b0723007e6f5d6c53b24",
    ),
    (
        "V15__catalog_titles.sql",
        "bd64832542e9df094e52da82955a9c5640619f527c75c076c00b6e0f557438d7",
    ),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn shipped_migrations_are_frozen() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("migrations"))
        .expect("migrations")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for name in &files {
        let Some((_, want)) = PINNED.iter().find(|(n, _)| n == name) else {
            panic!("{name} is not pinned in tests/it/upgrade.rs: add its SHA-256 to PINNED");
        };
        let bytes = std::fs::read(root().join("migrations").join(name)).expect("read");
        let got = format!("{:x}", Sha256::digest(&bytes));
        assert_eq!(
            &got, want,
            "{name} changed after it shipped: add a new migration instead"
        );
    }
    for (name, _) in PINNED {
        assert!(files.iter().any(|f| f == name), "{name} was removed");
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

/// The fixture databases, oldest first.
fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures/db"))
        .expect("tests/fixtures/db")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".db.gz"))
        .collect();
    out.sort();
    out
}

fn gunzip(from: &Path, to: &Path) {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(from)
        .output()
        .expect("gzip is needed to unpack the fixture databases");
    assert!(out.status.success(), "gzip -dc {}", from.display());
    std::fs::write(to, out.stdout).expect("write fixture");
}

/// What a listing says about each session that does not depend on when or from where it
/// was imported.
fn listing(json: &[u8]) -> Vec<serde_json::Value> {
    let all: Vec<serde_json::Value> = serde_json::from_slice(json).expect("sessions JSON");
    all.into_iter()
        .map(|s| {
            serde_json::json!([
                s["session_id"],
                s["summary"],
                s["first_prompt"],
                s["custom_title"],
                s["git_branch"],
                s["cwd"],
                s["tag"],
                s["file_size"],
                s["message_count"],
                s["subagent_count"],
                s["listed"],
                s["project"]
            ])
        })
        .collect()
}

#[test]
fn a_database_of_every_landed_schema_opens_upgrades_and_reads_like_a_fresh_import() {
    let fixtures = fixtures();
    assert!(fixtures.len() >= 11, "one fixture per landed schema");
    let dir = tempfile::tempdir().expect("tmp");
    let samples = samples();
    let fresh = dir.path().join("fresh.db");
    ok(
        sessiondb(&fresh, &["import", &samples.to_string_lossy()]),
        "fresh import",
    );
    let want_list = listing(&ok(
        sessiondb(&fresh, &["sessions", "--json", "--all"]),
        "list",
    ));
    let want_search = ok(
        sessiondb(&fresh, &["search", "forecast", "--json"]),
        "search",
    );
    let sessions = ["7c9d2e41", "8e1f3a52"];
    // The usage projection of an upgraded database is filled from its stored lines.
    let usage_args = ["stats", "session", "daily", "--breakdown", "--json"];
    let want_usage = ok(sessiondb(&fresh, &usage_args), "stats");
    assert!(want_usage.len() > 100, "the samples have usage to count");

    for fixture in &fixtures {
        let name = fixture.file_name().expect("name").to_string_lossy();
        let db = dir.path().join(name.trim_end_matches(".gz"));
        gunzip(fixture, &db);
        // The first open is a read verb: it upgrades the writable database in place.
        let got_list = listing(&ok(
            sessiondb(&db, &["sessions", "--json", "--all"]),
            &format!("{name}: sessions"),
        ));
        assert_eq!(got_list, want_list, "{name}: catalog after the upgrade");
        let conn = rusqlite::Connection::open(&db).expect("open");
        let versions: Vec<i64> = conn
            .prepare("SELECT version FROM refinery_schema_history ORDER BY version")
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("versions");
        assert_eq!(
            versions.len(),
            PINNED.len(),
            "{name}: every migration applied"
        );
        let integrity: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("integrity");
        assert_eq!(integrity, "ok", "{name}");
        conn.execute(
            "INSERT INTO rows_fts (rows_fts) VALUES ('integrity-check')",
            [],
        )
        .unwrap_or_else(|e| panic!("{name}: the search index is inconsistent: {e}"));
        drop(conn);

        let got_usage = ok(sessiondb(&db, &usage_args), &format!("{name}: stats"));
        assert_eq!(got_usage, want_usage, "{name}: usage after the upgrade");
        for session in sessions {
            let exported = ok(
                sessiondb(&db, &["export", session]),
                &format!("{name}: export"),
            );
            let want = ok(sessiondb(&fresh, &["export", session]), "export fresh");
            assert_eq!(exported, want, "{name}: export of {session}");
            let resumed = ok(
                sessiondb(&db, &["resume", session, "--api"]),
                &format!("{name}: resume"),
            );
            let want = ok(sessiondb(&fresh, &["resume", session, "--api"]), "resume");
            assert_eq!(resumed, want, "{name}: resume of {session}");
        }
        let got_search: serde_json::Value = serde_json::from_slice(&ok(
            sessiondb(&db, &["search", "forecast", "--json"]),
            &format!("{name}: search"),
        ))
        .expect("JSON");
        let want: serde_json::Value = serde_json::from_slice(&want_search).expect("JSON");
        let ids = |v: &serde_json::Value| -> Vec<serde_json::Value> {
            v.as_array()
                .expect("hits")
                .iter()
                .map(|h| h["uuid"].clone())
                .collect()
        };
        assert_eq!(ids(&got_search), ids(&want), "{name}: search");
        // Lines stored before V10 have no checksum: `check` finds nothing wrong and counts
        // them as not checked; `check --repair` sums them.
        let check = |args: &[&str]| -> serde_json::Value {
            let out = sessiondb(&db, &[&["check", "--json"], args].concat());
            let report: serde_json::Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("{name}: check --json: {e}"));
            assert!(out.status.success(), "{name}: check: {report:#}");
            report
        };
        let report = check(&[]);
        assert_eq!(report["lines_checked"], 0, "{name}");
        assert!(report["lines_unsummed"].as_u64() > Some(0), "{name}");
        let report = check(&["--repair"]);
        assert_eq!(
            report["repair"]["summed"], report["lines_unsummed"],
            "{name}"
        );
        assert_eq!(check(&[])["lines_unsummed"], 0, "{name}");
        // And it takes writes.
        ok(
            sessiondb(&db, &["tag", sessions[0], "upgraded"]),
            &format!("{name}: tag"),
        );
        let again = ok(sessiondb(&db, &["info", sessions[0], "--json"]), "info");
        let info: serde_json::Value = serde_json::from_slice(&again).expect("JSON");
        assert_eq!(info["tag"], "upgraded", "{name}");
    }
}
