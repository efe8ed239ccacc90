//! Where a conversation may be cut into pieces that are rendered apart, each by its own
//! [`Renderer`], with the very bytes one renderer over the whole conversation writes (issue
//! 28, item 8: the streamed session page holds a piece, not the session).
//!
//! The renderer ties records together: a tool call and the first result that answers it
//! (drawn beside the call, its record then skipped), the records of one API message (its
//! usage counted at the last), and the assistant records and bookkeeping runs between two
//! other records (one card, one run). A piece may therefore start at record `k` only when
//! no call, result or message spans records on both sides of `k`, `k` is not a result
//! drawn beside its call, and `k` is shown on its own ([`Kind::Other`]): there the whole
//! conversation's renderer closes its card and run too.
//!
//! [`Cuts`] learns the ties from the records one at a time (a first reading of the
//! transcript, a page of rows at a time), keeping only ids and positions.

use super::plan::{kind, links, Kind, Link};
use super::Rec;
use std::collections::HashMap;

/// The ties of a conversation, learnt a record at a time ([`Cuts::see`]).
#[derive(Default)]
pub(in crate::serve::web) struct Cuts {
    /// Records seen.
    seen: usize,
    /// Whether each record is shown on its own.
    alone: Vec<bool>,
    /// Tool call id → the first and last record that makes it.
    calls: HashMap<String, (usize, usize)>,
    /// Tool call id → the first record that answers it.
    results: HashMap<String, usize>,
    /// API message id → its first and last record.
    messages: HashMap<String, (usize, usize)>,
}

impl Cuts {
    /// Learns the next record's ties.
    pub(in crate::serve::web) fn see(&mut self, rec: &Rec) {
        let i = self.seen;
        self.seen += 1;
        self.alone.push(matches!(kind(rec), Kind::Other));
        let Some(v) = &rec.value else { return };
        let span = |map: &mut HashMap<String, (usize, usize)>, id: &str| match map.get_mut(id) {
            Some((_, last)) => *last = i,
            None => {
                map.insert(id.to_owned(), (i, i));
            }
        };
        links(v, |link| match link {
            Link::Message(id) => span(&mut self.messages, id),
            Link::Call(id) => span(&mut self.calls, id),
            Link::Result(id, _) => {
                self.results.entry(id.to_owned()).or_insert(i);
            }
        });
    }

    /// Where pieces may start: `starts[k]` when a piece may begin at record `k`.
    pub(in crate::serve::web) fn starts(self) -> Vec<bool> {
        let n = self.seen;
        // ties[k] > 0: something spans records k - 1 and k.
        let mut ties = vec![0_i64; n + 1];
        let mut tie = |first: usize, last: usize| {
            if first < last {
                ties[first + 1] += 1;
                ties[last + 1] -= 1;
            }
        };
        for &(first, last) in self.messages.values() {
            tie(first, last);
        }
        let mut starts = self.alone;
        for (id, &(first, last)) in &self.calls {
            if let Some(&answer) = self.results.get(id) {
                tie(first.min(answer), last.max(answer));
                // A result drawn beside its call is not shown where it stands.
                starts[answer] = false;
            }
        }
        let mut open = 0;
        for (k, start) in starts.iter_mut().enumerate() {
            open += ties[k];
            *start = *start && open == 0;
        }
        starts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(v: serde_json::Value) -> Rec {
        Rec {
            value: Some(v),
            raw: None,
            ordinal: None,
            synthetic: false,
            damaged: false,
        }
    }

    #[test]
    fn pieces_start_at_records_shown_alone_that_nothing_spans() {
        let records = [
            json!({"type": "user", "message": {"content": "hi"}}),
            json!({"type": "assistant", "message": {"id": "m1", "content": [{"type": "tool_use", "id": "t1"}]}}),
            json!({"type": "user", "message": {"content": "typed while it ran"}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1"}]}}),
            json!({"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "done"}]}}),
            json!({"type": "user", "message": {"content": "next"}}),
            json!({"type": "progress"}),
            json!({"type": "user", "message": {"content": "last"}}),
        ];
        let mut cuts = Cuts::default();
        for r in records {
            cuts.see(&rec(r));
        }
        assert_eq!(
            cuts.starts(),
            [true, false, false, false, false, true, false, true]
        );
    }
}
