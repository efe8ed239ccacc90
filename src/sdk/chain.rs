//! The SDK's chains (pure): the leaf it picks, the walk to the root, the parallel tool calls
//! put back, the sub-agents' chains, and its paging.

use super::Entry;
use crate::resume::util::{FastMap, FastSet};

/// uuid → entry (a later duplicate wins), with first-seen order kept, like a Python dict.
struct Index<'a> {
    order: Vec<&'a str>,
    by_uuid: FastMap<&'a str, &'a Entry>,
}

impl<'a> Index<'a> {
    fn new(entries: &'a [Entry]) -> Self {
        let mut order = Vec::new();
        let mut by_uuid = FastMap::default();
        for e in entries {
            if by_uuid.insert(e.uuid.as_str(), e).is_none() {
                order.push(e.uuid.as_str());
            }
        }
        Index { order, by_uuid }
    }

    fn get(&self, uuid: Option<&str>) -> Option<&'a Entry> {
        uuid.and_then(|u| self.by_uuid.get(u).copied())
    }

    fn values(&self) -> impl Iterator<Item = &'a Entry> + '_ {
        self.order
            .iter()
            .filter_map(|u| self.by_uuid.get(u).copied())
    }
}

/// The SDK's main-session chain, root to leaf, parallel tool calls recovered.
pub fn conversation_chain(entries: &[Entry]) -> Vec<&Entry> {
    let Some((index, chain, mut seen)) = walked(entries) else {
        return Vec::new();
    };
    recover_parallel(&index, chain, &mut seen, None)
}

/// The leaves the SDK chooses among: from every record no entry names as `parentUuid`,
/// the nearest user/assistant record up its parents. They depend only on each entry's
/// `type`, `uuid` and `parentUuid`.
fn leaf_candidates<'a>(entries: &'a [Entry], index: &Index<'a>) -> Vec<&'a Entry> {
    let parents: FastSet<&str> = entries.iter().filter_map(|e| e.parent.as_deref()).collect();
    let mut leaves: Vec<&Entry> = Vec::new();
    for terminal in entries
        .iter()
        .filter(|e| !parents.contains(e.uuid.as_str()))
    {
        let mut seen = FastSet::default();
        let mut cur = Some(terminal);
        while let Some(e) = cur {
            if !seen.insert(e.uuid.as_str()) {
                break;
            }
            if e.kind == "user" || e.kind == "assistant" {
                leaves.push(e);
                break;
            }
            cur = index.get(e.parent.as_deref());
        }
    }
    leaves
}

/// The entries' index, the chain from the chosen leaf to the root (root first), and the
/// uuids on it; `None` when there is no leaf.
fn walked(entries: &[Entry]) -> Option<(Index<'_>, Vec<&Entry>, FastSet<&str>)> {
    if entries.is_empty() {
        return None;
    }
    let index = Index::new(entries);
    let position: FastMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.uuid.as_str(), i))
        .collect();
    let leaves = leaf_candidates(entries, &index);
    let best = |candidates: &[&'_ Entry]| -> Option<usize> {
        let mut best: Option<(usize, i64)> = None;
        for (i, c) in candidates.iter().enumerate() {
            let pos = position.get(c.uuid.as_str()).map_or(-1, |p| *p as i64);
            if best.is_none_or(|(_, b)| pos > b) {
                best = Some((i, pos));
            }
        }
        best.map(|(i, _)| i)
    };
    let main: Vec<&Entry> = leaves
        .iter()
        .copied()
        .filter(|l| !l.sidechain && !l.team && !l.meta)
        .collect();
    let leaf = if main.is_empty() {
        best(&leaves).map(|i| leaves[i])
    } else {
        best(&main).map(|i| main[i])
    }?;
    let mut seen = FastSet::default();
    let chain = walk_to_root(&index, leaf, &mut seen);
    Some((index, chain, seen))
}

/// The leaf candidates of `entries` (see [`leaf_candidates`]).
pub(super) fn leaves_of(entries: &[Entry]) -> Vec<&Entry> {
    leaf_candidates(entries, &Index::new(entries))
}

/// The chain from the chosen leaf to the root, before the parallel tool calls are put
/// back. Besides each entry's `type`, `uuid` and `parentUuid` it reads only the flags of
/// the [`leaf_candidates`].
pub(super) fn walked_chain(entries: &[Entry]) -> Vec<&Entry> {
    walked(entries)
        .map(|(_, chain, _)| chain)
        .unwrap_or_default()
}

