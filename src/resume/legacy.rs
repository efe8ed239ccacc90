//! What CLI 2.1.332 does to the content of *older* records on the way to the API (the
//! `real/` oracle pack, rules B1, B2, B5, B6). Each rule is one pure function over one
//! record's content blocks; [`super::api::normalize_for`] calls them per record, so a
//! transcript that never needs them pays one type check per block.

use serde_json::{json, Value};

use super::model::{is_real_model, model_profile, same_model};
use super::util::block_type;

/// B2: tool names older CLIs wrote that 2.1.332 sends under their current name.
/// `Task` → `Agent`: `happycli__task_non_sdk__own`; both:
/// `tests/fixtures/oracle-made/legacy_tool_names__claude-sonnet-4-5`, which also shows
/// that the CLI's other aliases (`KillShell`, `KillBash`, `Brief`, `ListMcpResources`,
/// `ReadMcpResource`, `ReadMcpResourceDir`, `ProposeGoal`; used for permission rules) are
/// sent unchanged.
pub const LEGACY_TOOL_NAMES: &[(&str, &str)] = &[("Task", "Agent"), ("ListPeers", "ListAgents")];

/// The current name of a tool (B2), `None` when `name` is not a legacy name.
pub fn current_tool_name(name: &str) -> Option<&'static str> {
    LEGACY_TOOL_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map(|(_, new)| *new)
}

/// B2: renames legacy `tool_use` names in an assistant record's blocks, input and id
/// unchanged (`happycli__task_non_sdk__own`: `Task` is sent as `Agent`).
pub fn rename_legacy_tools(blocks: &mut [Value]) {
    for b in blocks.iter_mut() {
        if block_type(b) != Some("tool_use") {
            continue;
        }
        let renamed = b
            .get("name")
            .and_then(Value::as_str)
            .and_then(current_tool_name);
        if let (Some(new), Some(o)) = (renamed, b.as_object_mut()) {
            o.insert("name".into(), json!(new));
        }
    }
}

/// B1: whether an assistant record's thinking is sent to `target`. The CLI drops it when
/// the record's `message.model` is another model than the one it calls: a date suffix does
/// not count, `<synthetic>` records keep theirs, and a record without a model loses it.
/// No target (model unknown) keeps everything. Per record, so a mixed-model session loses
/// only some (`entirecli__63590d292e96_0_full__own`), a single-model one all
/// (`entirecli__4c02af2759b6_0_full__other`).
pub fn keeps_thinking(record_model: Option<&str>, target: Option<&str>) -> bool {
    let Some(target) = target else {
        return true;
    };
    match record_model {
        None => false,
        Some(m) => !is_real_model(m) || m == target || same_model(m, target),
    }
}

/// B1: the blocks a model switch removes: `redacted_thinking`, and `thinking` that carries
/// a signature (unsigned thinking cannot be verified by any model and is left alone).
pub fn is_foreign_thinking(b: &Value) -> bool {
    match block_type(b) {
        Some("redacted_thinking") => true,
        Some("thinking") => b
            .get("signature")
            .is_some_and(|s| s.as_str().is_some_and(|s| !s.is_empty()) || s.is_object()),
        _ => false,
    }
}

/// B5: an assistant text block with only whitespace (`entirecli__397737088f0a_0_full__own`:
/// a `"\n\n"` text record is not sent).
pub fn is_blank_text(b: &Value) -> bool {
    block_type(b) == Some("text")
        && b.get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim().is_empty())
}

/// Assistant content blocks the CLI stores but never sends: `fallback` records that the
/// API switched models mid-reply (`{"type":"fallback","from":{"model"},"to":{"model"}}`,
/// written as a record of its own that shares `message.id` with the text after it), and
/// `advisor_tool_result` (the advisor's answers are not replayed). Issue 25, made cases
/// `issue25_misses__*` and `issue25_blocks__*` (the other server-tool blocks are sent as
/// stored).
pub const UNSENT_BLOCK_TYPES: &[&str] = &["fallback", "advisor_tool_result"];

/// A block of [`UNSENT_BLOCK_TYPES`].
pub fn is_unsent_block(b: &Value) -> bool {
    block_type(b).is_some_and(|t| UNSENT_BLOCK_TYPES.contains(&t))
}

