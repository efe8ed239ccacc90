//! Which records form the conversation: R1 (chain from the newest leaf),
//! R2 (compact boundary + preserved segment), R3 (parallel tool-call
//! recovery) and R18 (`--resume-session-at`).
//!
//! This is a port of `build_chain` and `_recover_parallel` of the oracle's
//! `tool/apiview.py`. Differences from the spec (`claude-code-transcripts.md`
//! §5), where the oracle (CLI 2.1.332) wins:
//!
//! * Leaf (spec §5.5): the spec picks the newest *timestamp* among the leaf
//!   set (and, for some callers, walks up to the nearest user/assistant
//!   record). The oracle picks the newest terminal record in **file order**,
//!   of any chain type ([`pick_leaf`]).
//! * Preserved segment (spec §5.4): the spec relinks `head.parentUuid` to the
//!   anchor and prunes everything before the boundary, and gives up entirely
//!   when the tail→head walk breaks. The oracle splices the tail..head walk
//!   in after the anchor record; a broken walk keeps what it collected. The
//!   spec also zeroes the usage of preserved assistants, which is never sent.
//! * Legacy `progress` bridging (spec §5.3) is applied although the oracle
//!   has no such step: 2.1.332 writes no progress records, so it cannot
//!   change an oracle result, and older files (2.1.0–2.1.7x) need it.
//! * Snip removals (spec §5.4) and the >5 MiB dead-branch pruning (§5.2) are
//!   not modelled: no oracle case needs them.
//! * A missing parent (spec §5.6: "a missing parent ends the walk"): CLI 2.1.332
//!   does not stop there. When a record's `parentUuid` names no record, or one
//!   the walk has already passed (a cycle), it continues from the record of the
//!   same side written closest before it in time, if that is at most 5 s older
//!   ([`super::walk_fallback`]). Found by the differential tester's `drop` variants
//!   (docs/conformance.md).
//!
//! Records are `serde_json::Value` objects, one per JSONL line, in file order.
//! Everything here is pure and deterministic.

use serde_json::Value;

use super::util::{blocks, msg_id, rec_type, str_field, truthy, FastMap, FastSet};
use super::walk_fallback::{ChainRecords, WalkFallback};

/// Record types that take part in the parentUuid chain (R1).
pub const CHAIN_TYPES: [&str; 4] = ["user", "assistant", "attachment", "system"];

/// Why a chain could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The explicitly requested leaf (or `--resume-session-at` record) is not
    /// a chain record of the given records.
    #[error("leaf record {0} not found among the chain records")]
    LeafNotFound(String),
}

/// What the chain rules read of a record, looked up once: every field lookup in a record
/// hashes the key, and the rules read the same few fields many times per record.
pub(super) struct Facts<'a> {
    pub(super) kind: Option<&'a str>,
    /// A string `uuid`.
    uuid: Option<&'a str>,
    /// A non-empty `parentUuid`.
    parent: Option<&'a str>,
    /// Takes part in the chain: chain type, string `uuid`, not a sidechain.
    entry: bool,
    /// `message.id` of an assistant record.
    msg_id: Option<&'a str>,
    /// A user record with a `tool_result` block.
    tool_result_user: bool,
    /// A non-empty `sourceToolAssistantUUID`.
    source_tool: Option<&'a str>,
    pub(super) timestamp: &'a str,
}

impl<'a> Facts<'a> {
    fn of(r: &'a Value) -> Self {
        let kind = rec_type(r);
        let uuid = str_field(r, "uuid");
        let user = kind == Some("user");
        Facts {
            kind,
            uuid,
            parent: str_field(r, "parentUuid").filter(|p| !p.is_empty()),
            entry: matches!(kind, Some(t) if CHAIN_TYPES.contains(&t))
                && uuid.is_some()
                && !truthy(r.get("isSidechain")),
            msg_id: msg_id(r),
            tool_result_user: user && has_tool_result(r),
            source_tool: if user {
                str_field(r, "sourceToolAssistantUUID").filter(|s| !s.is_empty())
            } else {
                None
            },
            timestamp: str_field(r, "timestamp").unwrap_or(""),
        }
    }

