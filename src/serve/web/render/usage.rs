//! Token usage of a card and of a session, and the short time a record header shows.

use super::draw::thousands;
use crate::serve::web::html::Html;
use serde_json::Value;

/// `2026-01-28T23:05:14.408Z` → `2026-01-28 23:05:14`.
pub(super) fn short_time(ts: &str) -> String {
    let t = ts.replacen('T', " ", 1);
    match t.find('.') {
        Some(dot) if dot > 10 => t[..dot].to_owned(),
        _ => t.trim_end_matches('Z').to_owned(),
    }
}

/// Token usage of a turn (or totals).
#[derive(Default, Clone, Copy)]
pub(crate) struct Usage {
    pub(super) input: i64,
    output: i64,
    cache_read: i64,
    cache_write: i64,
    pub(crate) turns: i64,
}

impl Usage {
    pub(super) fn of(u: &Value) -> Usage {
        let n = |k: &str| u.get(k).and_then(Value::as_i64).unwrap_or(0);
        Usage {
            input: n("input_tokens"),
            output: n("output_tokens"),
            cache_read: n("cache_read_input_tokens"),
            cache_write: n("cache_creation_input_tokens"),
            turns: 1,
        }
    }

    pub(crate) fn add(&mut self, u: &Usage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_write += u.cache_write;
        self.turns += u.turns;
    }

    pub(crate) fn write(&self, h: &mut Html) {
        h.raw("in ")
            .text(&thousands(self.input))
            .raw(" · out ")
            .text(&thousands(self.output));
        if self.cache_read > 0 || self.cache_write > 0 {
            h.raw(" · cache ")
                .text(&thousands(self.cache_read))
                .raw(" / ")
                .text(&thousands(self.cache_write));
        }
    }
}
