//! The resume oracle: every case of `../shared/oracle/cases/*/` must give its
//! `expected-api-view.json`, every computed view must pass the API validator,
//! and so must the API view of every real-world session of
//! `../shared/corpus/claude-code/`.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sessiondb::resume::{api_view, load_conversation, pick_leaf, validate, ApiOptions};

/// JSONL as the CLI reads it: trim lines, strip a BOM, skip empty and
/// malformed lines and non-objects.
fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split('\n')
        .map(|l| l.trim_start_matches('\u{feff}').trim())
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// First difference between two JSON values (key order ignored), as
/// `(path, got, want)`.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<(String, String, String)> {
    let short = |v: &Value| {
        let s = v.to_string();
        s.chars().take(300).collect::<String>()
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => {
                        if let Some(d) = first_difference(u, v, &p) {
                            return Some(d);
                        }
                    }
                    (u, v) => {
                        let m = Value::String("<missing>".into());
                        return Some((p, short(u.unwrap_or(&m)), short(v.unwrap_or(&m))));
                    }
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                if let Some(d) = first_difference(u, v, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (x.len() != y.len()).then(|| {
                (
                    format!("{path}.length"),
                    x.len().to_string(),
                    y.len().to_string(),
                )
            })
        }
        _ => (a != b).then(|| (path.to_owned(), short(a), short(b))),
    }
}

struct Case {
    name: String,
    records: Vec<Value>,
    opts: ApiOptions,
    expected: Value,
}