    /// The uuid of a chain record (`""` for one without).
    fn id(&self) -> &'a str {
        self.uuid.unwrap_or("")
    }
}

/// Legacy `progress` bridging (spec §5.3 step 1): a `progress` record with a
/// string uuid is not a chain record; a record whose `parentUuid` names one
/// is re-parented to the progress record's own (already bridged) parent.
/// Only progress records *earlier* in the file are bridged, as in the CLI's
/// single pass. CLI 2.1.332 writes no progress records (no oracle case has
/// one); files of ~2.1.0–2.1.7x do, and without the bridge their chain
/// stops at the first hook-progress record.
struct Bridge<'a> {
    map: FastMap<&'a str, Option<&'a str>>,
}

impl<'a> Bridge<'a> {
    fn new() -> Self {
        Bridge {
            map: FastMap::default(),
        }
    }

    /// Feed one record in file order; returns false for progress records
    /// (which are then bridged and skipped).
    fn feed(&mut self, f: &Facts<'a>) -> bool {
        if f.kind == Some("progress") {
            if let Some(u) = f.uuid {
                let p = self.resolve(f.parent);
                self.map.insert(u, p);
                return false;
            }
        }
        true
    }

    fn resolve(&self, p: Option<&'a str>) -> Option<&'a str> {
        match p {
            Some(x) => match self.map.get(x) {
                Some(bridged) => *bridged,
                None => Some(x),
            },
            None => None,
        }
    }
}

/// Index of the chain records: uuid -> position (a later duplicate replaces the
/// value but keeps the first place in `order`, like a Python dict / the CLI's Map),
/// with each record's effective (progress-bridged) parent.
pub(super) struct Index<'a> {
    pub(super) facts: Vec<Facts<'a>>,
    order: Vec<&'a str>,
    by_uuid: FastMap<&'a str, usize>,
    parent: FastMap<&'a str, Option<&'a str>>,
}

impl<'a> Index<'a> {
    fn new(records: &'a [Value]) -> Self {
        let facts: Vec<Facts<'a>> = records.iter().map(Facts::of).collect();
        let mut order = Vec::new();
        let mut by_uuid = FastMap::default();
        let mut parent = FastMap::default();
        let mut bridge = Bridge::new();
        for (i, f) in facts.iter().enumerate() {
            if !bridge.feed(f) || !f.entry {
                continue;
            }
            let u = f.id();
            if by_uuid.insert(u, i).is_none() {
                order.push(u);
            }
            parent.insert(u, bridge.resolve(f.parent));
        }
        Index {
            facts,
            order,
            by_uuid,
            parent,
        }
    }

    fn get(&self, u: &str) -> Option<usize> {
        self.by_uuid.get(u).copied()
    }

    /// The uuid of the record at `i`.
    pub(super) fn uuid(&self, i: usize) -> &'a str {
        self.facts[i].id()
    }

    /// Effective parent of an indexed record.
    fn parent(&self, i: usize) -> Option<&'a str> {
        self.parent.get(self.uuid(i)).copied().flatten()
    }

    pub(super) fn values(&self) -> impl Iterator<Item = usize> + '_ {
        self.order.iter().filter_map(|u| self.get(u))
    }
}

impl<'a> ChainRecords<'a> for Index<'a> {
    fn positions(&self) -> Vec<usize> {
        self.values().collect()
    }

    fn kind(&self, i: usize) -> Option<&'a str> {
        self.facts[i].kind
    }

    fn timestamp(&self, i: usize) -> &'a str {
        self.facts[i].timestamp
    }

    fn uuid(&self, i: usize) -> &'a str {
        Index::uuid(self, i)
    }
}