/// [`visible_chain`] of entries of which some were not read from their lines (they hold
/// only `type`, `uuid` and `parentUuid`, and read as records without a tool result), when
/// it is the chain of the entries as read: every assistant record read, and every user
/// record whose `parentUuid` or `sourceToolAssistantUUID` names an assistant record of a
/// response on the chain. `None` when a record not read could still change it: a tool
/// call of such a response that no result on the chain or placed with the response
/// answers, which a result elsewhere in the file could (through its `tool_use_id`).
pub(super) fn audited_visible_chain(entries: &[Entry]) -> Option<Vec<&Entry>> {
    let Some((index, chain, mut seen)) = walked(entries) else {
        return Some(Vec::new());
    };
    let mut complete = true;
    let chain = recover_parallel(&index, chain, &mut seen, Some(&mut complete));
    complete.then(|| chain.into_iter().filter(|e| e.is_visible()).collect())
}

/// Puts back the records of a parallel tool-call response that the walk left off the
/// chain, and their results, right after the response's last record on the chain
/// (SDK quirk 16).
///
/// With `audit`, sets it to false when a response on the chain has a call that neither a
/// result on the chain nor one placed with the response answers (see
/// [`audited_visible_chain`]).
fn recover_parallel<'a>(
    index: &Index<'a>,
    chain: Vec<&'a Entry>,
    seen: &mut FastSet<&'a str>,
    mut audit: Option<&mut bool>,
) -> Vec<&'a Entry> {
    let assistants: Vec<&Entry> = chain
        .iter()
        .copied()
        .filter(|e| e.kind == "assistant")
        .collect();
    let mut anchor: FastMap<&str, &str> = FastMap::default();
    for e in &assistants {
        if let Some(m) = e.message_id.as_deref() {
            anchor.insert(m, e.uuid.as_str());
        }
    }
    if anchor.is_empty() {
        return chain;
    }
    let mut siblings: FastMap<&str, Vec<&Entry>> = FastMap::default();
    // A call id claimed by two different responses maps to None: never used.
    let mut call_owner: FastMap<&str, Option<&Entry>> = FastMap::default();
    let mut results: Vec<&Entry> = Vec::new();
    for e in index.values() {
        if let Some(m) = e.message_id.as_deref() {
            siblings.entry(m).or_default().push(e);
            for call in &e.tool_use_ids {
                match call_owner.get(call.as_str()) {
                    None => {
                        call_owner.insert(call, Some(e));
                    }
                    Some(owner) => {
                        let same = owner.is_some_and(|o| o.message_id.as_deref() == Some(m));
                        call_owner.insert(call, if same { Some(e) } else { None });
                    }
                }
            }
        } else if e.is_tool_result() {
            results.push(e);
        }
    }
    let mut by_assistant: FastMap<&str, Vec<&Entry>> = FastMap::default();
    for r in &results {
        if let Some(p) = r.parent.as_deref() {
            by_assistant.entry(p).or_default().push(r);
        }
        if let Some(src) = r.source_tool.as_deref() {
            if index.get(Some(src)).is_some_and(|s| r.same_writer(s)) {
                by_assistant.entry(src).or_default().push(r);
            }
        }
        for call in &r.tool_result_ids {
            if let Some(Some(owner)) = call_owner.get(call.as_str()) {
                if r.same_writer(owner) {
                    by_assistant.entry(owner.uuid.as_str()).or_default().push(r);
                }
            }
        }
    }
    // The calls each uuid owns, for the audit.
    let mut calls_of: FastMap<&str, Vec<&str>> = FastMap::default();
    if audit.is_some() {
        for (call, owner) in &call_owner {
            if let Some(owner) = owner {
                calls_of.entry(owner.uuid.as_str()).or_default().push(call);
            }
        }
    }
    let mut answered_on_chain: Option<FastSet<&str>> = None;
    let position: FastMap<&str, usize> = index
        .order
        .iter()
        .enumerate()
        .map(|(i, u)| (*u, i))
        .collect();
    let mut processed: FastSet<&str> = FastSet::default();
    let mut inserts: FastMap<&str, Vec<&Entry>> = FastMap::default();
    for a in &assistants {
        let Some(mid) = a.message_id.as_deref() else {
            continue;
        };
        if !processed.insert(mid) {
            continue;
        }
        let group: Vec<&Entry> = siblings.get(mid).cloned().unwrap_or_else(|| vec![*a]);
        let members: FastSet<&str> = group.iter().map(|m| m.uuid.as_str()).collect();
        let mut lost_siblings: Vec<&Entry> = group
            .iter()
            .copied()
            .filter(|m| !seen.contains(m.uuid.as_str()))
            .collect();
        let mut lost_results: Vec<&Entry> = Vec::new();
        let mut strays: Vec<&Entry> = Vec::new();
        let mut collected: FastSet<&str> = FastSet::default();
        for m in &group {
            for r in by_assistant
                .get(m.uuid.as_str())
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                let u = r.uuid.as_str();
                if seen.contains(u) || !collected.insert(u) {
                    continue;
                }
                if r.parent.as_deref().is_some_and(|p| members.contains(p)) {
                    lost_results.push(r);
                } else {
                    strays.push(r);
                }
            }
        }
        if let Some(complete) = audit.as_deref_mut().filter(|c| **c) {
            let on_chain = answered_on_chain.get_or_insert_with(|| {
                chain
                    .iter()
                    .flat_map(|e| e.tool_result_ids.iter().map(String::as_str))
                    .collect()
            });
            let answered = |call: &str| {
                on_chain.contains(call)
                    || lost_results
                        .iter()
                        .any(|r| r.tool_result_ids.iter().any(|id| id == call))
            };
            // A stray opens a call whose owner has a member's uuid (the owner may be
            // another record with that uuid).
            *complete = members.iter().all(|m| {
                calls_of
                    .get(m)
                    .is_none_or(|calls| calls.iter().all(|call| answered(call)))
            });
        }
        if !strays.is_empty() {
            let on_chain = answered_on_chain.get_or_insert_with(|| {
                chain
                    .iter()
                    .flat_map(|e| e.tool_result_ids.iter().map(String::as_str))
                    .collect()
            });
            let mut answered: FastSet<&str> = on_chain.clone();
            for r in &lost_results {
                answered.extend(r.tool_result_ids.iter().map(String::as_str));
            }
            strays.sort_by_key(|e| position.get(e.uuid.as_str()).copied().unwrap_or(usize::MAX));
            for r in strays {
                let opens = r.tool_result_ids.iter().any(|call| {
                    !answered.contains(call.as_str())
                        && matches!(call_owner.get(call.as_str()),
                            Some(Some(owner)) if members.contains(owner.uuid.as_str()))
                });
                if !opens {
                    continue;
                }
                answered.extend(r.tool_result_ids.iter().map(String::as_str));
                lost_results.push(r);
            }
        }
        if lost_siblings.is_empty() && lost_results.is_empty() {
            continue;
        }
        lost_siblings.sort_by(|x, y| x.timestamp.cmp(&y.timestamp));
        lost_results.sort_by(|x, y| x.timestamp.cmp(&y.timestamp));
        lost_siblings.extend(lost_results);
        for e in &lost_siblings {
            seen.insert(e.uuid.as_str());
        }
        if let Some(at) = anchor.get(mid) {
            inserts.insert(at, lost_siblings);
        }
    }
    if inserts.is_empty() {
        return chain;
    }
    let mut out = Vec::with_capacity(chain.len());
    for e in chain {
        out.push(e);
        if let Some(extra) = inserts.get(e.uuid.as_str()) {
            out.extend(extra.iter().copied());
        }
    }
    out
}

