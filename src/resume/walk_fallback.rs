//! How the chain walk goes on past a missing parent, as CLI 2.1.332's loader does (see
//! [`super::chain`]): by timestamp, to the record written just before on the same side.

use serde_json::Value;

use super::util::{str_field, FastSet};

/// What the fallback reads of the chain's index of records (implemented by the chain's
/// index, so that this module does not depend on the chain).
pub(super) trait ChainRecords<'a> {
    /// The positions of the chain records, in map order.
    fn positions(&self) -> Vec<usize>;
    /// The record's `type`.
    fn kind(&self, i: usize) -> Option<&'a str>;
    /// The record's `timestamp`.
    fn timestamp(&self, i: usize) -> &'a str;
    /// The record's `uuid`.
    fn uuid(&self, i: usize) -> &'a str;
}

/// The CLI's way past a missing parent, for one side (a raw `isSidechain` value): the
/// chain record of that side with the newest timestamp not after the walking record's, not
/// yet walked and not a `system` `file_snapshot`; among equal times the first in map order.
/// It is taken only when at most [`TimeFallback::MAX_GAP_MS`] older.
struct TimeFallback<'a> {
    side: Option<&'a Value>,
    /// (epoch ms, position) of every candidate, by time, equal times in reverse map order.
    timed: Vec<(i64, usize)>,
    /// For each slot of `timed`: itself while it may be free, else a slot before it to look
    /// at instead ([`NONE`](Self::NONE) when there is none), so walked records are passed
    /// over once.
    earlier: Vec<usize>,
}

impl<'a> TimeFallback<'a> {
    const MAX_GAP_MS: i64 = 5_000;
    const NONE: usize = usize::MAX;

    fn new<'i>(records: &'a [Value], idx: &impl ChainRecords<'i>, side: Option<&'a Value>) -> Self {
        let mut timed: Vec<(i64, usize)> = idx
            .positions()
            .into_iter()
            .filter(|&i| records[i].get("isSidechain") == side)
            .filter(|&i| {
                !(idx.kind(i) == Some("system")
                    && str_field(&records[i], "subtype") == Some("file_snapshot"))
            })
            .filter_map(|i| Some((crate::time::parse_iso8601_ms(idx.timestamp(i))?, i)))
            .collect();
        timed.reverse();
        timed.sort_by_key(|&(ms, _)| ms);
        let earlier = (0..timed.len()).collect();
        TimeFallback {
            side,
            timed,
            earlier,
        }
    }

    /// Where the walk goes on from `from` (of this side), whose parent is missing or
    /// already walked.
    fn before<'i>(
        &mut self,
        idx: &impl ChainRecords<'i>,
        from: usize,
        seen: &FastSet<&str>,
    ) -> Option<usize> {
        let at = crate::time::parse_iso8601_ms(idx.timestamp(from))?;
        let mut slot = self
            .timed
            .partition_point(|&(ms, _)| ms <= at)
            .checked_sub(1)?;
        let mut passed = Vec::new();
        let found = loop {
            let next = self.earlier[slot];
            if next != slot {
                passed.push(slot);
                if next == Self::NONE {
                    break None;
                }
                slot = next;
            } else if seen.contains(idx.uuid(self.timed[slot].1)) {
                passed.push(slot);
                let Some(previous) = slot.checked_sub(1) else {
                    break None;
                };
                slot = previous;
            } else {
                break Some(slot);
            }
        };
        for p in passed {
            self.earlier[p] = found.unwrap_or(Self::NONE);
        }
        let (ms, i) = self.timed[found?];
        (at - ms <= Self::MAX_GAP_MS).then_some(i)
    }
}

/// The tables of [`TimeFallback`], one per side, each built the first time a walk on that
/// side meets a missing parent.
#[derive(Default)]
pub(super) struct WalkFallback<'a> {
    tables: Vec<TimeFallback<'a>>,
}

impl<'a> WalkFallback<'a> {
    /// The record the walk goes on with from `from`, whose parent is missing or walked.
    pub(super) fn next<'i>(
        &mut self,
        records: &'a [Value],
        idx: &impl ChainRecords<'i>,
        from: usize,
        seen: &FastSet<&str>,
    ) -> Option<usize> {
        let side = records[from].get("isSidechain");
        let n = match self.tables.iter().position(|t| t.side == side) {
            Some(n) => n,
            None => {
                self.tables.push(TimeFallback::new(records, idx, side));
                self.tables.len() - 1
            }
        };
        self.tables[n].before(idx, from, seen)
    }
}
