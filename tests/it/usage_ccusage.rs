//! `stats` against ccusage 20.0.24 on the same trees (docs/usage.md): `daily`, `monthly`
//! and `session` token counts per period and model equal, costs within 1% where both price
//! the model alike, and each deliberate difference shown on a tree of its own.
//!
//! ccusage is `$CCUSAGE`, else `target/ccusage/node_modules/.bin/ccusage` (`.ci/run`
//! installs it with npm). Without it the tests are skipped with a message, and fail under
//! `CI`.

use crate::support::*;
use crate::usage::assistant;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn ccusage(what: &str) -> Option<PathBuf> {
    let path = std::env::var_os("CCUSAGE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ccusage/node_modules/.bin/ccusage")
        });
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{what}: no ccusage at {} (npm install --prefix target/ccusage ccusage@20.0.24 \
         @ccusage/ccusage-linux-x64@20.0.24, or set CCUSAGE)",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why} (CI is set)");
    }
    eprintln!("skipping {why}");
    None
}

/// `ccusage REPORT --json --offline --breakdown` on the tree under `config`.
fn theirs(bin: &Path, config: &Path, report: &str) -> Value {
    let out = Command::new(bin)
        .args([
            report,
            "--json",
            "--offline",
            "--breakdown",
            "--mode",
            "calculate",
        ])
        .env("TZ", "UTC")
        .env("CLAUDE_CONFIG_DIR", config)
        .output()
        .expect("run ccusage");
    assert!(
        out.status.success(),
        "ccusage {report}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("ccusage JSON");
    v[report].clone()
}

fn ours(db: &Path, report: &str) -> Value {
    let out = sessiondb_ok(
        db,
        &[
            "stats",
            report,
            "--json",
            "--breakdown",
            "--timezone",
            "UTC",
            "--mode",
            "calculate",
        ],
    );
    serde_json::from_slice(&out).expect("stats JSON")
}

/// (period, model) → ([input, output, cache write, cache read], cost).
type Cells = BTreeMap<(String, String), ([i64; 4], f64)>;

fn their_cells(rows: &Value) -> Cells {
    let mut out = Cells::new();
    for r in rows.as_array().expect("rows") {
        for m in r["modelBreakdowns"].as_array().expect("models") {
            let n = |k: &str| m[k].as_i64().expect("a count");
            out.insert(
                (
                    r["period"].as_str().expect("period").to_owned(),
                    m["modelName"].as_str().expect("model").to_owned(),
                ),
                (
                    [
                        n("inputTokens"),
                        n("outputTokens"),
                        n("cacheCreationTokens"),
                        n("cacheReadTokens"),
                    ],
                    m["cost"].as_f64().expect("cost"),
                ),
            );
        }
    }
    out
}

fn our_cells(rows: &Value) -> Cells {
    let mut out = Cells::new();
    for r in rows.as_array().expect("rows") {
        for m in r["models"].as_array().expect("models") {
            let n = |k: &str| m[k].as_i64().expect("a count");
            out.insert(
                (
                    r["period"].as_str().expect("period").to_owned(),
                    m["model"].as_str().expect("model").to_owned(),
                ),
                (
                    [
                        n("input_tokens"),
                        n("output_tokens"),
                        n("cache_creation_tokens"),
                        n("cache_read_tokens"),
                    ],
                    m["cost_usd"].as_f64().expect("cost"),
                ),
            );
        }
    }
    out
}

/// Lays out the corpus as a projects tree: each file under a project per source
/// repository, sub-agent files in a session folder of their repository. Left out:
/// `ccbackup`, whose responses have no requestId (difference 2, tested below).
fn corpus_tree(shared: &Path, root: &Path) {
    for entry in std::fs::read_dir(shared).expect("corpus") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let Some(stem) = name.strip_suffix(".jsonl") else {
            continue;
        };
        let Some((repo, file)) = stem.split_once("__") else {
            continue;
        };
        if repo == "ccbackup" {
            continue;
        }
        let project = root.join(format!("projects/-corpus-{repo}"));
        let to = if file.starts_with("agent-") {
            project.join(format!("parent-{repo}/subagents/{file}.jsonl"))
        } else {
            project.join(format!("{file}.jsonl"))
        };
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&path, &to).expect("copy");
    }
}

