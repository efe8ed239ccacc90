//! `sessiondb statusline`: one line for Claude Code's `statusLine` command. Claude Code
//! sends a JSON object on stdin (`session_id`, `model.display_name`, …); the line names the
//! session's cost, today's and the open 5-hour block's. It reads only today's responses,
//! the last 10 hours' and the session's, through the time index.

use crate::cli_usage::StatuslineArgs;
use sessiondb::usage::report::{self, CostMode, Filter, Grouping, Options, BLOCK_MS};
use sessiondb::usage::{Scope, UsageRow};
use std::io::{IsTerminal, Read, Write};
use std::path::Path;

pub fn run(db: &Path, args: StatuslineArgs) -> anyhow::Result<()> {
    let status = read_status();
    let field = |path: &[&str]| {
        path.iter()
            .try_fold(&status, |v, k| v.get(k))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let pricing = super::stats::pricing(args.pricing.as_deref())?;
    let zone = crate::human::time_zone();
    let now = sessiondb::time::now_ms();
    let today = report::day_of(now, &zone);
    let store = super::open_db_read(db)?;
    let midnight = jiff::civil::Date::strptime("%Y-%m-%d", &today)?
        .to_zoned(zone.clone())?
        .timestamp()
        .as_millisecond();
    let recent = store.usage_rows(&Scope::Since(midnight.min(now - 2 * BLOCK_MS)))?;
    let options = |grouping| Options {
        grouping,
        mode: CostMode::Auto,
        pricing: &pricing,
        zone: zone.clone(),
        filter: Filter::default(),
        breakdown: false,
        now_ms: now,
    };
    // Folded from +0.0: a float `sum()` of nothing is -0.0, printed "$-0.00".
    let cost = |rows: &[UsageRow]| -> f64 {
        rows.iter()
            .map(|r| report::cost_of(r, CostMode::Auto, &pricing).0)
            .fold(0.0, |sum, c| sum + c)
    };
    let today_rows: Vec<UsageRow> = recent
        .iter()
        .filter(|r| r.timestamp_ms >= midnight)
        .cloned()
        .collect();
    let mut parts = Vec::new();
    if let Some(model) = field(&["model", "display_name"]) {
        parts.push(crate::human::safe_text(&model));
    }
    if let Some(session) = field(&["session_id"]) {
        let rows = store.usage_rows(&Scope::Session(session))?;
        parts.push(format!("${:.2} session", cost(&rows)));
    }
    parts.push(format!("${:.2} today", cost(&today_rows)));
    let blocks = report::report(&recent, &options(Grouping::Blocks));
    match blocks.last().and_then(|b| b.block.as_ref().map(|x| (b, x))) {
        Some((row, block)) if block.active => {
            let left = block.minutes_left.unwrap_or(0);
            parts.push(format!(
                "${:.2} block ({}h {:02}m left, ${:.2}/h)",
                row.totals.cost_usd,
                left / 60,
                left % 60,
                block.cost_per_hour.unwrap_or(0.0)
            ));
        }
        _ => parts.push("no open block".to_owned()),
    }
    let mut out = crate::output::stdout();
    writeln!(out, "{}", parts.join(" · "))?;
    out.flush()?;
    Ok(())
}

/// Claude Code's status JSON from stdin; `Null` when stdin is a terminal or holds none.
fn read_status() -> serde_json::Value {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return serde_json::Value::Null;
    }
    let mut text = String::new();
    if stdin
        .lock()
        .take(1 << 20)
        .read_to_string(&mut text)
        .is_err()
    {
        return serde_json::Value::Null;
    }
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}
