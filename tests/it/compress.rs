//! Compressed lines (issue 30): every read gives back the original bytes whether a line is
//! stored compressed or as it came; `compact` converts a store in place, from a database an
//! older sessiondb made too, resumes when stopped, and `check` still verifies the checksums
//! over the original bytes.

use crate::support::*;
use sessiondb::compact::{compact, CompactOptions};
use sessiondb::export;
use sessiondb::model::NoProgress;
use sessiondb::Store;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `projects` trees of the made oracle cases: a few MB of real-shaped sessions.
fn made_trees() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures/oracle-made"))
        .expect("oracle-made")
        .map(|e| e.expect("entry").path().join("projects"))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// Compacts with a dictionary trained however few lines the store holds.
fn compact_all(store: &Store) -> sessiondb::compact::CompactReport {
    let mut options = CompactOptions::default();
    options.tuning.train_min_bytes = 0;
    compact(store, &options, &NoProgress).expect("compact")
}

/// (lines stored compressed, lines stored as they came).
fn stored_kinds(store: &Store) -> (i64, i64) {
    let conn = store.reader().expect("reader");
    conn.query_row(
        "SELECT count(dict), count(*) - count(dict) FROM rows",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .expect("count")
}

#[test]
fn compacted_fixture_trees_export_search_and_check_byte_exact() {
    for projects in made_trees() {
        let (dir, store) = temp_store();
        let report = import(&store, &[&projects]);
        assert_eq!(report.files_failed, 0, "{:?}", report.errors);
        let search_before = store_search(&store);
        let done = compact_all(&store);
        assert!(done.lines_compressed > 0, "{}", projects.display());
        assert!(done.bytes_after < done.bytes_before);
        let (packed, _) = stored_kinds(&store);
        assert!(packed > 0);
        let out = dir.path().join("out");
        export::export_tree(&store, &out, None).expect("export tree");
        assert_same_tree(&projects, &out);
        assert_eq!(store_search(&store), search_before, "search after compact");
        let check = sessiondb::check::check(&store, false).expect("check");
        assert!(check.ok, "{:?}", check.problems);
        assert_eq!(check.lines_unsummed, 0);
        // A re-import stores nothing new; a compact again has nothing to do.
        assert_eq!(import(&store, &[&projects]).new_rows, 0);
        assert_eq!(compact_all(&store).lines_compressed, 0);
    }
}

/// The search hits (row ids and snippets) for a few words.
fn store_search(store: &Store) -> Vec<String> {
    let conn = store.reader().expect("reader");
    let mut stmt = conn
        .prepare(
            "SELECT rowid, coalesce(snippet(rows_fts, 0, '[', ']', '…', 8), '')
                    || coalesce(snippet(rows_fts, 1, '[', ']', '…', 8), '') FROM rows_fts
             WHERE rows_fts MATCH 'the OR file OR error' ORDER BY rowid",
        )
        .expect("prepare");
    let hits = stmt
        .query_map([], |r| {
            Ok(format!(
                "{}:{}",
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?
            ))
        })
        .expect("query");
    hits.collect::<Result<_, _>>().expect("hits")
}

#[test]
fn lines_imported_after_a_dictionary_exists_are_compressed_on_import() {
    // Trees whose files have paths of their own (several cases reuse one session's path).
    let mut seen = std::collections::BTreeSet::new();
    let trees: Vec<PathBuf> = made_trees()
        .into_iter()
        .filter(|t| read_tree(t).into_keys().all(|path| seen.insert(path)))
        .collect();
    assert!(trees.len() > 3, "{}", trees.len());
    let (first, rest) = trees.split_first().expect("trees");
    let (dir, store) = temp_store();
    import(&store, &[first]);
    compact_all(&store);
    let (_, plain_before) = stored_kinds(&store);
    let paths: Vec<&Path> = rest.iter().map(PathBuf::as_path).collect();
    let report = import(&store, &paths);
    assert_eq!(report.files_failed, 0, "{:?}", report.errors);
    let (packed, plain) = stored_kinds(&store);
    assert!(packed > plain * 4, "{packed} compressed, {plain} plain");
    assert!(plain - plain_before < packed, "import compressed its lines");
    for projects in &trees {
        let out = dir.path().join("out");
        let _ = std::fs::remove_dir_all(&out);
        export::export_tree(&store, &out, None).expect("export tree");
        let got = read_tree(&out);
        for (path, bytes) in read_tree(projects) {
            assert!(got.get(&path) == Some(&bytes), "{path} differs");
        }
    }
}

#[test]
fn a_stopped_compact_leaves_a_readable_store_and_the_next_run_goes_on() {
    let db_dir = tempfile::tempdir().expect("tmp");
    let db = db_dir.path().join("s.db");
    // a tree with more lines than the two batches of three the stopped run compresses
    let projects = &made_trees()
        .into_iter()
        .find(|t| {
            read_tree(t)
                .values()
                .map(|b| b.split(|&c| c == b'\n').count())
                .sum::<usize>()
                > 12
        })
        .expect("a made tree of more than 12 lines");
    sessiondb_ok(&db, &["import", &projects.to_string_lossy()]);
    let export_all = |tag: &str| {
        let out = db_dir.path().join(tag);
        sessiondb_ok(&db, &["export", "--all", "--out", &out.to_string_lossy()]);
        out
    };
    let want = read_tree(&export_all("before"));
    let stopped: serde_json::Value = serde_json::from_slice(&sessiondb_ok(
        &db,
        &[
            "compact",
            "--json",
            "--train-min-bytes",
            "0",
            "--batch-lines",
            "3",
            "--stop-after-batches",
            "2",
        ],
    ))
    .expect("JSON");
    assert_eq!(stopped["interrupted"], true);
    assert!(stopped["lines_compressed"].as_u64() > Some(0));
    let store = Store::open_read(&db).expect("open");
    let (packed, plain) = stored_kinds(&store);
    drop(store);
    assert!(
        packed > 0 && plain > 0,
        "{packed} compressed, {plain} plain"
    );
    assert_eq!(
        read_tree(&export_all("stopped")),
        want,
        "export after a stop"
    );
    let check: serde_json::Value =
        serde_json::from_slice(&sessiondb_ok(&db, &["check", "--json"])).expect("JSON");
    assert_eq!(check["ok"], true, "{check:#}");
    let rest: serde_json::Value = serde_json::from_slice(&sessiondb_ok(
        &db,
        &["compact", "--json", "--train-min-bytes", "0"],
    ))
    .expect("JSON");
    assert_eq!(
        rest["trained"], false,
        "the stored dictionary is used again"
    );
    assert_eq!(rest["dictionary"], stopped["dictionary"]);
    assert!(rest["lines_compressed"].as_u64() > Some(0));
    assert_eq!(rest["interrupted"], false);
    assert_eq!(
        read_tree(&export_all("after")),
        want,
        "export after the rest"
    );
}

#[test]
fn check_verifies_compressed_lines_over_their_original_bytes() {
    let (dir, store) = temp_store();
    let projects = dir.path().join("projects");
    copy_tree(&made_trees()[0], &projects);
    import(&store, &[&projects]);
    compact_all(&store);
    // Damage one compressed line on disk: its frame loses its last byte.
    let id: i64 = store
        .write(|tx| {
            let id: i64 = tx.query_row(
                "SELECT id FROM rows WHERE dict IS NOT NULL AND length(raw) > 40
                 ORDER BY id LIMIT 1",
                [],
                |r| r.get(0),
            )?;
            tx.execute(
                "UPDATE rows SET raw = CAST(substr(raw, 1, length(raw) - 1) AS BLOB) WHERE id = ?1",
                [id],
            )?;
            Ok(id)
        })
        .expect("damage");
    let report = sessiondb::check::check(&store, false).expect("check");
    assert!(!report.ok, "a damaged compressed line is found");
    let out = dir.path().join("out");
    let exported = export::export_tree(&store, &out, None).expect("export tree");
    assert_eq!(exported.skipped.len(), 1, "export skips the damaged file");
    let repaired = sessiondb::check::check(&store, true).expect("repair");
    assert!(repaired.ok, "{:?}", repaired.remaining);
    let dict: Option<i64> = store
        .reader()
        .expect("reader")
        .query_row("SELECT dict FROM rows WHERE id = ?1", [id], |r| r.get(0))
        .expect("dict");
    assert_eq!(
        dict, None,
        "the repaired line is stored as read from its file"
    );
    let _ = std::fs::remove_dir_all(&out);
    export::export_tree(&store, &out, None).expect("export tree");
    assert_same_tree(&projects, &out);
}

#[test]
fn compact_converts_a_database_made_by_an_older_release() {
    let dir = tempfile::tempdir().expect("tmp");
    let fresh = dir.path().join("fresh.db");
    sessiondb_ok(&fresh, &["import", &samples().to_string_lossy()]);
    let fixtures = root().join("tests/fixtures/db");
    let mut old: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".db.gz"))
        .collect();
    old.sort();
    // The oldest and the newest schemas a release shipped.
    for fixture in [old.first(), old.last()].into_iter().flatten() {
        let db = dir.path().join("old.db");
        let _ = std::fs::remove_file(&db);
        let out = std::process::Command::new("gzip")
            .arg("-dc")
            .arg(fixture)
            .output()
            .expect("gzip");
        std::fs::write(&db, out.stdout).expect("write");
        let report: serde_json::Value = serde_json::from_slice(&sessiondb_ok(
            &db,
            &["compact", "--json", "--train-min-bytes", "0"],
        ))
        .expect("JSON");
        assert!(
            report["lines_compressed"].as_u64() > Some(0),
            "{}: {report:#}",
            fixture.display()
        );
        for session in ["7c9d2e41", "8e1f3a52"] {
            for verb in [&["export", session][..], &["resume", session, "--api"][..]] {
                assert_eq!(
                    sessiondb_ok(&db, verb),
                    sessiondb_ok(&fresh, verb),
                    "{}: {verb:?}",
                    fixture.display()
                );
            }
        }
        let check: serde_json::Value =
            serde_json::from_slice(&sessiondb_ok(&db, &["check", "--json"])).expect("JSON");
        assert_eq!(check["ok"], true, "{check:#}");
        assert_eq!(
            check["lines_unsummed"], 0,
            "compact sums what it compresses"
        );
    }
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn the_corpus_is_compressed_on_import_and_round_trips_byte_identically() {
    let Some(shared) = shared_dir("the compressed corpus round trip") else {
        return;
    };
    let (_dir, store) = temp_store();
    let files = corpus_files(&shared);
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let report = import(&store, &paths);
    assert_eq!(report.files_failed, 0, "{:?}", report.errors);
    let (packed, plain) = stored_kinds(&store);
    assert!(packed > plain, "{packed} compressed, {plain} plain");
    let conn = store.reader().expect("reader");
    for file in &files {
        let id = report
            .named_by_records
            .iter()
            .find(|n| &n.path == file)
            .map_or_else(
                || {
                    file.file_stem()
                        .expect("stem")
                        .to_string_lossy()
                        .into_owned()
                },
                |n| n.session_id.clone(),
            );
        let session = sessiondb::query::resolve_session(&conn, &format!("claude-code/{id}"))
            .expect("session");
        let mut out = Vec::new();
        export::export_session(&store, &session, &mut out).expect("export");
        assert!(
            out == std::fs::read(file).expect("read"),
            "{} does not round-trip",
            file.display()
        );
    }
    drop(conn);
    let check = sessiondb::check::check(&store, false).expect("check");
    assert!(check.ok, "{:?}", check.problems);
}
