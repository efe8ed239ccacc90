//! Property tests over generated transcript trees: the SQL path equals the naive in-memory
//! reference, the chain follows the leaf's ancestry with no uuid twice, no sidechain record
//! reaches the main chain, and the repair pass is idempotent.

use crate::support::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use sessiondb::resume::{self, ApiOptions, ResumeOptions};
use sessiondb::{jsonl, query};
use std::collections::{HashMap, HashSet};

/// One generated line: its kind, which earlier line it hangs off, and a few flags.
#[derive(Debug, Clone)]
struct Gen {
    kind: u8,
    parent: Option<prop::sample::Index>,
    sidechain: bool,
    same_message_as_previous: bool,
    with_tool: bool,
    duplicate: bool,
}

fn gen_line() -> impl Strategy<Value = Gen> {
    (
        0u8..10,
        prop::option::weighted(0.9, any::<prop::sample::Index>()),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.4),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(kind, parent, sidechain, same, tool, dup)| Gen {
            kind,
            parent,
            sidechain,
            same_message_as_previous: same,
            with_tool: tool,
            duplicate: dup,
        })
}

fn uuid(i: usize) -> String {
    format!("00000000-0000-4000-8000-{i:012}")
}

/// Builds a transcript: users, assistants (some split by message.id, some with tool_use),
/// tool results, attachments, system records, progress records, compact boundaries,
/// sidechain records, duplicated lines and metadata.
fn build(lines: &[Gen]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut uuids: Vec<String> = Vec::new();
    let mut tool_ids: Vec<(String, String)> = Vec::new(); // (tool_use id, assistant uuid)
    let mut message = 0usize;
    for (i, g) in lines.iter().enumerate() {
        let id = uuid(i);
        let parent = g
            .parent
            .as_ref()
            .filter(|_| !uuids.is_empty())
            .map(|ix| uuids[ix.index(uuids.len())].clone());
        let ts = format!("2026-01-01T00:{:02}:{:02}.000Z", i / 60, i % 60);
        let mut record = match g.kind {
            0 | 1 => {
                json!({"type": "user", "message": {"role": "user", "content": format!("prompt {i}")}})
            }
            2 | 3 => {
                if !g.same_message_as_previous {
                    message += 1;
                }
                let block = if g.with_tool {
                    let tool = format!("toolu_{i}");
                    tool_ids.push((tool.clone(), id.clone()));
                    json!({"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "ls"}})
                } else {
                    json!({"type": "text", "text": format!("reply {i}")})
                };
                json!({"type": "assistant", "message": {"id": format!("msg_{message}"), "role": "assistant", "content": [block]}})
            }
            4 | 5 => match tool_ids.pop() {
                Some((tool, owner)) => json!({"type": "user", "sourceToolAssistantUUID": owner,
                    "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool, "content": "ok"}]}}),
                None => {
                    json!({"type": "user", "message": {"role": "user", "content": "[Request interrupted by user]"}})
                }
            },
            6 => {
                json!({"type": "attachment", "attachment": {"type": "x"}, "rendered": [{"content": format!("<system-reminder>r{i}</system-reminder>")}]})
            }
            7 => json!({"type": "system", "subtype": "turn_duration", "durationMs": 5}),
            8 => json!({"type": "progress", "data": {"type": "hook_progress"}}),
            _ => {
                json!({"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "manual", "preTokens": 10}})
            }
        };
        let obj = record.as_object_mut().expect("object");
        let is_boundary = obj.get("subtype").and_then(Value::as_str) == Some("compact_boundary");
        obj.insert(
            "parentUuid".into(),
            if is_boundary {
                Value::Null
            } else {
                parent.clone().map_or(Value::Null, Value::String)
            },
        );
        if is_boundary {
            obj.insert(
                "logicalParentUuid".into(),
                parent.map_or(Value::Null, Value::String),
            );
        }
        obj.insert("isSidechain".into(), Value::Bool(g.sidechain));
        obj.insert("uuid".into(), Value::String(id.clone()));
        obj.insert("timestamp".into(), Value::String(ts));
        obj.insert("sessionId".into(), Value::String("s".into()));
        out.push(record.clone());
        if g.duplicate {
            out.push(record);
        }
        uuids.push(id);
        if i % 17 == 16 {
            out.push(
                json!({"type": "custom-title", "customTitle": format!("t{i}"), "sessionId": "s"}),
            );
        }
    }
    out
}

/// Resumes a generated transcript both ways and checks the properties.
fn check(records: &[Value]) -> Result<(), TestCaseError> {
    let (dir, store) = temp_store();
    let project = dir.path().join("gen");
    std::fs::create_dir_all(&project).expect("mkdir");
    let file = project.join("s.jsonl");
    let mut body = String::new();
    for r in records {
        body.push_str(&r.to_string());
        body.push('\n');
    }
    std::fs::write(&file, &body).expect("write");
    import(&store, &[&file]);
    let session =
        query::resolve_session(&store.reader().expect("reader"), "gen/s").expect("session");
    let parsed: Vec<Value> = jsonl::split_lines(body.as_bytes())
        .filter_map(|l| jsonl::parse_record(l.bytes))
        .collect();
    let reference = resume::load_conversation(&parsed, &ApiOptions::default()).expect("reference");
    let resumed = match store.resume(&session, &ResumeOptions::default()) {
        // B9: a tree without user/assistant records is refused, like the CLI does.
        Err(sessiondb::Error::NoConversation(_)) => {
            prop_assert!(resume::refusal(&reference.messages, "s").is_some());
            return Ok(());
        }
        other => other.expect("resume"),
    };
    prop_assert!(resume::refusal(&reference.messages, "s").is_none());

    // The SQL path equals the in-memory reference.
    prop_assert_eq!(&resumed.leaf_uuid, &reference.leaf);
    prop_assert_eq!(&resumed.messages, &reference.messages);

    // No sidechain record reaches the main chain.
    prop_assert!(resumed
        .messages
        .iter()
        .all(|m| m.get("isSidechain") != Some(&Value::Bool(true))));

    // No uuid twice, and the leaf's ancestry appears in order.
    let mut seen = HashSet::new();
    for m in &resumed.messages {
        if let Some(u) = m.get("uuid").and_then(Value::as_str) {
            prop_assert!(seen.insert(u.to_owned()), "uuid {} twice", u);
        }
    }
    if let Some(leaf) = &resumed.leaf_uuid {
        let parents: HashMap<&str, Option<&str>> = parsed
            .iter()
            .filter(|r| r.get("type").and_then(Value::as_str) != Some("progress"))
            .filter_map(|r| {
                Some((
                    r.get("uuid")?.as_str()?,
                    r.get("parentUuid").and_then(Value::as_str),
                ))
            })
            .collect();
        let positions: HashMap<&str, usize> = resumed
            .messages
            .iter()
            .enumerate()
            .filter_map(|(i, m)| Some((m.get("uuid")?.as_str()?, i)))
            .collect();
        let mut at = Some(leaf.as_str());
        let mut last = usize::MAX;
        let mut hops = 0;
        while let Some(u) = at {
            let Some(&pos) = positions.get(u) else { break };
            prop_assert!(pos < last, "ancestor {} out of order", u);
            last = pos;
            at = parents.get(u).copied().flatten();
            hops += 1;
            if hops > records.len() {
                break;
            }
        }
    }

    // Repair is idempotent: running it on its own output adds nothing.
    let (again, repairs) = resume::repair::recover_conversation(resumed.messages.clone());
    prop_assert!(
        repairs.iter().all(|r| !r.kind.adds_record()),
        "{:?}",
        repairs
    );
    prop_assert_eq!(again.len(), resumed.messages.len());
    Ok(())
}

/// The cases a run draws: the same every run (a run that fails must fail again, and a
/// landing must not hang on a draw), or random when `SESSIONDB_RANDOM_PROPS` is set, to
/// look for new trees. A random run on 2026-12-07 found one where the SQL path keeps an
/// attachment hanging off a chain record beside the chain and the reference does not
/// (docs/conformance.md, "Open"); it fails on the code before that day too, and is open.
fn config() -> ProptestConfig {
    let rng_seed = match std::env::var_os("SESSIONDB_RANDOM_PROPS") {
        Some(_) => proptest::test_runner::RngSeed::Random,
        None => proptest::test_runner::RngSeed::Fixed(SEED),
    };
    ProptestConfig {
        cases: 48,
        rng_seed,
        ..ProptestConfig::default()
    }
}

/// The seed the cases are drawn from.
const SEED: u64 = 1;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_trees_resume_consistently(lines in prop::collection::vec(gen_line(), 1..60)) {
        check(&build(&lines))?;
    }
}
