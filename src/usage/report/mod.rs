//! Responses → the rows of a report: grouped by day, ISO week, month, session, project,
//! model or 5-hour block, priced, filtered. Pure: the same rows give the same report on
//! either engine.

use super::pricing::{Pricing, Tokens};
use super::UsageRow;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a report groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// `YYYY-MM-DD`.
    Daily,
    /// `YYYY-Www` (ISO 8601 week).
    Weekly,
    /// `YYYY-MM`.
    Monthly,
    /// The session id.
    Session,
    /// The project folder name.
    Project,
    /// The model.
    Model,
    /// 5-hour windows, by their start.
    Blocks,
}

/// Where a cost comes from (ccusage's `--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostMode {
    /// The record's `costUSD` where it has one, else computed.
    Auto,
    /// Always computed from the tokens.
    Calculate,
    /// The record's `costUSD` only (0 where it has none).
    Display,
}

/// Which responses a report counts.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// First day counted, `YYYY-MM-DD` in the report's time zone.
    pub since: Option<String>,
    /// Last day counted, inclusive.
    pub until: Option<String>,
    /// A substring of the project folder name or cwd.
    pub project: Option<String>,
    /// The git branch.
    pub branch: Option<String>,
    /// The session's tag.
    pub tag: Option<String>,
    /// The machine (team store).
    pub host: Option<String>,
}

/// Token counts and cost of a group.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Uncached input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cache writes, both lifetimes.
    pub cache_creation_tokens: i64,
    /// Cache reads.
    pub cache_read_tokens: i64,
    /// USD.
    pub cost_usd: f64,
}

impl Totals {
    fn add(&mut self, t: &Tokens, cost: f64) {
        self.input_tokens += t.input;
        self.output_tokens += t.output;
        self.cache_creation_tokens += t.cache_creation;
        self.cache_read_tokens += t.cache_read;
        self.cost_usd += cost;
    }

    /// All tokens together.
    pub fn tokens(&self) -> i64 {
        self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens
    }
}

/// One model's part of a row (`--breakdown`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRow {
    /// The model.
    pub model: String,
    /// Its counts and cost.
    #[serde(flatten)]
    pub totals: Totals,
}

/// One row of a report: the `--json` contract (docs/usage.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The group: a day, week, month, session id, project, model or block start.
    pub period: String,
    /// Its counts and cost.
    #[serde(flatten)]
    pub totals: Totals,
    /// Models the pricing table does not price: their cost is not in `cost_usd`.
    pub unpriced_models: Vec<String>,
    /// Per model, with `--breakdown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<ModelRow>>,
    /// Blocks only: the window's end, its last response, and for the block still open its
    /// burn rate and projection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<Block>,
}

/// What a 5-hour block adds to its row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// The window's end (start + 5 h), RFC 3339.
    pub end: String,
    /// The last response in it.
    pub last_activity: String,
    /// Whether the window is still open now.
    pub active: bool,
    /// Open block: tokens per minute since its first response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_minute: Option<f64>,
    /// Open block: USD per hour since its first response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    /// Open block: the cost at its end at that rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projected_cost_usd: Option<f64>,
    /// Open block: minutes left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minutes_left: Option<i64>,
}

/// The length of a usage window.
pub const BLOCK_MS: i64 = 5 * 3600 * 1000;

/// How one report is made.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// The grouping.
    pub grouping: Grouping,
    /// Where costs come from.
    pub mode: CostMode,
    /// The prices.
    pub pricing: &'a Pricing,
    /// The zone days, weeks and months are cut in.
    pub zone: TimeZone,
    /// Which responses count.
    pub filter: Filter,
    /// Per-model rows inside each row.
    pub breakdown: bool,
    /// Now, epoch ms (the open block).
    pub now_ms: i64,
}

/// What one response cost, and whether its model is priced.
pub fn cost_of(row: &UsageRow, mode: CostMode, pricing: &Pricing) -> (f64, bool) {
    let computed = || pricing.cost(&row.model, &row.tokens);
    match (mode, row.recorded_cost_usd) {
        (CostMode::Display, recorded) => (recorded.unwrap_or(0.0), true),
        (CostMode::Auto, Some(recorded)) => (recorded, true),
        _ => computed().map_or((0.0, false), |c| (c, true)),
    }
}

/// The calendar day of `ms` in `zone`, `YYYY-MM-DD`.
pub fn day_of(ms: i64, zone: &TimeZone) -> String {
    zoned(ms, zone).date().to_string()
}

fn zoned(ms: i64, zone: &TimeZone) -> jiff::Zoned {
    Timestamp::from_millisecond(ms)
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_zoned(zone.clone())
}

/// Whether a response passes the filter (days compared in `zone`).
pub fn passes(row: &UsageRow, filter: &Filter, zone: &TimeZone) -> bool {
    let day = || day_of(row.timestamp_ms, zone);
    let project = |p: &String| {
        row.project.contains(p.as_str())
            || row
                .project_cwd
                .as_deref()
                .is_some_and(|c| c.contains(p.as_str()))
    };
    let same = |want: &Option<String>, have: &Option<String>| {
        want.as_ref().is_none_or(|w| have.as_ref() == Some(w))
    };
    filter.since.as_ref().is_none_or(|s| day() >= *s)
        && filter.until.as_ref().is_none_or(|u| day() <= *u)
        && filter.project.as_ref().is_none_or(project)
        && same(&filter.branch, &row.branch)
        && same(&filter.tag, &row.tag)
        && same(&filter.host, &row.host)
}