/// The records `get_session_messages` returns, in order, before paging.
pub fn visible_chain(entries: &[Entry]) -> Vec<&Entry> {
    conversation_chain(entries)
        .into_iter()
        .filter(|e| e.is_visible())
        .collect()
}

/// The SDK's sub-agent chain: the last user/assistant record is the leaf.
pub fn subagent_chain(entries: &[Entry]) -> Vec<&Entry> {
    let index = Index::new(entries);
    let Some(leaf) = entries
        .iter()
        .rev()
        .find(|e| e.kind == "user" || e.kind == "assistant")
    else {
        return Vec::new();
    };
    walk_to_root(&index, leaf, &mut FastSet::default())
}

/// The records from `leaf` up its parents to the root (or to a record seen before: a
/// cycle ends the walk), root first; `seen` gets their uuids.
fn walk_to_root<'a>(
    index: &Index<'a>,
    leaf: &'a Entry,
    seen: &mut FastSet<&'a str>,
) -> Vec<&'a Entry> {
    let mut chain = Vec::new();
    let mut cur = Some(leaf);
    while let Some(e) = cur {
        if !seen.insert(e.uuid.as_str()) {
            break;
        }
        chain.push(e);
        cur = index.get(e.parent.as_deref());
    }
    chain.reverse();
    chain
}

/// The SDK's paging: with `limit > 0` the Python slice `[offset : offset + limit]` (a
/// negative offset counts from the end); otherwise `offset` counts only when > 0.
pub fn page<T>(items: Vec<T>, limit: Option<i64>, offset: i64) -> Vec<T> {
    let len = items.len() as i64;
    let clamp = |i: i64| -> usize {
        let i = if i < 0 {
            i.saturating_add(len).max(0)
        } else {
            i.min(len)
        };
        i as usize
    };
    // A client's offset and limit may be anything up to i64's bounds: saturate, never wrap.
    let (start, stop) = match limit {
        Some(l) if l > 0 => (clamp(offset), clamp(offset.saturating_add(l))),
        _ if offset > 0 => (clamp(offset), len as usize),
        _ => return items,
    };
    if start >= stop {
        return Vec::new();
    }
    items.into_iter().skip(start).take(stop - start).collect()
}