fn load_cases(shared: &Path) -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(shared.join("oracle/cases"))
        .expect("read cases dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let cj = read_json(&dir.join("case.json"));
            let mode = cj["mode"].as_str().unwrap_or("");
            assert!(
                matches!(mode, "resume" | "continue" | "fork"),
                "{}: unknown mode {mode}",
                dir.display()
            );
            // continue: target_session_id is the session the CLI picked;
            // fork: the conversation of target_session_id.
            let target = cj["target_session_id"].as_str().expect("target_session_id");
            let pdir = cj["project_dir_name"].as_str().expect("project_dir_name");
            let file = dir
                .join("projects")
                .join(pdir)
                .join(format!("{target}.jsonl"));
            let opts = ApiOptions {
                interactive: cj["interactive"].as_bool().unwrap_or(false),
                at: cj["resume_session_at"].as_str().map(str::to_owned),
                resume_interrupted_turn: cj["env"]["CLAUDE_CODE_RESUME_INTERRUPTED_TURN"].as_str()
                    == Some("1"),
                leaf: None,
                model: cj["model"].as_str().map(sessiondb::resume::resolve_model),
                cli_version: cj["cli_version"]
                    .as_str()
                    .map(|v| v.parse().expect("case.json cli_version is X.Y.Z"))
                    .unwrap_or_default(),
            };
            Case {
                name: dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                records: read_jsonl(&file),
                opts,
                expected: read_json(&dir.join("expected-api-view.json")),
            }
        })
        .collect()
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn oracle_cases_match_expected_api_view() {
    let Some(shared) = crate::support::shared_dir("the resume oracle") else {
        return;
    };
    let cases = load_cases(&shared);
    assert!(!cases.is_empty(), "no oracle cases found");
    let mut failures = Vec::new();
    for c in &cases {
        match api_view(&c.records, &c.opts) {
            Err(e) => failures.push(format!("{}: error {e}", c.name)),
            Ok(view) => {
                let got = Value::Array(view.clone());
                if let Some((path, g, w)) = first_difference(&got, &c.expected, "$") {
                    failures.push(format!(
                        "{}: DIFF at {path}\n   got : {g}\n   want: {w}",
                        c.name
                    ));
                }
                let v = validate(&view);
                if !v.is_empty() {
                    failures.push(format!("{}: invalid view: {:?}", c.name, v));
                }
            }
        }
    }
    eprintln!(
        "oracle: {}/{} cases pass",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// R16: the repairs written back to the transcript make a later resume add
/// nothing and send the same view.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn oracle_repairs_are_idempotent_when_written_back() {
    let Some(shared) = crate::support::shared_dir("the resume oracle") else {
        return;
    };
    let mut failures = Vec::new();
    for c in load_cases(&shared) {
        if c.opts.resume_interrupted_turn || c.opts.at.is_some() {
            continue; // R19 writes no repair; R18 branches off a new prompt
        }
        let conv = load_conversation(&c.records, &c.opts).expect("load");
        let added: HashSet<&str> = conv
            .repairs
            .iter()
            .filter(|r| r.kind.adds_record())
            .filter_map(|r| r.uuid.as_deref())
            .collect();
        if added.is_empty() {
            continue;
        }
        let mut records = c.records.clone();
        records.extend(
            conv.messages
                .iter()
                .filter(|m| m["uuid"].as_str().is_some_and(|u| added.contains(u)))
                .cloned(),
        );
        let again = load_conversation(&records, &c.opts).expect("reload");
        if again.repairs.iter().any(|r| r.kind.adds_record()) {
            failures.push(format!("{}: new repairs {:?}", c.name, again.repairs));
        }
        let v1 = api_view(&c.records, &c.opts).expect("view");
        let v2 = api_view(&records, &c.opts).expect("view");
        if v1 != v2 {
            failures.push(format!("{}: view changed after write-back", c.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The SQL caller gathers only the chain, the same-message.id assistants and
/// their tool results (plus content-replacement records) and passes the leaf
/// explicitly: same answer as from the whole file.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn oracle_subset_with_explicit_leaf_gives_same_view() {
    let Some(shared) = crate::support::shared_dir("the resume oracle") else {
        return;
    };
    let mut failures = Vec::new();
    for c in load_cases(&shared) {
        let full = api_view(&c.records, &c.opts).expect("view");
        let leaf = c.opts.at.clone().or_else(|| pick_leaf(&c.records));
        let Some(leaf) = leaf else { continue };
        let chain = sessiondb::resume::build_chain_from(&c.records, &leaf, false).expect("chain");
        let mut keep: HashSet<String> = chain
            .iter()
            .filter_map(|r| r["uuid"].as_str().map(str::to_owned))
            .collect();
        let mids: HashSet<&str> = chain
            .iter()
            .filter(|r| r["type"] == "assistant")
            .filter_map(|r| r["message"]["id"].as_str())
            .collect();
        let assts: HashSet<String> = c
            .records
            .iter()
            .filter(|r| {
                r["type"] == "assistant"
                    && r["message"]["id"]
                        .as_str()
                        .is_some_and(|m| mids.contains(m))
            })
            .filter_map(|r| r["uuid"].as_str().map(str::to_owned))
            .collect();
        keep.extend(assts.iter().cloned());
        for r in &c.records {
            let hit = |k: &str| r[k].as_str().is_some_and(|p| assts.contains(p));
            if r["type"] == "user" && (hit("parentUuid") || hit("sourceToolAssistantUUID")) {
                if let Some(u) = r["uuid"].as_str() {
                    keep.insert(u.to_owned());
                }
            }
        }
        let subset: Vec<Value> = c
            .records
            .iter()
            .filter(|r| {
                r["type"] == "content-replacement"
                    || r["uuid"].as_str().is_some_and(|u| keep.contains(u))
            })
            .cloned()
            .collect();
        let mut opts = c.opts.clone();
        if opts.at.is_none() {
            opts.leaf = Some(leaf);
        }
        let got = api_view(&subset, &opts).expect("subset view");
        if got != full {
            failures.push(format!(
                "{}: subset of {}/{} records differs",
                c.name,
                subset.len(),
                c.records.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Corpus sessions whose API view cannot be valid under the CLI's rules,
/// with the reason. (`validate` is structural; these are properties of the
/// stored files, not of the port.)
const CORPUS_EXCEPTIONS: &[(&str, &str)] = &[];

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn corpus_api_views_validate() {
    let Some(shared) = crate::support::shared_dir("the resume oracle") else {
        return;
    };
    let dir = shared.join("corpus/claude-code");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("read corpus dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus files");
    let mut failures = Vec::new();
    let mut excepted = Vec::new();
    for f in &files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let records = read_jsonl(f);
        let view = match api_view(&records, &ApiOptions::default()) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{name}: error {e}"));
                continue;
            }
        };
        let v = validate(&view);
        let exception = CORPUS_EXCEPTIONS.iter().find(|(n, _)| *n == name);
        match (v.is_empty(), exception) {
            (true, None) => {}
            (true, Some(_)) => failures.push(format!("{name}: listed as exception but valid")),
            (false, Some((_, why))) => {
                excepted.push(format!("{name}: {why} ({} violations)", v.len()))
            }
            (false, None) => {
                let shown: Vec<String> = v.iter().take(5).map(ToString::to_string).collect();
                failures.push(format!(
                    "{name}: {} violations: {}",
                    v.len(),
                    shown.join("; ")
                ));
            }
        }
    }
    eprintln!(
        "corpus: {} files, {} valid, {} known exceptions",
        files.len(),
        files.len() - failures.len() - excepted.len(),
        excepted.len()
    );
    for e in &excepted {
        eprintln!("  exception {e}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// B5: the whitespace-only assistant text of this transcript made its view invalid until
/// the CLI's rule (drop whitespace-only text blocks of assistant records) was applied; the
/// 2.1.88 spec's §6.5 record filter is no longer needed for it.
#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn corpus_whitespace_text_is_dropped_as_the_cli_does() {
    let Some(shared) = crate::support::shared_dir("the resume oracle") else {
        return;
    };
    let f = shared.join("corpus/claude-code/entirecli__397737088f0a_0_full.jsonl");
    if !f.is_file() {
        return;
    }
    let conv = load_conversation(&read_jsonl(&f), &ApiOptions::default()).expect("load");
    let v = validate(&sessiondb::resume::normalize(&conv.messages));
    assert!(v.is_empty(), "{v:?}");
}
