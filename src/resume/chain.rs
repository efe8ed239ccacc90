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
    /// An assistant record with a `tool_use` block.
    tool_use_asst: bool,
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
            tool_use_asst: kind == Some("assistant")
                && blocks(r)
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use")),
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

/// Whether no branch goes on below the attachment `u`: neither it nor the attachments
/// chained below it is the parent of another kind of record.
fn dead_end(
    u: &str,
    att_by_parent: &FastMap<&str, Vec<usize>>,
    continued: &FastSet<&str>,
    idx: &Index<'_>,
) -> bool {
    let mut stack = vec![u];
    let mut steps = 0usize;
    while let Some(x) = stack.pop() {
        steps += 1;
        if continued.contains(x) || steps > 10_000 {
            return false;
        }
        for &c in att_by_parent.get(x).map(Vec::as_slice).unwrap_or(&[]) {
            stack.push(idx.uuid(c));
        }
    }
    true
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
    let mut att_by_parent: FastMap<&str, Vec<usize>> = FastMap::default();
    // records that some non-attachment record names as its parent (a branch goes on there)
    let mut continued: FastSet<&str> = FastSet::default();
    for i in idx.values() {
        let f = &facts[i];
        if f.kind != Some("attachment") {
            if let Some(p) = idx.parent(i) {
                continued.insert(p);
            }
        }
        if let Some(m) = f.msg_id {
            siblings.entry(m).or_default().push(i);
        } else if f.kind == Some("attachment") {
            if let Some(p) = idx.parent(i) {
                att_by_parent.entry(p).or_default().push(i);
            }
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
        // Attachments hanging off the reply's records or its recovered results (through
        // progress records) came with them: the CLI sends them in file order among the
        // results (difftest `insert-*` variants of `parallel_file_order__*` and
        // `extagents__5c295fc41a54_0_full__own`).
        // Only dead ends: an attachment below which a branch goes on (a rewound turn,
        // `cases:rewind__step-05`) belongs to that branch and is not sent.
        // The CLI follows them only for a reply that calls a tool (one of its records has a
        // `tool_use` block): below a reply of text alone nothing is recovered (difftest
        // `insert-plan_file_reference` of `happycli__resumed-session__own`).
        let calls_tool = group.iter().any(|&m| facts[m].tool_use_asst);
        let mut frontier: Vec<&str> = if calls_tool {
            group.iter().map(|&m| idx.uuid(m)).collect()
        } else {
            Vec::new()
        };
        if calls_tool {
            frontier.extend(lost_res.iter().map(|&x| idx.uuid(x)));
        }
        while let Some(u) = frontier.pop() {
            for &at in att_by_parent.get(u).map(Vec::as_slice).unwrap_or(&[]) {
                let au = idx.uuid(at);
                if seen.contains(au)
                    || got.contains(au)
                    || !dead_end(au, &att_by_parent, &continued, idx)
                {
                    continue;
                }
                got.insert(au);
                lost_res.push(at);
                frontier.push(au);
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
        for &e in lost_sibs.iter().chain(&lost_res) {
            seen.insert(idx.uuid(e));
        }
        let a = anchor.get(mid).copied().unwrap_or_else(|| idx.uuid(r));
        let anchor_pos = idx.get(a).unwrap_or(r);
        // Results written before the message's last on-chain record (a tool result
        // between the tool_use records of one reply) keep their file position among the
        // message's records, as the CLI does (issue 25); lost sibling records of the reply
        // itself and the other results follow the anchor (difftest `drop` of
        // `episodic__long-conversation__own`: a sibling written before the anchor goes after it).
        let (before, after): (Vec<usize>, Vec<usize>) =
            lost_res.into_iter().partition(|&e| e < anchor_pos);
        early.extend(before.into_iter().map(|e| (e, r)));
        let mut add = lost_sibs;
        add.extend(after);
        inserts.insert(a, add);
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
#[path = "chain_tests.rs"]
mod tests;
