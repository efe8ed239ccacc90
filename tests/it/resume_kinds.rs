//! The table of kinds the CLI's resume path treats specially (`tests/fixtures/resume-kinds.tsv`,
//! issue 25): every row that says sessiondb agrees names a case that holds the kind, and
//! the case's expected view is checked by the oracle tests (`resume_attachments`,
//! `resume_real`, `resume_oracle`); the attachment rows match the renderer table.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sessiondb::resume::attachments::{lookup, RENDERERS};
use sessiondb::resume::legacy::UNSENT_BLOCK_TYPES;

use crate::support::shared_dir;

struct Row {
    line: usize,
    family: String,
    kind: String,
    sessiondb: String,
    status: String,
    test: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn rows() -> Vec<Row> {
    let path = root().join("tests/fixtures/resume-kinds.tsv");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.starts_with('#') || l.starts_with("family\t") || l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(f.len(), 6, "{}:{}: want 6 columns", path.display(), i + 1);
        out.push(Row {
            line: i + 1,
            family: f[0].into(),
            kind: f[1].into(),
            sessiondb: f[3].into(),
            status: f[4].into(),
            test: f[5].into(),
        });
    }
    out
}

/// The case folder a `test` cell names, or `None` when it lives in `../shared`.
fn case_dir(test: &str, shared: Option<&Path>) -> Option<PathBuf> {
    if let Some(c) = test.strip_prefix("real:") {
        return shared.map(|s| s.join("oracle/real/cases").join(c));
    }
    if let Some(c) = test.strip_prefix("cases:") {
        return shared.map(|s| s.join("oracle/cases").join(c));
    }
    Some(root().join("tests/fixtures/oracle-made").join(test))
}

/// Whether a record holds the kind of a row.
fn holds(r: &Value, family: &str, kind: &str) -> bool {
    let typ = r.get("type").and_then(Value::as_str).unwrap_or("");
    match family {
        "attachment" => {
            typ == "attachment"
                && r.pointer("/attachment/type").and_then(Value::as_str) == Some(kind)
        }
        "block" => r
            .pointer("/message/content")
            .is_some_and(|c| holds_block(c, kind)),
        "record" => match kind.split_once(':') {
            Some((t, sub)) => typ == t && r.get("subtype").and_then(Value::as_str) == Some(sub),
            None => typ == kind,
        },
        other => panic!("unknown family {other}"),
    }
}

/// A content block of `kind` in `content`, at any depth (tool results hold blocks too).
fn holds_block(content: &Value, kind: &str) -> bool {
    content.as_array().is_some_and(|bs| {
        bs.iter().any(|b| {
            b.get("type").and_then(Value::as_str) == Some(kind)
                || b.get("content").is_some_and(|c| holds_block(c, kind))
        })
    })
}

fn case_holds(dir: &Path, family: &str, kind: &str) -> bool {
    let mut stack = vec![dir.join("projects")];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let text = fs::read_to_string(&p).unwrap_or_default();
                if text
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .any(|r| holds(&r, family, kind))
                {
                    return true;
                }
            }
        }
    }
    false
}

/// Checks the rows whose case is reachable (`shared` given: all of them).
fn check(shared: Option<&Path>) -> usize {
    let mut failures = Vec::new();
    let mut checked = 0;
    for r in rows() {
        match r.status.as_str() {
            "agrees" => {
                let Some(dir) = case_dir(&r.test, shared) else {
                    continue;
                };
                checked += 1;
                if !dir.join("case.json").is_file() {
                    failures.push(format!(
                        "line {}: {} names no case ({})",
                        r.line, r.kind, r.test
                    ));
                } else if !dir.join("expected-api-view.json").is_file()
                    && !fs::read_to_string(dir.join("case.json"))
                        .unwrap_or_default()
                        .contains("\"expected_error\"")
                {
                    failures.push(format!(
                        "line {}: case {} has no expected view",
                        r.line, r.test
                    ));
                } else if !case_holds(&dir, &r.family, &r.kind) {
                    failures.push(format!(
                        "line {}: case {} holds no {} {}",
                        r.line, r.test, r.family, r.kind
                    ));
                }
            }
            "gap" => {
                if r.test != "-" {
                    failures.push(format!("line {}: a gap row names a test", r.line));
                }
            }
            s => failures.push(format!("line {}: unknown status {s}", r.line)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    checked
}

#[test]
fn kinds_table_matches_the_code() {
    let rows = rows();
    let mut failures = Vec::new();
    for e in RENDERERS {
        if !rows
            .iter()
            .any(|r| r.family == "attachment" && r.kind == e.kind)
        {
            failures.push(format!("renderer {} has no row", e.kind));
        }
    }
    for k in UNSENT_BLOCK_TYPES {
        if !rows
            .iter()
            .any(|r| r.family == "block" && r.kind == *k && r.status == "agrees")
        {
            failures.push(format!("unsent block {k} has no agreeing row"));
        }
    }
    for r in rows.iter().filter(|r| r.family == "attachment") {
        let sent = lookup(&r.kind).is_some();
        if sent == r.sessiondb.starts_with("not sent") {
            failures.push(format!(
                "line {}: {} says `{}` but the renderer table {}",
                r.line,
                r.kind,
                r.sessiondb,
                if sent { "has it" } else { "lacks it" }
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let gaps = rows.iter().filter(|r| r.status == "gap").count();
    eprintln!("resume-kinds.tsv: {} rows, {gaps} gaps", rows.len());
}

#[test]
fn kinds_table_made_cases_hold_their_kind() {
    assert!(check(None) >= 30);
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn kinds_table_pack_cases_hold_their_kind() {
    let Some(shared) = shared_dir("the kinds table's pack cases") else {
        return;
    };
    check(Some(&shared));
}
