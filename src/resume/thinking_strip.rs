//! `thinking_stripped` attachments: the CLI records one when it stopped sending the
//! thinking of earlier replies (scope `all`, or `partial` from one reply's n-th thinking
//! block). On resume it applies the record again: the thinking blocks of the replies
//! before the attachment are not sent (CLI 2.1.332; difftest variant
//! `insert-thinking_stripped`, made case `issue25_strip__*`). Pure functions over the
//! chain's records.

use serde_json::{json, Value};

use super::util::{block_type, blocks, msg_id, rec_type, FastMap};

/// message.id → index (within that reply's thinking blocks, counted across its records)
/// of the first thinking block that is not sent.
pub type StripPlan = FastMap<String, usize>;

fn is_thinking(b: &Value) -> bool {
    matches!(block_type(b), Some("thinking" | "redacted_thinking"))
}

/// Thinking blocks of one record.
fn thinking_count(r: &Value) -> usize {
    blocks(r).iter().filter(|b| is_thinking(b)).count()
}

/// The strip plan of a chain (records in conversation order). Empty when no record is a
/// `thinking_stripped` attachment. For each such attachment, every reply before it loses
/// its thinking from index 0, except that a `partial` one starts at the record holding
/// the reply's `from.thinkingIndex`-th thinking block: that reply keeps the blocks before
/// it, and replies before that record are untouched. The smallest index wins.
pub fn plan(records: &[Value]) -> StripPlan {
    let mut plan = StripPlan::default();
    for (g, r) in records.iter().enumerate() {
        let Some(a) = stripped(r) else { continue };
        let from = (a.get("scope").and_then(Value::as_str) != Some("all"))
            .then(|| a.get("from"))
            .flatten()
            .and_then(|f| {
                let id = f.get("messageId")?.as_str()?;
                let at = f.get("thinkingIndex")?.as_u64()? as usize;
                Some((id, at))
            });
        let start = from.and_then(|(id, at)| record_of(records, g, id, at));
        let c = start.unwrap_or(0);
        let mut before: FastMap<&str, usize> = FastMap::default();
        for r in &records[..c] {
            if let Some(id) = msg_id(r) {
                *before.entry(id).or_default() += thinking_count(r);
            }
        }
        for r in &records[c..g] {
            let Some(id) = msg_id(r) else { continue };
            let at = match (start, from) {
                (Some(_), Some((fid, at))) if fid == id => at,
                _ => before.get(id).copied().unwrap_or(0),
            };
            plan.entry(id.to_owned())
                .and_modify(|v| *v = (*v).min(at))
                .or_insert(at);
        }
    }
    plan
}

/// The payload of a `thinking_stripped` attachment record.
fn stripped(r: &Value) -> Option<&Value> {
    if rec_type(r) != Some("attachment") {
        return None;
    }
    let a = r.get("attachment")?;
    (a.get("type").and_then(Value::as_str) == Some("thinking_stripped")).then_some(a)
}

/// Index (before `end`) of the record of reply `id` that holds its `at`-th thinking block.
fn record_of(records: &[Value], end: usize, id: &str, at: usize) -> Option<usize> {
    let mut seen = 0;
    for (h, r) in records[..end].iter().enumerate() {
        if msg_id(r) == Some(id) {
            seen += thinking_count(r);
            if seen > at {
                return Some(h);
            }
        }
    }
    None
}

/// The blocks of one record of a reply in the plan, `seen` thinking blocks of the same
/// reply having come before it: from its `from - seen`-th thinking block on, thinking and
/// blank text are not sent; a record without that block is unchanged.
pub fn strip(blocks: Vec<Value>, from: usize, seen: usize) -> Vec<Value> {
    let n = from.saturating_sub(seen);
    let Some(cut) = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| is_thinking(b))
        .nth(n)
        .map(|(i, _)| i)
    else {
        return blocks;
    };
    blocks
        .into_iter()
        .enumerate()
        .filter(|(i, b)| (n > 0 && *i < cut) || !(is_thinking(b) || is_blank_text(b)))
        .map(|(_, b)| b)
        .collect()
}

fn is_blank_text(b: &Value) -> bool {
    block_type(b) == Some("text")
        && b.get("text")
            .and_then(Value::as_str)
            .is_none_or(|t| t.trim().is_empty())
}

/// What the CLI sends for a reply whose every block was stripped.
pub fn placeholder() -> Value {
    json!({"type": "text", "text": "[Thinking removed]", "citations": []})
}

/// Thinking blocks among `blocks` (to count a reply's earlier thinking).
pub fn count(blocks: &[Value]) -> usize {
    blocks.iter().filter(|b| is_thinking(b)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asst(id: &str, content: Value) -> Value {
        json!({"type": "assistant", "message": {"id": id, "content": content}})
    }

    #[test]
    fn scope_all_strips_every_earlier_reply() {
        let recs = vec![
            asst("m1", json!([{"type": "thinking", "thinking": "a"}])),
            asst("m1", json!([{"type": "text", "text": "x"}])),
            json!({"type": "attachment", "attachment": {"type": "thinking_stripped", "scope": "all"}}),
            asst("m2", json!([{"type": "thinking", "thinking": "b"}])),
        ];
        let p = plan(&recs);
        assert_eq!(p.get("m1"), Some(&0));
        assert_eq!(p.get("m2"), None);
        let b = strip(vec![json!({"type": "thinking", "thinking": "a"})], 0, 0);
        assert!(b.is_empty());
    }

    #[test]
    fn partial_keeps_the_blocks_before_the_index() {
        let recs = vec![
            asst("m0", json!([{"type": "thinking", "thinking": "z"}])),
            asst("m1", json!([{"type": "thinking", "thinking": "a"}])),
            asst("m1", json!([{"type": "thinking", "thinking": "b"}])),
            json!({"type": "attachment", "attachment": {"type": "thinking_stripped", "scope": "partial",
                "from": {"messageId": "m1", "thinkingIndex": 1}}}),
        ];
        let p = plan(&recs);
        assert_eq!(p.get("m0"), None);
        assert_eq!(p.get("m1"), Some(&1));
        let first = vec![json!({"type": "thinking", "thinking": "a"})];
        assert_eq!(strip(first.clone(), 1, 0), first);
        assert!(strip(vec![json!({"type": "thinking", "thinking": "b"})], 1, 1).is_empty());
    }
}
