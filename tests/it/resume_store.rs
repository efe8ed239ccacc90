//! The SQL path of resume (leaf and chain chosen in SQL, only gathered rows parsed) equals
//! the naive in-memory reference (every record of the file given to the pure functions),
//! on every oracle case and every corpus session.

use crate::support::*;
use serde_json::Value;
use sessiondb::resume::{self, ApiOptions, ResumeOptions};
use sessiondb::{jsonl, query};
use std::path::Path;

fn all_records(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).expect("read");
    jsonl::split_lines(&bytes)
        .filter_map(|l| jsonl::parse_record(l.bytes))
        .collect()
}

fn compare(
    store: &sessiondb::Store,
    arg: &str,
    file: &Path,
    options: &ResumeOptions,
) -> Result<(), String> {
    let session = query::resolve_session(&store.reader().expect("reader"), arg).expect("session");
    let records = all_records(file);
    let resumed = match store.resume(&session, options) {
        // B9: refused exactly when the in-memory chain has no conversation either.
        Err(sessiondb::Error::NoConversation(id)) => {
            let chain = resume::load_conversation(&records, &ApiOptions::default())
                .map_err(|e| e.to_string())?;
            return match resume::refusal(&chain.messages, &id) {
                Some(_) => Ok(()),
                None => Err("refused, but the reference has a conversation".into()),
            };
        }
        other => other.map_err(|e| e.to_string())?,
    };
    let reference = resume::load_conversation(
        &records,
        &ApiOptions {
            interactive: options.interactive,
            at: options.at.clone(),
            resume_interrupted_turn: options.continue_interrupted,
            leaf: None,
            model: resumed.model.clone(),
            cli_version: options.cli_version,
        },
    )
    .map_err(|e| e.to_string())?;
    if resumed.leaf_uuid != reference.leaf {
        return Err(format!(
            "leaf {:?} != reference {:?}",
            resumed.leaf_uuid, reference.leaf
        ));
    }
    let strip = |v: &[Value]| -> Vec<Value> { v.to_vec() };
    if strip(&resumed.messages) != strip(&reference.messages) {
        return Err("messages differ from the reference".into());
    }
    if resumed.api_view()
        != resume::normalize_for(reference.messages.clone(), resumed.model.as_deref())
    {
        return Err("API view differs from the reference".into());
    }
    Ok(())
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn sql_resume_equals_the_in_memory_reference_on_the_corpus() {
    let Some(shared) = shared_dir("the corpus resume comparison") else {
        return;
    };
    let (_dir, store) = temp_store();
    let corpus = shared.join("corpus/claude-code");
    import(&store, &[&corpus]);
    let mut failures = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .map(|e| e.expect("e").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let stem = file
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        if let Err(e) = compare(
            &store,
            &format!("claude-code/{stem}"),
            &file,
            &ResumeOptions::default(),
        ) {
            failures.push(format!("{stem}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[cfg_attr(not(sessiondb_shared), ignore = "needs ../shared")]
fn sql_resume_equals_the_in_memory_reference_on_the_oracle_cases() {
    let Some(shared) = shared_dir("the oracle resume comparison") else {
        return;
    };
    let mut failures = Vec::new();
    for case in crate::resume_cli::cases(&shared) {
        let dir = tempfile::tempdir().expect("tmp");
        let projects = crate::resume_cli::lay_out(&case, dir.path());
        let (_d, store) = temp_store();
        import(&store, &[&projects]);
        let project = case.str("project_dir_name").expect("project");
        let target = case.str("target_session_id").expect("target");
        let file = projects.join(project).join(format!("{target}.jsonl"));
        let options = ResumeOptions {
            at: case.str("resume_session_at").map(str::to_owned),
            interactive: case.json.get("interactive").and_then(Value::as_bool) == Some(true),
            continue_interrupted: case
                .json
                .get("env")
                .and_then(|e| e.get("CLAUDE_CODE_RESUME_INTERRUPTED_TURN"))
                .and_then(Value::as_str)
                == Some("1"),
            ..ResumeOptions::default()
        };
        if let Err(e) = compare(&store, &format!("{project}/{target}"), &file, &options) {
            failures.push(format!("{}: {e}", case.name()));
        }
        let session =
            query::resolve_session(&store.reader().expect("r"), &format!("{project}/{target}"))
                .expect("session");
        let resumed = store.resume(&session, &options).expect("resume");
        if Value::Array(resumed.api_view()) != case.expected_view() {
            failures.push(format!("{}: API view differs from the CLI's", case.name()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The three leaf rules pick different records on a file where file order and timestamps
/// disagree: a rewind branch written before an older one, and a trailing system record.
#[test]
fn leaf_rules_follow_their_claude_code_versions() {
    use sessiondb::resume::gather::LeafRule;
    let (dir, store) = temp_store();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).expect("mkdir");
    let line = |uuid: &str, parent: Option<&str>, kind: &str, ts: u32| {
        let mut v = serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": kind,
            "uuid": uuid, "timestamp": format!("2026-01-01T00:00:{ts:02}.000Z"), "sessionId": "s"});
        if kind == "system" {
            v["subtype"] = "turn_duration".into();
        } else {
            v["message"] = serde_json::json!({"role": kind, "content": format!("{uuid}")});
        }
        format!("{v}\n")
    };
    let body = [
        line("u1", None, "user", 1),
        line("b1", Some("u1"), "assistant", 20),
        line("a1", Some("u1"), "assistant", 10),
        line("s1", Some("b1"), "system", 30),
        line("c1", Some("u1"), "assistant", 5),
    ]
    .concat();
    std::fs::write(project.join("s.jsonl"), body).expect("write");
    import(&store, &[&project]);
    let session = query::resolve_session(&store.reader().expect("r"), "p/s").expect("session");
    let leaf = |rule| {
        store
            .resume(
                &session,
                &ResumeOptions {
                    leaf_rule: rule,
                    ..ResumeOptions::default()
                },
            )
            .expect("resume")
            .leaf_uuid
    };
    assert_eq!(leaf(LeafRule::FileOrder).as_deref(), Some("c1"));
    assert_eq!(leaf(LeafRule::NewestMessage).as_deref(), Some("s1"));
    assert_eq!(leaf(LeafRule::NewestTurn).as_deref(), Some("b1"));
}
