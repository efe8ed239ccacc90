//! The properties the fuzz harness checks on every input. The regression tests
//! (`tests/it/fuzz.rs`) include this file too, so a saved input is checked exactly as the
//! harness checked it when it was found.
//!
//! Each check panics when a property does not hold; the harness catches the panic and saves
//! the input.

use sessiondb::jsonl::{parse_record, search_text, split_lines, Envelope};
use sessiondb::model::NoProgress;
use sessiondb::resume::{load_conversation, normalize, ApiOptions, ResumeOptions};
use sessiondb::{export, import, query, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The line reader, the projections and the search text on one file's bytes: no panic, and
/// the lines put back together are the input.
pub fn check_lines(buf: &[u8]) {
    let mut joined = Vec::with_capacity(buf.len());
    for line in split_lines(buf) {
        joined.extend_from_slice(line.bytes);
        if line.terminated {
            joined.push(b'\n');
        }
        let _ = Envelope::parse(line.bytes);
        let _ = search_text(line.bytes);
        let _ = parse_record(line.bytes);
    }
    assert!(joined == buf, "split_lines does not give the input back");
}

/// The pure resume over one file's records, print mode and interactive: no panic, and the
/// API view serializes to valid JSON.
pub fn check_resume_pure(buf: &[u8]) {
    let records: Vec<_> = split_lines(buf)
        .filter_map(|l| parse_record(l.bytes))
        .collect();
    for interactive in [false, true] {
        let opts = ApiOptions {
            interactive,
            ..ApiOptions::default()
        };
        if let Ok(conversation) = load_conversation(&records, &opts) {
            let view = normalize(&conversation.messages);
            let text = serde_json::to_vec(&view).expect("a view serializes");
            assert!(is_valid_json(&text), "the API view is not valid JSON");
        }
    }
}

/// A projects tree: relative path → bytes.
pub type Tree = BTreeMap<String, Vec<u8>>;

/// Import → export → resume through a real store in `dir`: the import does not fail on
/// transcript contents, the exported tree equals the input byte for byte, and every session
/// resumes (or is refused with an error, never a panic) to an API view that is valid JSON.
/// With `bin`, the same resume also runs as a whole process (`resume --api`), which must
/// not panic and must print valid JSON when it succeeds.
pub fn check_store(dir: &Path, tree: &Tree, bin: Option<&Path>) {
    let src = dir.join("projects");
    for (rel, bytes) in tree {
        let path = src.join(rel);
        std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write input");
    }
    let db = dir.join("fuzz.db");
    let store = Store::open(&db).expect("open store");
    let report =
        import::import_paths(&store, std::slice::from_ref(&src), &NoProgress).expect("import");
    assert!(
        report.errors.is_empty() && report.files_failed == 0,
        "import failed on transcript contents: {:?}",
        report.errors
    );
    let out = dir.join("export");
    export::export_tree(&store, &out, None).expect("export");
    let exported = read_tree(&out);
    assert!(
        &exported == tree,
        "export differs from the input: {:?} vs {:?}",
        exported.keys().collect::<Vec<_>>(),
        tree.keys().collect::<Vec<_>>()
    );
    for rel in tree.keys().filter(|r| r.matches('/').count() == 1) {
        let (project, file) = rel.split_once('/').expect("project/file");
        let session = file.trim_end_matches(".jsonl");
        let arg = format!("{project}/{session}");
        let found = query::resolve_session(&store.reader().expect("reader"), &arg);
        let Ok(found) = found else { continue };
        if let Ok(resumed) = store.resume(&found, &ResumeOptions::default()) {
            let text = serde_json::to_vec(&resumed.into_api_view()).expect("serialize");
            assert!(
                is_valid_json(&text),
                "resume --api of {arg} is not valid JSON"
            );
        }
        if let Some(bin) = bin {
            let output = Command::new(bin)
                .arg("--db")
                .arg(&db)
                .args(["resume", &arg, "--api"])
                .output()
                .expect("run the binary");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                !stderr.contains("panicked") && output.status.code() != Some(101),
                "resume --api of {arg} panicked: {stderr}"
            );
            if output.status.success() {
                assert!(
                    is_valid_json(&output.stdout),
                    "resume --api of {arg} printed invalid JSON"
                );
            }
        }
    }
}