/// B1 + B5 + B2 (and the blocks that are never sent) on one assistant record's blocks,
/// for a conversation sent to `target`.
pub fn assistant_blocks(
    mut blocks: Vec<Value>,
    record_model: Option<&str>,
    target: Option<&str>,
) -> Vec<Value> {
    let keep_thinking = keeps_thinking(record_model, target);
    blocks.retain(|b| {
        !is_blank_text(b) && !is_unsent_block(b) && (keep_thinking || !is_foreign_thinking(b))
    });
    rename_legacy_tools(&mut blocks);
    blocks
}

/// B6: text block the CLI adds after a ToolSearch result that loaded tools.
pub const TOOL_LOADED: &str = "Tool loaded.";

/// B6: text a ToolSearch result is replaced with when none of its tools is available.
pub const TOOL_REFERENCES_REMOVED: &str = "[Tool references removed - tools no longer available]";

/// B6: the tools CLI 2.1.332 offers in print mode with an empty HOME and no MCP server
/// (its request's `tools`, and the deferred tools it lists for ToolSearch).
pub const OFFLINE_TOOLS: &[&str] = &[
    "Agent",
    "Bash",
    "Edit",
    "ListAgents",
    "Read",
    "ReportFindings",
    "ScheduleWakeup",
    "Skill",
    "ToolSearch",
    "Workflow",
    "Write",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterWorktree",
    "ExitWorktree",
    "Monitor",
    "NotebookEdit",
    "SendMessage",
    "TaskStop",
    "WebFetch",
    "WebSearch",
];

/// B6: the deferred task-list tools, offered only to the models of
/// [`super::model::TASK_TOOL_MODELS`] (`ModelProfile::task_tools`):
/// `oracle-made/tool_references__claude-opus-4-8` loses its `TaskCreate` reference; the
/// deferred-tools listings of the real pack's `claude-opus-4-8` and `MiniMax-M2.7` requests
/// lack them too.
pub const TASK_LIST_TOOLS: &[&str] = &["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"];

/// B6: whether the CLI, resuming offline for `model`, has a tool of this name.
pub fn tool_available(name: &str, model: Option<&str>) -> bool {
    OFFLINE_TOOLS.contains(&name)
        || (TASK_LIST_TOOLS.contains(&name) && model_profile(model).task_tools)
}

/// B6: ToolSearch results (`tool_result` content of `tool_reference` blocks) in a user
/// record's blocks. References to tools the CLI does not have are removed; when some
/// remain, a `Tool loaded.` text block follows the result
/// (`soph__01M089WX3QX7B7XFCSZF80QTY9_0_full__other`), else the content becomes
/// `[Tool references removed - tools no longer available]`
/// (`oracle-made/tool_references__*`: MCP tools and, for `claude-opus-4-8`, `TaskCreate`).
pub fn tool_references(blocks: Vec<Value>, model: Option<&str>) -> Vec<Value> {
    let is_ref = |b: &Value| block_type(b) == Some("tool_reference");
    let has_refs = |b: &Value| {
        block_type(b) == Some("tool_result")
            && b.get("content")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(is_ref))
    };
    if !blocks.iter().any(has_refs) {
        return blocks;
    }
    let mut out = Vec::with_capacity(blocks.len() + 1);
    for mut b in blocks {
        if !has_refs(&b) {
            out.push(b);
            continue;
        }
        let mut loaded = false;
        if let Some(Value::Array(content)) = b.get_mut("content") {
            content.retain(|x| {
                !is_ref(x)
                    || x.get("tool_name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| tool_available(n, model))
            });
            loaded = content.iter().any(is_ref);
            if !loaded {
                *content = vec![json!({"type": "text", "text": TOOL_REFERENCES_REMOVED})];
            }
        }
        out.push(b);
        if loaded {
            out.push(json!({"type": "text", "text": TOOL_LOADED}));
        }
    }
    out
}

/// B8: content of the error tool_result sent for a tool_use that is not answered in the
/// next message.
pub const MISSING_TOOL_RESULT: &str = "[Tool result missing due to internal error]";

/// B8: text of a user message left with no content after its misplaced results were
/// dropped.
pub const NO_CONTENT: &str = "(no content)";

/// B8: text replacing a dropped tool_use that sat between two thinking blocks.
pub const TOOL_USE_REMOVED: &str = "[Tool use removed]";

/// B8: text of an assistant message left empty by the pairing pass.
pub const TOOL_USE_INTERRUPTED: &str = "[Tool use interrupted]";

/// B8: text of a first message that held only orphaned tool results.
pub const ORPHANED_TOOL_RESULT: &str = "[Orphaned tool result removed due to conversation resume]";