/// R1 leaf choice: the newest record in file order (among chain records) that
/// no chain record names as its `parentUuid`. `None` when there are no chain
/// records (or every record is somebody's parent, i.e. a pure cycle).
pub fn pick_leaf(records: &[Value]) -> Option<String> {
    let mut bridge = Bridge::new();
    let mut entries: Vec<&str> = Vec::new();
    let mut parents: FastSet<&str> = FastSet::default();
    for f in records.iter().map(Facts::of) {
        if !bridge.feed(&f) || !f.entry {
            continue;
        }
        entries.push(f.id());
        if let Some(p) = bridge.resolve(f.parent) {
            parents.insert(p);
        }
    }
    entries
        .iter()
        .rev()
        .find(|u| !parents.contains(*u))
        .map(|u| (*u).to_owned())
}

/// Build the conversation chain exactly like the oracle's `build_chain`.
///
/// * `leaf == None`: the leaf is [`pick_leaf`] (R1); nothing is cut.
/// * `leaf == Some(uuid)`: `--resume-session-at` semantics (R18): the walk
///   starts at that record and everything R3 would add after it is cut.
///   An empty string counts as `None` (as in the oracle).
///
/// With an explicit leaf the result depends only on: the records of the
/// walked chain, the preserved-segment records, all assistant records that
/// share a `message.id` with a chain record, and the tool_result user records
/// whose `parentUuid` or `sourceToolAssistantUUID` is one of those assistants
/// (plus their relative file order, and the legacy `progress` records the
/// walk passes through, if any). A subset holding these gives the same
/// answer as the full file. To start at a leaf chosen by the caller *without*
/// the R18 cut, use [`build_chain_from`].
pub fn build_chain(records: &[Value], leaf: Option<&str>) -> Result<Vec<Value>, ChainError> {
    match leaf.filter(|l| !l.is_empty()) {
        Some(l) => build_chain_from(records, l, true),
        None => match pick_leaf(records) {
            Some(l) => build_chain_from(records, &l, false),
            None => Ok(Vec::new()),
        },
    }
}

/// Build the chain that ends at `leaf` (R1 walk, R2 splice, R3 recovery).
/// With `cut_after_leaf` (R18), records that R3 inserted after the leaf are
/// removed; without it this equals `build_chain(records, None)` when `leaf`
/// is the [`pick_leaf`] answer.
///
/// The walk is cycle-safe: a revisited uuid ends it.
pub fn build_chain_from(
    records: &[Value],
    leaf: &str,
    cut_after_leaf: bool,
) -> Result<Vec<Value>, ChainError> {
    Ok(chain_positions(records, leaf, cut_after_leaf)?
        .into_iter()
        .map(|i| records[i].clone())
        .collect())
}