/// Every file under `root` by relative path (`/`-separated).
pub fn read_tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path: PathBuf = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                let rel = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.insert(rel, std::fs::read(&path).expect("read exported file"));
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

/// Whether `bytes` are one JSON value (RFC 8259), surrounded by optional whitespace. An
/// iterative checker: the views under test may nest deeper than a recursive parser allows.
pub fn is_valid_json(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let b = text.as_bytes();
    let mut i = 0;
    // Open containers: b'{' or b'['.
    let mut stack: Vec<u8> = Vec::new();
    let ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    loop {
        // Expect a value.
        ws(&mut i);
        if i >= b.len() {
            return false;
        }
        match b[i] {
            b'{' | b'[' => {
                let open = b[i];
                i += 1;
                ws(&mut i);
                let close = if open == b'{' { b'}' } else { b']' };
                if i < b.len() && b[i] == close {
                    i += 1;
                } else {
                    stack.push(open);
                    if open == b'{' && !key(b, &mut i, &ws) {
                        return false;
                    }
                    continue;
                }
            }
            b'"' => {
                if !string(b, &mut i) {
                    return false;
                }
            }
            b't' if b[i..].starts_with(b"true") => i += 4,
            b'f' if b[i..].starts_with(b"false") => i += 5,
            b'n' if b[i..].starts_with(b"null") => i += 4,
            b'-' | b'0'..=b'9' => {
                if !number(b, &mut i) {
                    return false;
                }
            }
            _ => return false,
        }
        // After a value: a separator, a close, or the end.
        loop {
            ws(&mut i);
            let Some(&open) = stack.last() else {
                return i == b.len();
            };
            let close = if open == b'{' { b'}' } else { b']' };
            match b.get(i) {
                Some(&c) if c == close => {
                    stack.pop();
                    i += 1;
                }
                Some(b',') => {
                    i += 1;
                    if open == b'{' {
                        ws(&mut i);
                        if !key(b, &mut i, &ws) {
                            return false;
                        }
                    }
                    break;
                }
                _ => return false,
            }
        }
    }
}

/// A member's key and its colon.
fn key(b: &[u8], i: &mut usize, ws: &dyn Fn(&mut usize)) -> bool {
    if b.get(*i) != Some(&b'"') || !string(b, i) {
        return false;
    }
    ws(i);
    if b.get(*i) != Some(&b':') {
        return false;
    }
    *i += 1;
    true
}

/// A string starting at `b[*i] == '"'`; control characters must be escaped.
fn string(b: &[u8], i: &mut usize) -> bool {
    *i += 1;
    while *i < b.len() {
        match b[*i] {
            b'"' => {
                *i += 1;
                return true;
            }
            b'\\' => match b.get(*i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => *i += 2,
                Some(b'u') => {
                    let hex = b.get(*i + 2..*i + 6);
                    if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                        return false;
                    }
                    *i += 6;
                }
                _ => return false,
            },
            c if c < 0x20 => return false,
            _ => *i += 1,
        }
    }
    false
}

/// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number(b: &[u8], i: &mut usize) -> bool {
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if b.get(*i) == Some(&b'-') {
        *i += 1;
    }
    match b.get(*i) {
        Some(b'0') => *i += 1,
        Some(b'1'..=b'9') => {
            digits(i);
        }
        _ => return false,
    }
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        if !digits(i) {
            return false;
        }
    }
    if matches!(b.get(*i), Some(b'e' | b'E')) {
        *i += 1;
        if matches!(b.get(*i), Some(b'+' | b'-')) {
            *i += 1;
        }
        if !digits(i) {
            return false;
        }
    }
    true
}
