//! Import then export is byte-identical over every real transcript we have, importing twice
//! adds nothing, and an import interrupted by a cut file converges to a whole import.

use crate::support::*;
use sessiondb::{export, query};
use std::path::Path;

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn corpus_files_round_trip_byte_identically() {
    let Some(shared) = shared_dir("the corpus round trip") else {
        return;
    };
    let (_dir, store) = temp_store();
    let files = corpus_files(&shared);
    let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let first = import(&store, &paths);
    assert_eq!(first.files_failed, 0, "{:?}", first.errors);
    let conn = store.reader().expect("reader");
    for file in &files {
        // A file whose name is not a session id is stored under the one its records carry.
        let id = first
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
        let session = query::resolve_session(&conn, &format!("claude-code/{id}")).expect("session");
        let mut out = Vec::new();
        export::export_session(&store, &session, &mut out).expect("export");
        let original = std::fs::read(file).expect("read");
        assert!(out == original, "{} does not round-trip", file.display());
    }
    drop(conn);
    let rows = count(&store, "rows");
    let again = import(&store, &paths);
    assert_eq!(again.new_rows, 0);
    assert_eq!(again.files_unchanged, files.len() as u64);
    assert_eq!(count(&store, "rows"), rows, "importing twice adds nothing");
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn oracle_case_trees_round_trip() {
    let Some(shared) = shared_dir("the oracle tree round trip") else {
        return;
    };
    let mut cases: Vec<_> = std::fs::read_dir(shared.join("oracle/cases"))
        .expect("cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("projects").is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty());
    for case in cases {
        let projects = case.join("projects");
        let (dir, store) = temp_store();
        let report = import(&store, &[&projects]);
        assert_eq!(
            report.files_failed,
            0,
            "{}: {:?}",
            case.display(),
            report.errors
        );
        let out = dir.path().join("out");
        export::export_tree(&store, &out, None).expect("export tree");
        assert_same_tree(&projects, &out);
        let again = import(&store, &[&projects]);
        assert_eq!(
            again.new_rows,
            0,
            "{}: re-import added rows",
            case.display()
        );
    }
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn sdk_rebuilt_tree_round_trips_with_subagents_and_sidecars() {
    let Some(shared) = shared_dir("the SDK tree round trip") else {
        return;
    };
    let (dir, store) = temp_store();
    let config = dir.path().join("config");
    let status = std::process::Command::new("python3")
        .arg(shared.join("oracle/sdk/rebuild_tree.py"))
        .arg(&config)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 runs rebuild_tree.py");
    assert!(status.success(), "rebuild_tree.py failed");
    let projects = config.join("projects");
    let extra = shared.join("oracle/sdk/extra");
    let report = import(&store, &[&projects]);
    assert_eq!(report.files_failed, 0, "{:?}", report.errors);
    let out = dir.path().join("out");
    export::export_tree(&store, &out, None).expect("export");
    assert_same_tree(&projects, &out);
    let sidecars = read_tree(&projects)
        .keys()
        .filter(|k| k.ends_with(".meta.json"))
        .count();
    let conn = store.reader().expect("reader");
    let stored: i64 = conn
        .query_row(
            "SELECT count(*) FROM transcripts WHERE meta_json IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(
        stored as usize, sidecars,
        "every sidecar is attached to its agent transcript"
    );
    if extra.is_dir() {
        let (dir2, store2) = temp_store();
        for project in std::fs::read_dir(&extra)
            .expect("extra")
            .map(|e| e.expect("e").path())
        {
            if project.is_dir() {
                import(&store2, &[&project]);
            }
        }
        let out2 = dir2.path().join("out");
        export::export_tree(&store2, &out2, None).expect("export");
        assert_same_tree(&extra, &out2);
    }
}

/// A deterministic pseudo-random cut point for a file.
fn cut_point(name: &str, lines: usize) -> usize {
    let seed = name.bytes().fold(1469598103934665603u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(1099511628211)
    });
    (seed % lines.max(1) as u64) as usize
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn a_cut_file_then_the_whole_file_equals_one_import() {
    let Some(shared) = shared_dir("the incremental import test") else {
        return;
    };
    slow(
        "roundtrip::a_cut_file_then_the_whole_file_equals_one_import",
        "imports every corpus file twice into fresh databases, cut and whole",
    );
    for file in corpus_files(&shared) {
        let bytes = std::fs::read(&file).expect("read");
        let name = file
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let ends: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        let at_line = ends.get(cut_point(&name, ends.len())).copied().unwrap_or(0);
        // Once at a line boundary, once in the middle of the next line (a torn write).
        let mid_line = (at_line + 7).min(bytes.len());
        for cut in [at_line, mid_line] {
            let (dir, store) = temp_store();
            let project = dir.path().join("proj");
            std::fs::create_dir_all(&project).expect("mkdir");
            // Named as Claude Code names a transcript (by a session id): a file named
            // otherwise takes the session its records carry, which a cut file may not hold
            // yet (tests/it/import_edge.rs).
            let path = project.join("0c0ffee0-0000-4000-8000-000000000001.jsonl");
            std::fs::write(&path, &bytes[..cut]).expect("write cut");
            import(&store, &[&path]);
            std::fs::write(&path, &bytes).expect("write whole");
            let report = import(&store, &[&path]);
            assert_eq!(report.files_rewritten, 0, "{name}: growth is not a rewrite");

            let (_dir2, whole) = temp_store();
            import(&whole, &[&path]);
            assert!(
                dump_rows(&store) == dump_rows(&whole),
                "{name} cut at byte {cut}: rows differ from a single import"
            );
            assert_eq!(
                count(&store, "metadata"),
                count(&whole, "metadata"),
                "{name}"
            );
            assert_eq!(
                count(&store, "file_history"),
                count(&whole, "file_history"),
                "{name}"
            );
        }
    }
}
