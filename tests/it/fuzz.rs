//! The fuzz harness's seeds and every input it found failing (`tests/fixtures/fuzz/`), checked
//! with the harness's own properties (`tools/fuzz/check.rs`).

#[path = "../../tools/fuzz/check.rs"]
mod check;

use std::path::{Path, PathBuf};

/// Single-file inputs (`*.jsonl`) and saved trees (folders) under `dir`, which must exist
/// (a test over a folder that is not there would pass over nothing); a `README.md` is not
/// an input.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("a readable folder entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    out.sort();
    out
}

fn check_file(path: &Path) {
    let bytes = std::fs::read(path).expect("read input");
    check::check_lines(&bytes);
    check::check_resume_pure(&bytes);
    let mut tree = check::Tree::new();
    tree.insert(
        "-fuzz-regression/00000000-0000-4000-8000-000000000001.jsonl".into(),
        bytes,
    );
    let dir = tempfile::tempdir().expect("temp dir");
    check::check_store(
        dir.path(),
        &tree,
        Some(Path::new(env!("CARGO_BIN_EXE_sessiondb"))),
    );
}

#[test]
fn fuzz_seeds_pass_every_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds = inputs(&root.join("tools/fuzz/seeds"));
    assert!(seeds.len() >= 4, "the seed corpus is missing");
    for path in seeds {
        check_file(&path);
    }
}

#[test]
fn inputs_the_fuzzer_found_failing_pass_every_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in inputs(&root.join("tests/fixtures/fuzz")) {
        if path.is_dir() {
            let tree = check::read_tree(&path);
            let dir = tempfile::tempdir().expect("temp dir");
            check::check_store(
                dir.path(),
                &tree,
                Some(Path::new(env!("CARGO_BIN_EXE_sessiondb"))),
            );
        } else {
            check_file(&path);
        }
    }
}

#[test]
fn the_json_checker_accepts_json_and_refuses_the_rest() {
    for good in [
        "null",
        " {\"a\":[1,-2.5e3,\"x\\u00e9\\n\",true,{}]} ",
        "[[[[[[[[[[]]]]]]]]]]",
        "\"\\ud83d\"",
        "0",
    ] {
        assert!(check::is_valid_json(good.as_bytes()), "{good}");
    }
    for bad in [
        "",
        "{",
        "[1,]",
        "{\"a\"}",
        "{\"a\":1,}",
        "01",
        "\"\n\"",
        "nul",
        "[1] 2",
        "\"\\x\"",
        "{1:2}",
        "-",
        "1.",
        "[\"a\" \"b\"]",
    ] {
        assert!(!check::is_valid_json(bad.as_bytes()), "{bad}");
    }
}
