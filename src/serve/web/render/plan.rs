//! How the records are grouped on the page, before anything is drawn: what each record is
//! ([`Kind`]), what ties records together ([`Link`]: a streamed message's records, a tool
//! call and its result), and the plan of cards, folded runs and single records ([`Item`]).
//! Apart from the drawing because the grouping is a rule of its own: [`super::cuts`] applies
//! the same rules to keep the records they tie in one piece of a long conversation.

use super::{s, Rec, Renderer};
use serde_json::Value;

impl Renderer<'_> {
    /// What a record is on the page.
    pub(super) fn kind(&self, i: usize) -> Kind {
        kind(&self.records[i])
    }

    /// The records grouped as they are shown: consecutive assistant records (one API
    /// message streamed as several records, or several messages between two prompts, their
    /// results beside their calls) as one card; runs of bookkeeping and system records as
    /// one folded line, inside the card when they fall between two of its records.
    pub(super) fn plan(&self) -> Vec<Item> {
        fn flush(items: &mut Vec<Item>, pending: &mut Vec<usize>) {
            match pending.len() {
                0 => {}
                1 => items.push(Item::One(pending[0])),
                _ => items.push(Item::Run(std::mem::take(pending))),
            }
            pending.clear();
        }
        let mut items = Vec::new();
        let mut card: Option<Vec<Part>> = None;
        let mut pending = Vec::new();
        for i in 0..self.records.len() {
            if self.absorbed.contains(&i) {
                continue;
            }
            match self.kind(i) {
                Kind::Meta => pending.push(i),
                Kind::Turn => match card.as_mut() {
                    Some(parts) => {
                        if !pending.is_empty() {
                            parts.push(Part::Run(std::mem::take(&mut pending)));
                        }
                        parts.push(Part::Rec(i));
                    }
                    None => {
                        flush(&mut items, &mut pending);
                        card = Some(vec![Part::Rec(i)]);
                    }
                },
                Kind::Other => {
                    if let Some(parts) = card.take() {
                        items.push(Item::Card(parts));
                    }
                    flush(&mut items, &mut pending);
                    items.push(Item::One(i));
                }
            }
        }
        if let Some(parts) = card.take() {
            items.push(Item::Card(parts));
        }
        flush(&mut items, &mut pending);
        items
    }
}

/// A record's place on the page (see [`Renderer::plan`]).
pub(super) enum Kind {
    /// An assistant record that joins the card before it.
    Turn,
    /// Bookkeeping or a system record: folded into a run.
    Meta,
    /// Anything else, shown on its own.
    Other,
}

/// What a record is on the page (see [`Renderer::plan`]).
pub(super) fn kind(rec: &Rec) -> Kind {
    let Some(v) = &rec.value else {
        return Kind::Other;
    };
    let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
    match s(v, "type").unwrap_or("") {
        "assistant" if !flag("isApiErrorMessage") && !rec.synthetic => Kind::Turn,
        "user" | "assistant" => Kind::Other,
        "system"
            if matches!(
                s(v, "subtype"),
                Some("compact_boundary" | "microcompact_boundary" | "api_error")
            ) =>
        {
            Kind::Other
        }
        _ => Kind::Meta,
    }
}

/// What ties a record to others on the page.
pub(super) enum Link<'v> {
    /// Its API message's id (one message may be streamed as several records).
    Message(&'v str),
    /// A tool call it makes (its id).
    Call(&'v str),
    /// A tool result it carries: the call's id, and the block.
    Result(&'v str, &'v Value),
}

/// Each [`Link`] of a record, in order: its message id, then its content's blocks. The
/// renderer pairs records by them, and [`super::cuts`] keeps the records they tie in one piece.
pub(super) fn links<'v>(v: &'v Value, mut each: impl FnMut(Link<'v>)) {
    if let Some(id) = v.pointer("/message/id").and_then(Value::as_str) {
        each(Link::Message(id));
    }
    if let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) {
        for b in blocks {
            match s(b, "type") {
                Some("tool_use") => {
                    if let Some(id) = s(b, "id") {
                        each(Link::Call(id));
                    }
                }
                Some("tool_result") => {
                    if let Some(id) = s(b, "tool_use_id") {
                        each(Link::Result(id, b));
                    }
                }
                _ => {}
            }
        }
    }
}

/// One thing the conversation shows.
pub(super) enum Item {
    Card(Vec<Part>),
    Run(Vec<usize>),
    One(usize),
}

/// A piece of a card: a record, or a run of bookkeeping between two of its records.
pub(super) enum Part {
    Rec(usize),
    Run(Vec<usize>),
}