/// [`build_chain_from`] as positions in `records`, so a caller that owns the records can
/// move them into the chain instead of copying them (a long chain is megabytes of JSON).
pub fn chain_positions(
    records: &[Value],
    leaf: &str,
    cut_after_leaf: bool,
) -> Result<Vec<usize>, ChainError> {
    let idx = Index::new(records);
    let Some(start) = idx.get(leaf) else {
        return Err(ChainError::LeafNotFound(leaf.to_owned()));
    };
    let mut seen: FastSet<&str> = FastSet::default();
    let mut chain: Vec<usize> = Vec::new();
    let mut fallback = WalkFallback::default();
    let mut cur = Some(start);
    while let Some(i) = cur {
        if !seen.insert(idx.uuid(i)) {
            break;
        }
        chain.push(i);
        cur = match idx.parent(i) {
            None => None,
            Some(p) => match idx.get(p) {
                Some(j) if !seen.contains(idx.uuid(j)) => Some(j),
                _ => fallback.next(records, &idx, i, &seen),
            },
        };
    }
    chain.reverse();

    // R2: preserved segment of the compact boundaries on the chain (the walk
    // stops at the newest boundary, so in practice there is one).
    let boundaries: Vec<usize> = chain
        .iter()
        .copied()
        .filter(|&i| {
            idx.facts[i].kind == Some("system")
                && str_field(&records[i], "subtype") == Some("compact_boundary")
        })
        .collect();
    for b in boundaries {
        let seg = records[b]
            .get("compactMetadata")
            .and_then(|m| m.get("preservedSegment"));
        let field = |k: &str| {
            seg.and_then(|s| s.get(k))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let (Some(head), Some(anchor), Some(tail)) =
            (field("headUuid"), field("anchorUuid"), field("tailUuid"))
        else {
            continue;
        };
        let Some(tail_rec) = idx.get(tail) else {
            continue;
        };
        let mut kept: Vec<usize> = Vec::new();
        let mut walked: FastSet<&str> = FastSet::default();
        let mut c2 = Some(tail_rec);
        while let Some(i) = c2 {
            if !walked.insert(idx.uuid(i)) {
                break; // cycle guard (the oracle has none)
            }
            kept.push(i);
            if idx.uuid(i) == head {
                break;
            }
            c2 = idx.parent(i).and_then(|p| idx.get(p));
        }
        kept.reverse();
        kept.retain(|&k| !seen.contains(idx.uuid(k)));
        for &k in &kept {
            seen.insert(idx.uuid(k));
        }
        if let Some(j) = chain.iter().position(|&x| idx.uuid(x) == anchor) {
            if !kept.is_empty() {
                chain.splice(j + 1..j + 1, kept);
            }
        }
    }

    let mut chain = recover_parallel(&idx, chain, &mut seen);
    if cut_after_leaf {
        if let Some(p) = chain.iter().position(|&i| idx.uuid(i) == leaf) {
            chain.truncate(p + 1);
        }
    }
    Ok(chain)
}

fn has_tool_result(r: &Value) -> bool {
    blocks(r)
        .iter()
        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
}

/// The first ancestor from `p` on that is not an attachment or system record: a tool
/// result chained below an attachment that sits between the records of one reply still
/// belongs to that reply (issue 25, made case `issue25_order__*`).
fn through_attachments<'a>(idx: &Index<'a>, mut p: Option<&'a str>) -> Option<&'a str> {
    for _ in 0..64 {
        let Some(i) = p.and_then(|u| idx.get(u)) else {
            return p;
        };
        if !matches!(idx.facts[i].kind, Some("attachment" | "system")) {
            return p;
        }
        p = idx.parent(i);
    }
    p
}

/// R3: put back the off-chain sibling records of every `message.id` on the
/// chain, and the tool results hanging off any of them, after the last
/// on-chain record of that message (siblings first, stably sorted by
/// timestamp string, then results in file order, B4).
fn recover_parallel<'a>(
    idx: &Index<'a>,
    chain: Vec<usize>,
    seen: &mut FastSet<&'a str>,
) -> Vec<usize> {
    let facts = &idx.facts;
    let mut anchor: FastMap<&str, &str> = FastMap::default();
    for &i in &chain {
        if let Some(m) = facts[i].msg_id {
            anchor.insert(m, idx.uuid(i));
        }
    }
    if anchor.is_empty() {
        return chain;
    }
    let mut siblings: FastMap<&str, Vec<usize>> = FastMap::default();
    let mut res_by_asst: FastMap<&str, Vec<usize>> = FastMap::default();
    for i in idx.values() {
        let f = &facts[i];
        if let Some(m) = f.msg_id {
            siblings.entry(m).or_default().push(i);
        } else if f.tool_result_user {
            let parent = through_attachments(idx, idx.parent(i));
            if let Some(p) = parent {
                res_by_asst.entry(p).or_default().push(i);
            }
            if let Some(src) = f.source_tool {
                if Some(src) != parent {
                    res_by_asst.entry(src).or_default().push(i);
                }
            }
        }
    }
    let mut inserts: FastMap<&str, Vec<usize>> = FastMap::default();
    // (file position, first on-chain record of its message) of records placed by file order
    let mut early: Vec<(usize, usize)> = Vec::new();
    let mut done: FastSet<&str> = FastSet::default();
    for &r in &chain {
        let Some(mid) = facts[r].msg_id else { continue };
        if !done.insert(mid) {
            continue;
        }
        let own = [r];
        let group: &[usize] = siblings.get(mid).map_or(&own, Vec::as_slice);
        let members: FastSet<&str> = group.iter().map(|&m| idx.uuid(m)).collect();
        let mut lost_sibs: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&m| !seen.contains(idx.uuid(m)))
            .collect();
        let mut lost_res: Vec<usize> = Vec::new();
        let mut got: FastSet<&str> = FastSet::default();
        for &m in group {
            for &res in res_by_asst
                .get(idx.uuid(m))
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                let ru = idx.uuid(res);
                if seen.contains(ru) || !got.insert(ru) {
                    continue;
                }
                if through_attachments(idx, idx.parent(res)).is_some_and(|p| members.contains(p)) {
                    lost_res.push(res);
                }
            }
        }
        if lost_sibs.is_empty() && lost_res.is_empty() {
            continue;
        }
        lost_sibs.sort_by(|&a, &b| facts[a].timestamp.cmp(facts[b].timestamp));
        // B4: results in file order, not timestamp order (CLIs before 2.1.332 wrote
        // parallel results whose timestamps can run against the file;
        // `oracle-made/parallel_file_order__claude-sonnet-4-5`).
        lost_res.sort_unstable();
        let mut add = lost_sibs;
        add.extend(lost_res);
        for &e in &add {
            seen.insert(idx.uuid(e));
        }
        let a = anchor.get(mid).copied().unwrap_or_else(|| idx.uuid(r));
        let anchor_pos = idx.get(a).unwrap_or(r);
        // Records written before the message's last on-chain record (a tool result
        // between the tool_use records of one reply) keep their file position among the
        // message's records, as the CLI does (issue 25); the others follow the anchor.
        let (before, after): (Vec<usize>, Vec<usize>) =
            add.into_iter().partition(|&e| e < anchor_pos);
        early.extend(before.into_iter().map(|e| (e, r)));
        inserts.insert(a, after);
    }
    if inserts.is_empty() && early.is_empty() {
        return chain;
    }
    let mut out = Vec::with_capacity(chain.len());
    for r in chain {
        out.push(r);
        if let Some(extra) = inserts.get(idx.uuid(r)) {
            out.extend(extra.iter().copied());
        }
    }
    early.sort_unstable();
    for (e, first) in early {
        let start = out.iter().position(|&x| x == first).unwrap_or(0);
        let at = out[start..]
            .iter()
            .position(|&x| x > e)
            .map_or(out.len(), |k| start + k);
        out.insert(at, e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn uuids(chain: &[Value]) -> Vec<&str> {
        chain
            .iter()
            .map(|r| r["uuid"].as_str().unwrap_or("?"))
            .collect()
    }

    fn user(u: &str, p: Option<&str>, text: &str) -> Value {
        json!({"type":"user","uuid":u,"parentUuid":p,"timestamp":format!("t-{u}"),
               "message":{"role":"user","content":text}})
    }
    fn asst(u: &str, p: Option<&str>, mid: &str, block: Value, ts: &str) -> Value {
        json!({"type":"assistant","uuid":u,"parentUuid":p,"timestamp":ts,
               "message":{"id":mid,"role":"assistant","content":[block]}})
    }
    fn result(u: &str, p: &str, tid: &str, ts: &str) -> Value {
        json!({"type":"user","uuid":u,"parentUuid":p,"timestamp":ts,"sourceToolAssistantUUID":p,
               "message":{"role":"user","content":[{"tool_use_id":tid,"type":"tool_result","content":"ok"}]}})
    }

    #[test]
    fn linear_chain_and_leaf() {
        let recs = vec![
            user("a", None, "hi"),
            json!({"type":"summary","leafUuid":"b"}),
            asst(
                "b",
                Some("a"),
                "m1",
                json!({"type":"text","text":"yo"}),
                "t2",
            ),
            json!({"type":"user","uuid":"side","parentUuid":"b","isSidechain":true,"message":{"content":"x"}}),
        ];
        assert_eq!(pick_leaf(&recs).as_deref(), Some("b"));
        assert_eq!(uuids(&build_chain(&recs, None).expect("chain")), ["a", "b"]);
    }

    #[test]
    fn branches_follow_newest_leaf_in_file_order() {
        let recs = vec![
            user("a", None, "hi"),
            user("b1", Some("a"), "branch 1"),
            user("b2", Some("a"), "branch 2"),
        ];
        assert_eq!(
            uuids(&build_chain(&recs, None).expect("chain")),
            ["a", "b2"]
        );
        assert_eq!(
            uuids(&build_chain(&recs, Some("b1")).expect("chain")),
            ["a", "b1"]
        );
    }

    #[test]
    fn missing_leaf_is_an_error() {
        let recs = vec![user("a", None, "hi")];
        assert_eq!(
            build_chain(&recs, Some("zz")),
            Err(ChainError::LeafNotFound("zz".into()))
        );
        assert!(build_chain(&[], None).expect("empty").is_empty());
    }

    #[test]
    fn cycle_is_safe() {
        let recs = vec![user("a", Some("b"), "x"), user("b", Some("a"), "y")];
        assert_eq!(pick_leaf(&recs), None);
        assert_eq!(
            uuids(&build_chain(&recs, Some("a")).expect("chain")),
            ["b", "a"]
        );
    }

    #[test]
    fn parallel_tool_calls_are_recovered() {
        // A1 -> A2 (same message id), R2 hangs off A2 (leaf), R1 off A1.
        let recs = vec![
            user("p", None, "go"),
            asst(
                "a1",
                Some("p"),
                "m",
                json!({"type":"tool_use","id":"t1","name":"X","input":{}}),
                "t1",
            ),
            asst(
                "a2",
                Some("a1"),
                "m",
                json!({"type":"tool_use","id":"t2","name":"X","input":{}}),
                "t2",
            ),
            result("r1", "a1", "t1", "t4"),
            result("r2", "a2", "t2", "t3"),
        ];
        let c = build_chain(&recs, None).expect("chain");
        assert_eq!(uuids(&c), ["p", "a1", "a2", "r1", "r2"]);
        // leaf r1 (file order newest terminal is r2); branch via a1: a2 and r2 come back
        let c = build_chain_from(&recs, "r1", false).expect("chain");
        assert_eq!(uuids(&c), ["p", "a1", "a2", "r2", "r1"]);
        // R18: cut after the requested record
        let c = build_chain(&recs, Some("a1")).expect("chain");
        assert_eq!(uuids(&c), ["p", "a1"]);
    }

    #[test]
    fn compaction_splices_preserved_segment() {
        let recs = vec![
            user("old", None, "old prompt"),
            asst(
                "keep",
                Some("old"),
                "m0",
                json!({"type":"text","text":"kept"}),
                "t1",
            ),
            json!({"type":"system","subtype":"compact_boundary","uuid":"cb","parentUuid":null,
                   "compactMetadata":{"preservedSegment":{"headUuid":"keep","anchorUuid":"sum","tailUuid":"keep"}}}),
            user("sum", Some("cb"), "summary"),
            user("next", Some("keep"), "after"),
        ];
        // `next` is a child of `keep` (the tail): leaf choice picks it, and the
        // walk goes next -> keep -> old; no boundary on that chain.
        let c = build_chain(&recs, None).expect("chain");
        assert_eq!(uuids(&c), ["old", "keep", "next"]);
        // R18 at the summary: the splice lands after the cut point.
        let c = build_chain(&recs, Some("sum")).expect("chain");
        assert_eq!(uuids(&c), ["cb", "sum"]);
        let c = build_chain_from(&recs, "sum", false).expect("chain");
        assert_eq!(uuids(&c), ["cb", "sum", "keep"]);
        let mut recs2 = recs.clone();
        recs2[4] = user("next", Some("sum"), "after");
        let c = build_chain(&recs2, None).expect("chain");
        assert_eq!(uuids(&c), ["cb", "sum", "keep", "next"]);
    }

    #[test]
    fn legacy_progress_records_are_bridged() {
        let recs = vec![
            user("a", None, "hi"),
            json!({"type":"progress","uuid":"p1","parentUuid":"a","data":{"type":"hook_progress"}}),
            json!({"type":"progress","uuid":"p2","parentUuid":"p1","data":{"type":"hook_progress"}}),
            asst(
                "b",
                Some("p2"),
                "m",
                json!({"type":"text","text":"yo"}),
                "t2",
            ),
        ];
        assert_eq!(pick_leaf(&recs).as_deref(), Some("b"));
        assert_eq!(uuids(&build_chain(&recs, None).expect("chain")), ["a", "b"]);
    }

    #[test]
    fn subset_gives_same_answer() {
        let recs = vec![
            user("p", None, "go"),
            user("unrelated", None, "other branch"),
            asst(
                "a1",
                Some("p"),
                "m",
                json!({"type":"tool_use","id":"t1","name":"X","input":{}}),
                "t1",
            ),
            asst(
                "a2",
                Some("a1"),
                "m",
                json!({"type":"tool_use","id":"t2","name":"X","input":{}}),
                "t2",
            ),
            result("r1", "a1", "t1", "t4"),
            result("r2", "a2", "t2", "t3"),
        ];
        let full = build_chain_from(&recs, "r2", false).expect("full");
        let subset: Vec<Value> = recs
            .iter()
            .filter(|r| r["uuid"] != "unrelated")
            .cloned()
            .collect();
        assert_eq!(
            full,
            build_chain_from(&subset, "r2", false).expect("subset")
        );
    }

    /// A record at second `sec` of a fixed minute, with a parsable timestamp.
    fn at(u: &str, p: Option<&str>, sec: u32) -> Value {
        json!({"type":"user","uuid":u,"parentUuid":p,
               "timestamp":format!("2026-01-01T00:00:{sec:02}.000Z"),
               "message":{"role":"user","content":u}})
    }

    #[test]
    fn a_missing_parent_continues_from_the_record_just_before_in_time() {
        // "c" names "gone", which is not in the file: the CLI goes on with the newest
        // record not after "c" (here "b", 2 s older), and from there by its parent.
        let recs = vec![
            at("a", None, 1),
            at("b", Some("a"), 3),
            at("c", Some("gone"), 5),
        ];
        assert_eq!(
            uuids(&build_chain(&recs, Some("c")).expect("chain")),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn a_missing_parent_ends_the_walk_when_the_gap_is_over_five_seconds() {
        let recs = vec![at("a", None, 1), at("c", Some("gone"), 7)];
        assert_eq!(uuids(&build_chain(&recs, Some("c")).expect("chain")), ["c"]);
        let recs = vec![at("a", None, 2), at("c", Some("gone"), 7)];
        assert_eq!(
            uuids(&build_chain(&recs, Some("c")).expect("chain")),
            ["a", "c"]
        );
    }

    #[test]
    fn the_fallback_skips_walked_records_snapshots_and_other_sides() {
        let mut snapshot = at("snap", None, 4);
        snapshot["type"] = json!("system");
        snapshot["subtype"] = json!("file_snapshot");
        let mut other_side = at("other", None, 4);
        other_side["isSidechain"] = json!(false);
        // Equal times: the first in file order wins ("b1" before "b2").
        let recs = vec![
            at("a", None, 1),
            at("b1", Some("a"), 3),
            at("b2", Some("a"), 3),
            snapshot,
            other_side,
            at("c", Some("gone"), 5),
            at("d", Some("c"), 5),
        ];
        assert_eq!(
            uuids(&build_chain(&recs, Some("d")).expect("chain")),
            ["a", "b1", "c", "d"]
        );
    }

    #[test]
    fn a_cycle_continues_by_time_like_a_missing_parent() {
        // "c" names "d", already walked: the walk goes on by time instead of stopping.
        let recs = vec![
            at("a", None, 1),
            at("c", Some("d"), 3),
            at("d", Some("c"), 4),
        ];
        assert_eq!(
            uuids(&build_chain(&recs, Some("d")).expect("chain")),
            ["a", "c", "d"]
        );
    }
}