/// The calendar period (`Daily`, `Weekly`, `Monthly`) a day belongs to, as a report's
/// `period` names it; `None` for the other groupings.
pub fn calendar_period(date: jiff::civil::Date, grouping: Grouping) -> Option<String> {
    match grouping {
        Grouping::Daily => Some(date.to_string()),
        Grouping::Monthly => Some(date.to_string()[..7].to_owned()),
        Grouping::Weekly => {
            let week = date.iso_week_date();
            Some(format!("{:04}-W{:02}", week.year(), week.week()))
        }
        _ => None,
    }
}

fn period_of(row: &UsageRow, grouping: Grouping, zone: &TimeZone) -> String {
    match grouping {
        Grouping::Daily | Grouping::Monthly | Grouping::Weekly => {
            calendar_period(zoned(row.timestamp_ms, zone).date(), grouping)
                .expect("a calendar grouping")
        }
        Grouping::Session => row.session.clone(),
        Grouping::Project => row.project.clone(),
        Grouping::Model => row.model.clone(),
        Grouping::Blocks => unreachable!("blocks are cut by `blocks`"),
    }
}

#[derive(Default)]
struct Group {
    totals: Totals,
    unpriced: BTreeSet<String>,
    models: BTreeMap<String, Totals>,
    first_ms: i64,
    last_ms: i64,
}

impl Group {
    fn add(&mut self, row: &UsageRow, options: &Options<'_>) {
        let (cost, priced) = cost_of(row, options.mode, options.pricing);
        if !priced {
            self.unpriced.insert(row.model.clone());
        }
        if self.models.is_empty() {
            self.first_ms = row.timestamp_ms;
        }
        self.last_ms = row.timestamp_ms;
        self.totals.add(&row.tokens, cost);
        self.models
            .entry(row.model.clone())
            .or_default()
            .add(&row.tokens, cost);
    }

    fn into_row(self, period: String, breakdown: bool) -> Row {
        Row {
            period,
            totals: self.totals,
            unpriced_models: self.unpriced.into_iter().collect(),
            models: breakdown.then(|| {
                self.models
                    .into_iter()
                    .map(|(model, totals)| ModelRow { model, totals })
                    .collect()
            }),
            block: None,
        }
    }
}

/// The report over `rows` (oldest first, as the engines read them).
pub fn report(rows: &[UsageRow], options: &Options<'_>) -> Vec<Row> {
    let kept = rows
        .iter()
        .filter(|r| passes(r, &options.filter, &options.zone));
    if options.grouping == Grouping::Blocks {
        return blocks(kept, options);
    }
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for row in kept {
        groups
            .entry(period_of(row, options.grouping, &options.zone))
            .or_default()
            .add(row, options);
    }
    let mut out: Vec<Row> = groups
        .into_iter()
        .map(|(period, g)| g.into_row(period, options.breakdown))
        .collect();
    if matches!(
        options.grouping,
        Grouping::Session | Grouping::Project | Grouping::Model
    ) {
        out.sort_by(|a, b| b.totals.cost_usd.total_cmp(&a.totals.cost_usd));
    }
    out
}

/// 5-hour windows: a window starts at the hour of the first response after the previous
/// window ended (or after a 5-hour pause), and holds the responses of the next 5 hours.
fn blocks<'a>(rows: impl Iterator<Item = &'a UsageRow>, options: &Options<'_>) -> Vec<Row> {
    let mut cut: Vec<(i64, Group)> = Vec::new();
    for row in rows {
        let ts = row.timestamp_ms;
        let open = cut
            .last()
            .is_some_and(|(start, g)| ts < start + BLOCK_MS && ts - g.last_ms < BLOCK_MS);
        if !open {
            cut.push((ts - ts.rem_euclid(3_600_000), Group::default()));
        }
        cut.last_mut().expect("pushed above").1.add(row, options);
    }
    let iso = |ms: i64| {
        Timestamp::from_millisecond(ms)
            .unwrap_or(Timestamp::UNIX_EPOCH)
            .to_string()
    };
    cut.into_iter()
        .map(|(start, g)| {
            let (first, last, end) = (g.first_ms, g.last_ms, start + BLOCK_MS);
            let active = options.now_ms < end && options.now_ms - last < BLOCK_MS;
            let mut row = g.into_row(iso(start), options.breakdown);
            let minutes = ((options.now_ms - first) as f64 / 60_000.0).max(1.0);
            let per_hour = row.totals.cost_usd / minutes * 60.0;
            row.block = Some(Block {
                end: iso(end),
                last_activity: iso(last),
                active,
                tokens_per_minute: active.then(|| row.totals.tokens() as f64 / minutes),
                cost_per_hour: active.then_some(per_hour),
                projected_cost_usd: active.then(|| {
                    row.totals.cost_usd + per_hour * (end - options.now_ms) as f64 / 3_600_000.0
                }),
                minutes_left: active.then(|| (end - options.now_ms) / 60_000),
            });
            row
        })
        .collect()
}

/// The sum of report rows (the totals line).
pub fn total(rows: &[Row]) -> Totals {
    let mut t = Totals::default();
    for r in rows {
        t.input_tokens += r.totals.input_tokens;
        t.output_tokens += r.totals.output_tokens;
        t.cache_creation_tokens += r.totals.cache_creation_tokens;
        t.cache_read_tokens += r.totals.cache_read_tokens;
        t.cost_usd += r.totals.cost_usd;
    }
    t
}

#[cfg(test)]
mod tests;