/// (period key, model) groups whose cost differs on purpose: a request over a model's
/// long-context threshold (difference 1) or a web search (difference 3).
fn priced_apart(db: &Path, period: &str) -> BTreeSet<(String, String)> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let sql = format!(
        "SELECT DISTINCT {period}, model FROM usage
         WHERE (model LIKE 'claude-sonnet-4%' AND model NOT LIKE 'claude-sonnet-4-6%'
                AND input_tokens + cache_creation_tokens + cache_read_tokens > 200000)
            OR web_search_requests > 0"
    );
    let mut stmt = conn.prepare(&sql).expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })
        .expect("query");
    rows.collect::<rusqlite::Result<_>>().expect("rows")
}

/// Sessions holding a sub-agent response recorded in a progress record (difference 4).
fn progress_sessions(db: &Path) -> BTreeSet<String> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT s.session_id FROM usage_responses u JOIN rows r ON r.id = u.row_id
             JOIN sessions s ON s.id = u.session_id WHERE r.type = 'progress'",
        )
        .expect("prepare");
    let rows = stmt.query_map([], |r| r.get(0)).expect("query");
    rows.collect::<rusqlite::Result<_>>().expect("rows")
}

fn compare(report: &str, ours: &Cells, theirs: &Cells, apart: &BTreeSet<(String, String)>) {
    let keys: BTreeSet<_> = ours.keys().chain(theirs.keys()).collect();
    let mut costs = 0;
    for key in keys {
        let (Some(a), Some(b)) = (ours.get(key), theirs.get(key)) else {
            panic!(
                "{report} {key:?}: only one side has it: ours {:?}, ccusage {:?}",
                ours.get(key),
                theirs.get(key)
            );
        };
        assert_eq!(
            a.0, b.0,
            "{report} {key:?}: tokens [input, output, cache write, cache read]"
        );
        if apart.contains(key) || b.1 == 0.0 || a.1 == 0.0 {
            continue;
        }
        costs += 1;
        assert!(
            (a.1 - b.1).abs() <= 0.01 * b.1,
            "{report} {key:?}: cost ${} here, ${} in ccusage",
            a.1,
            b.1
        );
    }
    assert!(costs > 0, "{report}: some costs were compared");
}