fn role(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

fn tool_result_id(b: &Value) -> Option<&str> {
    (block_type(b) == Some("tool_result"))
        .then(|| b.get("tool_use_id").and_then(Value::as_str))
        .flatten()
}

fn cited_text(t: &str) -> Value {
    json!({"type": "text", "text": t, "citations": []})
}

/// B8: the CLI's last pass over the API messages before sending, which makes every
/// tool_use answered by the very next message. Old CLIs sometimes chained a second
/// assistant message before the results (`episodic__large-conversation__own`, message
/// 208): the first gets a
/// `{"type":"tool_result","tool_use_id":…,"content":"[Tool result missing due to internal error]","is_error":true}`
/// user message right after it, and the real result that comes later (after another
/// assistant message) is dropped there. Also: a repeated tool_use id is dropped, a
/// tool_result inside an assistant message is dropped, tool results in a user message that
/// does not follow an assistant message are dropped. A conversation that is already paired
/// is returned unchanged.
pub fn pair_tool_results(msgs: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(msgs.len());
    let mut seen_uses: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut it = msgs.into_iter().peekable();
    while let Some(mut m) = it.next() {
        if role(&m) != Some("assistant") {
            let after_assistant = out.last().and_then(role) == Some("assistant");
            if role(&m) == Some("user") && !after_assistant {
                let orphans = m
                    .get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|b| block_type(b) == Some("tool_result")));
                if let (true, Some(Value::Array(blocks))) = (orphans, m.get("content")) {
                    let kept: Vec<Value> = blocks
                        .iter()
                        .filter(|b| block_type(b) != Some("tool_result"))
                        .cloned()
                        .collect();
                    {
                        let content = if !kept.is_empty() {
                            Some(Value::Array(kept))
                        } else if out.is_empty() {
                            Some(json!([{"type": "text", "text": ORPHANED_TOOL_RESULT}]))
                        } else {
                            None
                        };
                        if let (Some(c), Some(o)) = (content, m.as_object_mut()) {
                            o.insert("content".into(), c);
                            out.push(m);
                        }
                        continue;
                    }
                }
            }
            out.push(m);
            continue;
        }
        let blocks: Vec<Value> = match m.get_mut("content").map(Value::take) {
            Some(Value::Array(a)) => a,
            Some(other) => {
                if let Some(o) = m.as_object_mut() {
                    o.insert("content".into(), other);
                }
                out.push(m);
                continue;
            }
            None => Vec::new(),
        };
        let cited: std::collections::HashSet<String> = blocks
            .iter()
            .filter(|b| block_type(b) != Some("tool_result"))
            .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
            .map(str::to_owned)
            .collect();
        let mut uses: Vec<String> = Vec::new();
        let mut kept: Vec<Value> = Vec::with_capacity(blocks.len());
        let is_thinking = |b: Option<&Value>| {
            matches!(
                b.and_then(block_type),
                Some("thinking" | "redacted_thinking")
            )
        };
        let thinking_at: Vec<bool> = blocks.iter().map(|b| is_thinking(Some(b))).collect();
        for (i, b) in blocks.into_iter().enumerate() {
            let drop = match block_type(&b) {
                Some("tool_use") => {
                    let id = b.get("id").and_then(Value::as_str).unwrap_or("");
                    if seen_uses.contains(id) {
                        true
                    } else {
                        seen_uses.insert(id.to_owned());
                        uses.push(id.to_owned());
                        false
                    }
                }
                Some("server_tool_use" | "mcp_tool_use") => {
                    !cited.contains(b.get("id").and_then(Value::as_str).unwrap_or(""))
                }
                Some("tool_result") => true,
                _ => false,
            };
            if !drop {
                kept.push(b);
            } else if i > 0
                && thinking_at.get(i - 1) == Some(&true)
                && thinking_at.get(i + 1) == Some(&true)
            {
                kept.push(cited_text(TOOL_USE_REMOVED));
            }
        }
        if kept.is_empty() {
            kept.push(cited_text(TOOL_USE_INTERRUPTED));
        }
        if let Some(o) = m.as_object_mut() {
            o.insert("content".into(), Value::Array(kept));
        }
        out.push(m);

        let next_is_user = it.peek().and_then(role) == Some("user");
        let mut results: Vec<&str> = Vec::new();
        let mut duplicate = false;
        if next_is_user {
            if let Some(Value::Array(nb)) = it.peek().and_then(|n| n.get("content")) {
                for id in nb.iter().filter_map(tool_result_id) {
                    duplicate |= results.contains(&id);
                    if !results.contains(&id) {
                        results.push(id);
                    }
                }
            }
        }
        let missing: Vec<&String> = uses
            .iter()
            .filter(|u| !results.contains(&u.as_str()))
            .collect();
        let foreign: Vec<String> = results
            .iter()
            .filter(|r| !uses.iter().any(|u| u == *r))
            .map(|r| (*r).to_owned())
            .collect();
        if missing.is_empty() && foreign.is_empty() && !duplicate {
            continue;
        }
        let mut content: Vec<Value> = missing
            .iter()
            .map(|id| {
                json!({"type": "tool_result", "tool_use_id": id, "content": MISSING_TOOL_RESULT, "is_error": true})
            })
            .collect();
        if next_is_user {
            let Some(mut next) = it.next() else { break };
            let mut blocks = match next.get_mut("content").map(Value::take) {
                Some(Value::Array(a)) => a,
                Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
                _ => Vec::new(),
            };
            if !foreign.is_empty() || duplicate {
                let mut kept_ids: Vec<String> = Vec::new();
                blocks.retain(|b| match tool_result_id(b) {
                    Some(id) if foreign.iter().any(|f| f == id) => false,
                    Some(id) if kept_ids.iter().any(|k| k == id) => false,
                    Some(id) => {
                        kept_ids.push(id.to_owned());
                        true
                    }
                    None => true,
                });
            }
            content.extend(blocks);
            let content = if content.is_empty() {
                json!(NO_CONTENT)
            } else {
                Value::Array(content)
            };
            if let Some(o) = next.as_object_mut() {
                o.insert("content".into(), content);
            }
            out.push(next);
        } else if !content.is_empty() {
            out.push(json!({"role": "user", "content": content}));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_by_model() {
        let t = Some("claude-sonnet-4-5");
        assert!(keeps_thinking(Some("claude-sonnet-4-5-20250929"), t));
        assert!(keeps_thinking(Some("<synthetic>"), t));
        assert!(!keeps_thinking(Some("claude-opus-4-6"), t));
        assert!(!keeps_thinking(None, t));
        assert!(keeps_thinking(Some("claude-opus-4-6"), None));
    }

    #[test]
    fn blocks_of_an_old_record() {
        let blocks = vec![
            json!({"type":"thinking","thinking":"x","signature":"s"}),
            json!({"type":"thinking","thinking":"y"}),
            json!({"type":"redacted_thinking","data":"d"}),
            json!({"type":"text","text":" \n"}),
            json!({"type":"text","text":"ok"}),
            json!({"type":"tool_use","id":"t","name":"Task","input":{}}),
        ];
        let out = assistant_blocks(
            blocks.clone(),
            Some("claude-opus-4-6"),
            Some("claude-sonnet-4-5"),
        );
        assert_eq!(
            out,
            vec![
                json!({"type":"thinking","thinking":"y"}),
                json!({"type":"text","text":"ok"}),
                json!({"type":"tool_use","id":"t","name":"Agent","input":{}}),
            ]
        );
        let same = assistant_blocks(blocks, Some("claude-opus-4-6"), Some("claude-opus-4-6"));
        assert_eq!(same.len(), 5);
    }

    #[test]
    fn pairing_inserts_missing_results_and_drops_late_ones() {
        let tu = |id: &str| json!({"type":"tool_use","id":id,"name":"Bash","input":{}});
        let tr = |id: &str| json!({"tool_use_id":id,"type":"tool_result","content":"out"});
        let msgs = vec![
            json!({"role":"user","content":"go"}),
            json!({"role":"assistant","content":[tu("a")]}),
            json!({"role":"assistant","content":[tu("b")]}),
            json!({"role":"user","content":[tr("a"), tr("b")]}),
            json!({"role":"assistant","content":[{"type":"text","text":"done"}]}),
        ];
        let out = pair_tool_results(msgs);
        assert_eq!(
            out,
            vec![
                json!({"role":"user","content":"go"}),
                json!({"role":"assistant","content":[tu("a")]}),
                json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":MISSING_TOOL_RESULT,"is_error":true}]}),
                json!({"role":"assistant","content":[tu("b")]}),
                json!({"role":"user","content":[tr("b")]}),
                json!({"role":"assistant","content":[{"type":"text","text":"done"}]}),
            ]
        );
        let paired = out.clone();
        assert_eq!(pair_tool_results(paired), out);
    }
}
