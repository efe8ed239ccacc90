//! CLI 2.1.332's `filterUnresolvedToolUses` as its resume runs it: a reply whose every
//! tool_use is answered nowhere in the conversation is not sent, unless the conversation
//! ends with it (nothing after it but its own message's records, tool results, attachments
//! and system records); such a trailing call is answered by R11's synthetic result
//! instead ([`super::repair::recover_conversation`]).
//!
//! The spec (§6.3, written against 2.1.88) drops such replies wherever they are; the
//! oracle's port answered every one of them. The CLI drops them all and answers the
//! trailing ones: the made case `interrupt__step-05` shows the latter, the differential
//! tester's `drop` variants (a tool result lost mid-conversation, then more turns) the
//! former.

use std::collections::HashSet;

use serde_json::Value;

use super::repair::{is_local_command, Repair, RepairKind};
use super::util::{block_type, blocks, is_tool_result_msg, msg_id, rec_type, str_field};

/// Drops the replies whose tool_uses are all unanswered and that the conversation goes on
/// past (a later reply of another message, a later prompt, or a local command).
pub fn drop_unanswered_mid_conversation(chain: Vec<Value>) -> (Vec<Value>, Vec<Repair>) {
    let answered: HashSet<&str> = chain
        .iter()
        .filter(|r| matches!(rec_type(r), Some("user" | "assistant")))
        .flat_map(|r| blocks(r).iter())
        .filter(|b| block_type(b) == Some("tool_result"))
        .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
        .collect();
    let unanswered = |r: &Value| {
        let mut calls = blocks(r)
            .iter()
            .filter(|b| block_type(b) == Some("tool_use"))
            .map(|b| b.get("id").and_then(Value::as_str).unwrap_or(""))
            .peekable();
        calls.peek().is_some() && calls.all(|id| !answered.contains(id))
    };
    // From the end: whether a prompt or local command follows, and the message ids of the
    // replies that follow (two distinct ones are enough to know one differs).
    let mut dropped = vec![false; chain.len()];
    let mut prompt_after = false;
    let mut replies_after: Vec<Option<&str>> = Vec::new();
    for (i, r) in chain.iter().enumerate().rev() {
        if rec_type(r) == Some("assistant") {
            let own = msg_id(r);
            let goes_on = prompt_after || replies_after.iter().any(|m| m.is_none() || *m != own);
            dropped[i] = goes_on && unanswered(r);
            if replies_after.len() < 2 && !replies_after.contains(&own) {
                replies_after.push(own);
            }
        } else if is_local_command(r) || (rec_type(r) == Some("user") && !is_tool_result_msg(r)) {
            prompt_after = true;
        }
    }
    if !dropped.contains(&true) {
        return (chain, Vec::new());
    }
    let mut repairs = Vec::new();
    let kept = chain
        .into_iter()
        .zip(dropped)
        .filter_map(|(r, drop)| {
            if !drop {
                return Some(r);
            }
            repairs.push(Repair {
                kind: RepairKind::UnansweredToolUseDropped,
                uuid: str_field(&r, "uuid").map(str::to_owned),
                detail: "dropped a reply whose tool calls were never answered".into(),
            });
            None
        })
        .collect();
    (kept, repairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(u: &str, content: Value) -> Value {
        json!({"type":"user","uuid":u,"message":{"role":"user","content":content}})
    }
    fn call(u: &str, id: &str) -> Value {
        json!({"type":"assistant","uuid":u,"message":{"id":format!("m-{u}"),"role":"assistant",
               "content":[{"type":"tool_use","id":id,"name":"Bash","input":{}}]}})
    }
    fn result(u: &str, id: &str) -> Value {
        user(
            u,
            json!([{"type":"tool_result","tool_use_id":id,"content":"ok"}]),
        )
    }
    fn uuids(chain: &[Value]) -> Vec<&str> {
        chain
            .iter()
            .map(|r| r["uuid"].as_str().unwrap_or("?"))
            .collect()
    }

    #[test]
    fn an_unanswered_call_the_conversation_goes_on_past_is_dropped() {
        let chain = vec![
            user("p1", json!("go")),
            call("a1", "t1"),
            call("a2", "t2"),
            result("r2", "t2"),
            user("p2", json!("next")),
            call("a3", "t3"),
        ];
        let (out, repairs) = drop_unanswered_mid_conversation(chain);
        // a1 (t1 never answered, other replies follow) goes; a3 ends the conversation and
        // stays for R11.
        assert_eq!(uuids(&out), ["p1", "a2", "r2", "p2", "a3"]);
        assert_eq!(repairs.len(), 1);
        assert_eq!(repairs[0].uuid.as_deref(), Some("a1"));
    }

    #[test]
    fn trailing_and_answered_calls_are_kept() {
        let mut text = call("a3", "-");
        text["message"] =
            json!({"id":"m-a2","role":"assistant","content":[{"type":"text","text":"x"}]});
        let chain = vec![
            user("p1", json!("go")),
            call("a1", "t1"),
            result("r1", "t1"),
            call("a2", "t2"),
            // a record of a2's own message does not make the conversation go on
            text,
        ];
        let (out, repairs) = drop_unanswered_mid_conversation(chain.clone());
        assert_eq!(out, chain);
        assert!(repairs.is_empty());
    }
}