/// Runs both on `config` (a folder holding `projects/`) and compares daily, monthly and
/// session.
fn agree_on(bin: &Path, config: &Path) {
    let db = config.join("sessions.db");
    sessiondb_ok(&db, &["import", &config.join("projects").to_string_lossy()]);
    let day = "substr(timestamp, 1, 10)";
    compare(
        "daily",
        &our_cells(&ours(&db, "daily")),
        &their_cells(&theirs(bin, config, "daily")),
        &priced_apart(&db, day),
    );
    let month = "substr(timestamp, 1, 7)";
    compare(
        "monthly",
        &our_cells(&ours(&db, "monthly")),
        &their_cells(&theirs(bin, config, "monthly")),
        &priced_apart(&db, month),
    );
    let skip = progress_sessions(&db);
    let keep = |cells: Cells| -> Cells {
        cells
            .into_iter()
            .filter(|((s, _), _)| !skip.contains(s))
            .collect()
    };
    let ours_s = keep(our_cells(&ours(&db, "session")));
    let theirs_s = keep(their_cells(&theirs(bin, config, "session")));
    compare("session", &ours_s, &theirs_s, &priced_apart(&db, "session"));
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn the_corpus_counts_as_ccusage_counts_it() {
    let (Some(bin), Some(shared)) = (
        ccusage("the ccusage comparison"),
        shared_dir("the ccusage comparison"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    corpus_tree(&shared.join("corpus/claude-code"), dir.path());
    agree_on(&bin, dir.path());
}

/// A generated tree: sessions over several days and models, streamed parts, a sub-agent
/// transcript and a resumed copy.
#[test]
fn a_generated_tree_counts_as_ccusage_counts_it() {
    let Some(bin) = ccusage("the ccusage comparison") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let models = [
        "claude-opus-4-5-20251101",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5-20251001",
        "claude-opus-4-1-20250805",
    ];
    let mut n = 0;
    for s in 0..12i64 {
        let session = format!("bbbbbbbb-0000-4000-8000-{s:012}");
        let project = dir.path().join(format!("projects/-gen-p{}", s % 3));
        let mut lines = Vec::new();
        for k in 0..20i64 {
            n += 1;
            let at = format!(
                "2026-0{}-{:02}T{:02}:{:02}:00.000Z",
                1 + s % 3,
                1 + (s * 7 + k) % 28,
                (k * 5) % 24,
                k % 60
            );
            let (id, req) = (format!("msg_g{n}"), format!("req_g{n}"));
            let one = |out: i64| {
                let mut v: Value =
                    serde_json::from_str(&assistant(&session, &id, Some(&req), &at, 3 + k, out))
                        .expect("JSON");
                v["message"]["model"] = json!(models[((s + k) % models.len() as i64) as usize]);
                v["message"]["usage"]["cache_creation_input_tokens"] = json!(1000 * k);
                v["message"]["usage"]["cache_read_input_tokens"] = json!(5000 * s);
                if k % 4 == 0 {
                    v["message"]["usage"]["cache_creation"] = json!({"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1000 * k});
                }
                v.to_string()
            };
            // Streamed: a first part with a partial count, then the final one.
            if k % 3 == 0 {
                lines.push(one(2));
            }
            lines.push(one(50 * k + 1));
        }
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::write(
            project.join(format!("{session}.jsonl")),
            lines.join("\n") + "\n",
        )
        .expect("write");
        if s == 4 {
            let agent = project.join(&session).join("subagents/agent-ab12.jsonl");
            std::fs::create_dir_all(agent.parent().expect("parent")).expect("mkdir");
            let own = assistant(
                &session,
                "msg_sub",
                Some("req_sub"),
                "2026-02-03T04:05:06.000Z",
                9,
                99,
            );
            std::fs::write(&agent, format!("{}\n{own}\n", lines[0])).expect("write");
        }
    }
    agree_on(&bin, dir.path());
}

/// One tree per deliberate difference: what ccusage answers, what sessiondb answers.
#[test]
fn each_difference_from_ccusage_is_the_one_documented() {
    let Some(bin) = ccusage("the ccusage differences") else {
        return;
    };
    let one = |lines: Vec<String>| -> (Value, Value) {
        let dir = tempfile::tempdir().expect("tmp");
        let project = dir.path().join("projects/-diff");
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::write(
            project.join("cccccccc-0000-4000-8000-000000000001.jsonl"),
            lines.join("\n") + "\n",
        )
        .expect("write");
        let db = dir.path().join("sessions.db");
        sessiondb_ok(&db, &["import", &project.to_string_lossy()]);
        let a = ours(&db, "daily")[0]["models"][0].clone();
        let b = theirs(&bin, dir.path(), "daily")[0]["modelBreakdowns"][0].clone();
        (a, b)
    };
    let s = "cccccccc-0000-4000-8000-000000000001";
    let with = |line: String, f: &dyn Fn(&mut Value)| {
        let mut v: Value = serde_json::from_str(&line).expect("JSON");
        f(&mut v);
        v.to_string()
    };
    // 1. Long context: a Sonnet 4 request of 300,000 input tokens.
    let (a, b) = one(vec![with(
        assistant(s, "m1", Some("r1"), "2026-01-01T00:00:00.000Z", 300_000, 0),
        &|v| {
            v["message"]["model"] = json!("claude-sonnet-4-20250514");
        },
    )]);
    assert!(
        (a["cost_usd"].as_f64().expect("cost") - 1.8).abs() < 1e-9,
        "whole request at $6/M: {a}"
    );
    assert!(
        (b["cost"].as_f64().expect("cost") - 1.2).abs() < 1e-9,
        "ccusage: 200k at $3/M, 100k at $6/M: {b}"
    );
    // 2. No requestId: two streamed parts written at different times.
    let (a, b) = one(vec![
        assistant(s, "m1", None, "2026-01-01T00:00:00.000Z", 7888, 0),
        assistant(s, "m1", None, "2026-01-01T00:00:01.000Z", 231, 114),
    ]);
    assert_eq!(
        (a["input_tokens"].as_i64(), a["output_tokens"].as_i64()),
        (Some(231), Some(114)),
        "{a}"
    );
    assert_eq!(
        b["inputTokens"].as_i64(),
        Some(7888 + 231),
        "ccusage counts both parts: {b}"
    );
    // 3. Web search: 100 requests beside 1,000 input tokens of Opus 4.5 ($0.005).
    let (a, b) = one(vec![with(
        assistant(s, "m1", Some("r1"), "2026-01-01T00:00:00.000Z", 1000, 0),
        &|v| {
            v["message"]["usage"]["server_tool_use"] = json!({"web_search_requests": 100});
        },
    )]);
    assert!(
        (a["cost_usd"].as_f64().expect("cost") - 1.005).abs() < 1e-9,
        "{a}"
    );
    let theirs = b["cost"].as_f64().expect("cost");
    assert!(
        (theirs - 0.005).abs() < 1e-9,
        "ccusage leaves searches out: {b}"
    );
}
