//! Issue 13 items 8, 13 and 14 (import): symbolic links, files too large to store, and
//! files of millions of blank lines.

use crate::names::USER;
use crate::support::*;
use sessiondb::import::{import_paths_with, ImportLimits, MAX_VALUE_BYTES};
use sessiondb::model::NoProgress;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

fn write_session(project: &Path, id: &str) {
    std::fs::create_dir_all(project).expect("mkdir");
    std::fs::write(project.join(format!("{id}.jsonl")), format!("{USER}\n")).expect("write");
}

fn session_ids(store: &sessiondb::Store) -> Vec<String> {
    store
        .reader()
        .expect("reader")
        .prepare("SELECT session_id FROM sessions ORDER BY session_id")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn links_inside_a_tree_are_skipped_and_counted_links_named_are_followed() {
    let dir = tempfile::tempdir().expect("tmp");
    let elsewhere = dir.path().join("elsewhere");
    write_session(&elsewhere.join("-outside"), "outside");
    let root = dir.path().join("projects");
    write_session(&root.join("-inside"), "inside");
    // A link at the top of the tree, one in a project folder, one in a session folder.
    symlink(elsewhere.join("-outside"), root.join("-linked")).expect("link");
    symlink(
        elsewhere.join("-outside/outside.jsonl"),
        root.join("-inside/linked-file.jsonl"),
    )
    .expect("link");
    let subagents = root.join("-inside/inside/subagents");
    std::fs::create_dir_all(&subagents).expect("mkdir");
    symlink(
        elsewhere.join("-outside/outside.jsonl"),
        subagents.join("agent-x.jsonl"),
    )
    .expect("link");

    let (_db, store) = temp_store();
    let report = import(&store, &[&root]);
    assert_eq!(session_ids(&store), ["inside"]);
    assert_eq!(report.symlinks_skipped, 3);
    assert_eq!(count(&store, "transcripts"), 1);

    // Named on the command line, a link is followed: to a tree and to a file.
    let (_db, store) = temp_store();
    let link = dir.path().join("link-to-tree");
    symlink(&elsewhere, &link).expect("link");
    let report = import(&store, &[&link]);
    assert_eq!(session_ids(&store), ["outside"]);
    assert_eq!(report.symlinks_skipped, 0);
    let (_db, store) = temp_store();
    import(&store, &[&root.join("-inside/linked-file.jsonl")]);
    assert_eq!(session_ids(&store), ["linked-file"]);

    // The CLI says how many it skipped.
    let db = dir.path().join("s.db");
    let out = sessiondb(&db, &["import", &root.to_string_lossy()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3 symbolic links"), "{text}");
}

#[test]
fn a_file_with_a_line_too_large_is_named_and_the_rest_imported() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-p");
    write_session(&project, "small");
    let big_line = format!(
        r#"{{"type":"user","uuid":"u2","message":{{"content":"{}"}}}}"#,
        "x".repeat(300)
    );
    std::fs::write(
        project.join("big.jsonl"),
        format!("{USER}\n{USER}\n{big_line}\n"),
    )
    .expect("write");
    let results = project.join("small/tool-results");
    std::fs::create_dir_all(&results).expect("mkdir");
    std::fs::write(results.join("big.txt"), "y".repeat(500)).expect("write");
    std::fs::write(results.join("ok.txt"), "fine").expect("write");

    let (_db, store) = temp_store();
    let limits = ImportLimits {
        max_value_bytes: 200,
        ..ImportLimits::default()
    };
    let report = import_paths_with(&store, std::slice::from_ref(&project), &NoProgress, &limits)
        .expect("import");
    assert_eq!(report.files_failed, 2, "{:?}", report.errors);
    assert_eq!(report.files_too_big, 2);
    let big = report
        .errors
        .iter()
        .find(|e| e.contains("big.jsonl"))
        .expect("named");
    assert!(big.contains("line 3"), "{big}");
    assert!(report.errors.iter().any(|e| e.contains("big.txt")));
    assert_eq!(session_ids(&store), ["small"]);
    assert_eq!(count(&store, "session_files"), 1);
}

#[test]
fn a_session_file_over_the_real_limit_is_refused_without_being_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-p");
    write_session(&project, "s");
    let results = project.join("s/tool-results");
    std::fs::create_dir_all(&results).expect("mkdir");
    // Sparse: over 1 GB long, no disk blocks.
    let file = std::fs::File::create(results.join("huge.txt")).expect("create");
    file.set_len(MAX_VALUE_BYTES + 1).expect("set_len");
    drop(file);
    let db = dir.path().join("s.db");
    let out = sessiondb(&db, &["import", &project.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("huge.txt") && err.contains("more than"),
        "{err}"
    );
    let store = sessiondb::Store::open(&db).expect("open");
    assert_eq!(session_ids(&store), ["s"]);
    assert_eq!(count(&store, "rows"), 1);
}

#[test]
fn runs_of_blank_lines_are_few_rows_and_export_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let mut bytes = format!("{USER}\n").into_bytes();
    bytes.extend(vec![b'\n'; 3_000_000]);
    bytes.extend_from_slice(b"  \r\n\nnot json\n");
    bytes.extend_from_slice(format!("{USER}\n\n\n").as_bytes());
    let path: PathBuf = project.join("s.jsonl");
    std::fs::write(&path, &bytes).expect("write");
    let (_db, store) = temp_store();
    let report = import(&store, &[&project]);
    // 3,000,002 blank lines in at most 1 MiB per row; "not json" is line 3,000,004.
    assert!(count(&store, "rows") < 10, "{}", count(&store, "rows"));
    assert_eq!(report.malformed[0].line, 3_000_004);
    let out = dir.path().join("out");
    sessiondb::export::export_tree(&store, &out, None).expect("export");
    assert_eq!(std::fs::read(out.join("-p/s.jsonl")).expect("read"), bytes);
    // Growing the file after a blank run appends, and the export still matches.
    bytes.extend_from_slice(b"\n\n");
    std::fs::write(&path, &bytes).expect("write");
    let report = import(&store, &[&project]);
    assert_eq!(report.files_rewritten, 0);
    let out = dir.path().join("out2");
    sessiondb::export::export_tree(&store, &out, None).expect("export");
    assert_eq!(std::fs::read(out.join("-p/s.jsonl")).expect("read"), bytes);
}

#[test]
fn a_line_over_8_mib_indexes_only_a_prefix() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("-p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let filler = "filler ".repeat(9 * 1024 * 1024 / 7);
    let line = serde_json::json!({
        "type": "user", "uuid": "u1", "sessionId": "s",
        "message": {"role": "user", "content": format!("alphaword {filler} omegaword")},
    })
    .to_string();
    assert!(line.len() > sessiondb::search::MAX_PARSED_LINE);
    std::fs::write(project.join("s.jsonl"), format!("{line}\n{USER}\n")).expect("write");
    let (_db, store) = temp_store();
    import(&store, &[&project]);
    let indexed: i64 = store
        .reader()
        .expect("reader")
        .query_row(
            "SELECT length(CAST(body AS BLOB)) FROM search_source WHERE id = (SELECT id FROM rows WHERE uuid = 'u1')",
            [],
            |r| r.get(0),
        )
        .expect("indexed text");
    assert_eq!(indexed as usize, sessiondb::search::INDEXED_PREFIX);
    let find = |word: &str| {
        sessiondb::search::catch_up(&store).expect("catch up");
        let q = sessiondb::search::SearchQuery {
            text: word.into(),
            ..Default::default()
        };
        sessiondb::search::search(&store.reader().expect("reader"), &q)
            .expect("search")
            .len()
    };
    assert_eq!(find("alphaword"), 1);
    assert_eq!(find("omegaword"), 0, "past the indexed prefix");
    assert_eq!(find("hi"), 1, "other lines are indexed as before");
}
