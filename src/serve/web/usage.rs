//! The usage page (`GET /usage`) and a session's own totals on its page. Both read the
//! usage projection through [`Db::usage_rows`] and group and price it with
//! [`crate::usage::report`] — the code `sessiondb stats` prints with — so the page and
//! `stats --json` give the same numbers (docs/usage.md).

use super::chart::{self, Bar, Series};
use super::html::Html;
use super::pages::{clip, home, short_path};
use super::render::thousands;
use super::{blocking_page, page, session_href, Nav, WebState};
use crate::backend::Db;
use crate::error::Error;
use crate::model::SessionRef;
use crate::usage::pricing::{Pricing, Tokens};
use crate::usage::report::{self, CostMode, Filter, Grouping, Options, Row, Totals};
use crate::usage::{Scope, UsageRow};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::Deserialize;
use std::collections::{BTreeSet, HashMap};

/// The periods the page offers: query value, label, days (`None`: everything stored).
const PERIODS: &[(&str, &str, Option<i64>)] = &[
    ("7d", "7 days", Some(7)),
    ("30d", "30 days", Some(30)),
    ("90d", "90 days", Some(90)),
    ("all", "All time", None),
];
const DEFAULT_PERIOD: &str = "30d";
/// Rows in the top sessions and top projects tables.
const TOP: usize = 10;
/// The token kinds, stacked in this order in the chart.
const TOKEN_SERIES: &[Series] = &[
    ("s0", "Input"),
    ("s1", "Output"),
    ("s2", "Cache write"),
    ("s3", "Cache read"),
];

#[derive(Deserialize, Default)]
pub(crate) struct UsageParams {
    period: Option<String>,
    project: Option<String>,
    tz: Option<String>,
}

/// `$1,234.56`; amounts under a cent with four decimals, so that they do not read as free.
pub(crate) fn money(usd: f64) -> String {
    if usd != 0.0 && usd.abs() < 0.01 {
        return format!("${usd:.4}");
    }
    let cents = (usd * 100.0).round() as i64;
    format!("${}.{:02}", thousands(cents / 100), (cents % 100).abs())
}

/// A value on the cost axis, with as many decimals as the axis's top (`top`) needs for its
/// half-way mark to read apart from its ends.
fn axis_money(usd: f64, top: f64) -> String {
    if top >= 100.0 {
        return format!("${}", thousands(usd.round() as i64));
    }
    let decimals = (-(top / 2.0).log10()).ceil().max(2.0) as usize;
    format!("${usd:.decimals$}")
}

/// `1.2M`, `34.5k`: a token count in few characters (the chart's axis).
fn short_count(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.1}B", n / 1e9),
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e3 => format!("{:.1}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

/// A cost cell: the amount (exact in `data-value`), and "not priced" for models the table
/// has no price for — their tokens are counted, their cost is not, and it never reads as $0.
fn cost_cell(h: &mut Html, totals: &Totals, unpriced: &[String]) {
    h.raw("<td class=\"n cost\" data-value=\"")
        .num(format_args!("{:.6}", totals.cost_usd))
        .raw("\">");
    cost_text(h, totals.cost_usd, unpriced);
    h.raw("</td>");
}

fn cost_text(h: &mut Html, cost: f64, unpriced: &[String]) {
    if unpriced.is_empty() {
        h.text(&money(cost));
        return;
    }
    if cost != 0.0 {
        h.text(&money(cost)).raw(" + ");
    }
    h.raw("<span class=\"unpriced\" title=\"no price for ")
        .text(&unpriced.join(", "))
        .raw("\">not priced</span>");
}

fn token_cells(h: &mut Html, t: &Totals) {
    for n in [
        t.input_tokens,
        t.output_tokens,
        t.cache_creation_tokens,
        t.cache_read_tokens,
    ] {
        h.raw("<td class=\"n\">").text(&thousands(n)).raw("</td>");
    }
}

const TOKEN_HEADS: &str = "<th scope=\"col\" class=\"n\">Input</th><th scope=\"col\" class=\"n\">Output</th><th scope=\"col\" class=\"n\">Cache write</th><th scope=\"col\" class=\"n\">Cache read</th><th scope=\"col\" class=\"n\">Cost</th>";

/// The start of `day` in `zone`, epoch ms.
fn start_of(day: Date, zone: &TimeZone) -> Result<i64, Error> {
    day.to_zoned(zone.clone())
        .map(|z| z.timestamp().as_millisecond())
        .map_err(|e| Error::Invalid(format!("{day}: {e}")))
}

/// The day of `ms` in `zone`.
fn date_of(ms: i64, zone: &TimeZone) -> Date {
    jiff::Timestamp::from_millisecond(ms)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_zoned(zone.clone())
        .date()
}

/// The chart's periods from `first` to `last` (days, ISO weeks or months, each once, in
/// order), with the rows of those that have usage.
fn slots(first: Date, last: Date, grouping: Grouping, rows: &[Row]) -> Vec<(String, Option<&Row>)> {
    let by_period: HashMap<&str, &Row> = rows.iter().map(|r| (r.period.as_str(), r)).collect();
    let mut out: Vec<(String, Option<&Row>)> = Vec::new();
    let mut day = first;
    while day <= last {
        let label = report::calendar_period(day, grouping).expect("a calendar grouping");
        if out.last().map(|(l, _)| l) != Some(&label) {
            let row = by_period.get(label.as_str()).copied();
            out.push((label, row));
        }
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    out
}

/// `GET /usage[?period=7d|30d|90d|all][&project=P][&tz=ZONE]`.
pub(crate) async fn usage_page(
    State(state): State<WebState>,
    params: Result<Query<UsageParams>, QueryRejection>,
) -> Response {
    let p = match params {
        Ok(Query(p)) => p,
        Err(e) => return super::bad_query(&e),
    };
    blocking_page(move || {
        let period_key = p.period.as_deref().unwrap_or(DEFAULT_PERIOD);
        let &(period_key, period_label, days) = PERIODS
            .iter()
            .find(|(k, _, _)| *k == period_key)
            .ok_or_else(|| {
                Error::Invalid(format!("period {period_key:?}: one of 7d, 30d, 90d, all"))
            })?;
        let tz = p.tz.as_deref().map(str::trim).filter(|t| !t.is_empty());
        let zone = match tz {
            Some(name) => TimeZone::get(name).map_err(|_| {
                Error::Invalid(format!("tz {name:?}: not a time zone this server knows"))
            })?,
            None => TimeZone::try_system().unwrap_or(TimeZone::UTC),
        };
        let project = p
            .project
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let now = crate::time::now_ms();
        let today = date_of(now, &zone);
        let since = match days {
            Some(n) => Some(
                today
                    .checked_sub(jiff::Span::new().days(n - 1))
                    .map_err(|e| Error::Invalid(e.to_string()))?,
            ),
            None => None,
        };
        let db = state.db();
        let scope = match since {
            Some(day) => Scope::Since(start_of(day, &zone)?),
            None => Scope::All,
        };
        let rows = db.usage_rows(&scope)?;
        let filter = Filter {
            since: since.map(|d| d.to_string()),
            project: project.clone(),
            ..Filter::default()
        };
        let pricing = Pricing::embedded();
        let kept: Vec<&UsageRow> = rows
            .iter()
            .filter(|r| report::passes(r, &filter, &zone))
            .collect();
        // The chart's step: days for a window, and for all time days, weeks or months by
        // how long the history is.
        let (first, last) = match (since, kept.first(), kept.last()) {
            (Some(s), _, _) => (s, today),
            (None, Some(a), Some(b)) => (date_of(a.timestamp_ms, &zone), date_of(b.timestamp_ms, &zone)),
            _ => (today, today),
        };
        let span = (last - first).get_days();
        let grouping = match (since, span) {
            (Some(_), _) | (None, ..=120) => Grouping::Daily,
            (None, ..=1100) => Grouping::Weekly,
            _ => Grouping::Monthly,
        };
        let options = |grouping| Options {
            grouping,
            mode: CostMode::Auto,
            pricing: &pricing,
            zone: zone.clone(),
            filter: filter.clone(),
            breakdown: false,
            now_ms: now,
        };
        let periods = report::report(&rows, &options(grouping));
        let sessions = report::report(&rows, &options(Grouping::Session));
        let projects = report::report(&rows, &options(Grouping::Project));
        let models = report::report(&rows, &options(Grouping::Model));
        let total = report::total(&models);
        let unpriced: Vec<String> = models
            .iter()
            .flat_map(|m| m.unpriced_models.iter().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();

        let mut h = Html::new();
        h.raw("<h1>Usage</h1><nav class=\"periods\" aria-label=\"Period\">");
        for (key, label, _) in PERIODS {
            h.raw("<a href=\"/usage?period=").raw(key);
            if let Some(pr) = &project {
                h.raw("&amp;project=").url(pr);
            }
            if let Some(tz) = tz {
                h.raw("&amp;tz=").url(tz);
            }
            h.raw("\"");
            if *key == period_key {
                h.raw(" aria-current=\"page\"");
            }
            h.raw(">").raw(label).raw("</a>");
        }
        h.raw("</nav><form class=\"filters\" method=\"get\" action=\"/usage\" aria-label=\"Filter usage\"><input type=\"hidden\" name=\"period\" value=\"")
            .raw(period_key)
            .raw("\">");
        if let Some(tz) = tz {
            h.raw("<input type=\"hidden\" name=\"tz\" value=\"").text(tz).raw("\">");
        }
        super::pages::project_select(&mut h, &db.project_keys()?, project.as_deref());
        h.raw("<button type=\"submit\">Filter</button> <a href=\"/usage?period=")
            .raw(period_key)
            .raw("\">Clear</a></form>");
        h.raw("<p class=\"meta\" id=\"usage-scope\" data-since=\"")
            .text(&since.map(|d| d.to_string()).unwrap_or_default())
            .raw("\" data-zone=\"")
            .text(zone.iana_name().unwrap_or("UTC"))
            .raw("\">");
        match since {
            Some(d) => h.raw("Since ").text(&d.to_string()).raw(" (").raw(period_label).raw(")"),
            None => h.raw("Everything stored"),
        };
        h.raw(", days in ")
            .text(zone.iana_name().unwrap_or("the server's time zone"))
            .raw(". <span title=\"")
            .text(&pricing.source)
            .raw("\">Prices of ")
            .text(&pricing.date)
            .raw("</span> (an old CLI's own <code>costUSD</code> where it wrote one): the numbers of <code>sessiondb stats</code>.</p>");
        if kept.is_empty() {
            h.raw("<p class=\"empty\">No billed responses in this period.");
            if days.is_some() {
                h.raw(" <a href=\"/usage?period=all\">All time</a>");
            }
            h.raw("</p>");
            return Ok(page(StatusCode::OK, "Usage", Nav::Usage, &h));
        }
        if !unpriced.is_empty() {
            h.raw("<p class=\"warn\" id=\"unpriced\">Not priced (no entry in the pricing table): ");
            for (i, m) in unpriced.iter().enumerate() {
                if i > 0 {
                    h.raw(", ");
                }
                h.raw("<code>").text(m).raw("</code>");
            }
            h.raw(". Their tokens are counted below; their cost is not in any total.</p>");
        }
        summary(&mut h, &total, &unpriced, kept.len(), &kept, &pricing);

        let (step, report_name) = match grouping {
            Grouping::Weekly => ("week", "weekly"),
            Grouping::Monthly => ("month", "monthly"),
            _ => ("day", "daily"),
        };
        let bars = slots(first, last, grouping, &periods);
        let cost_bars: Vec<Bar> = bars
            .iter()
            .map(|(label, row)| Bar {
                label: label.clone(),
                values: vec![row.map_or(0.0, |r| r.totals.cost_usd)],
                hover: match row {
                    Some(r) => format!("{label}: {}", money(r.totals.cost_usd)),
                    None => format!("{label}: none"),
                },
            })
            .collect();
        let token_bars: Vec<Bar> = bars
            .iter()
            .map(|(label, row)| {
                let t = row.map(|r| r.totals.clone()).unwrap_or_default();
                Bar {
                    label: label.clone(),
                    values: [t.input_tokens, t.output_tokens, t.cache_creation_tokens, t.cache_read_tokens]
                        .map(|n| n as f64)
                        .to_vec(),
                    hover: format!(
                        "{label}: {} tokens (input {}, output {}, cache write {}, cache read {})",
                        thousands(t.tokens()),
                        thousands(t.input_tokens),
                        thousands(t.output_tokens),
                        thousands(t.cache_creation_tokens),
                        thousands(t.cache_read_tokens)
                    ),
                }
            })
            .collect();
        h.raw("<section class=\"usage-chart\" id=\"cost-chart\"><h2>Cost per ").raw(step).raw("</h2>");
        let top = chart::axis_top(cost_bars.iter().map(|b| b.values[0]).fold(0.0, f64::max));
        chart::bars(&mut h, &format!("Cost per {step}"), &[("s0", "Cost")], &cost_bars, &|v| axis_money(v, top));
        h.raw("</section><section class=\"usage-chart\" id=\"token-chart\"><h2>Tokens per ").raw(step).raw("</h2>");
        chart::bars(&mut h, &format!("Tokens per {step}"), TOKEN_SERIES, &token_bars, &short_count);
        h.raw("<details class=\"usage-periods\"><summary>Per ").raw(step).raw(", as a table</summary>");
        period_table(&mut h, &periods, report_name);
        h.raw("</details></section>");

        h.raw("<div class=\"usage-grid\"><section id=\"top-sessions\"><h2>Top sessions by cost</h2>");
        top_sessions(&mut h, db, &sessions, &kept);
        h.raw("</section><section id=\"top-projects\"><h2>Top projects by cost</h2>");
        top_projects(&mut h, &projects, &kept, period_key, tz);
        h.raw("</section></div><section id=\"models\"><h2>Models</h2>");
        model_table(&mut h, &models);
        h.raw("</section>");
        Ok(page(StatusCode::OK, "Usage", Nav::Usage, &h))
    })
    .await
}

/// The totals and the cache figures above the charts.
fn summary(
    h: &mut Html,
    total: &Totals,
    unpriced: &[String],
    responses: usize,
    kept: &[&UsageRow],
    pricing: &Pricing,
) {
    let input_side = total.input_tokens + total.cache_creation_tokens + total.cache_read_tokens;
    let share = if input_side > 0 {
        total.cache_read_tokens as f64 / input_side as f64
    } else {
        0.0
    };
    // What the cache reads would have cost as uncached input, at the table's prices (models
    // it prices only).
    let saved: f64 = kept
        .iter()
        .filter_map(|r| {
            let uncached = Tokens {
                input: r.tokens.input + r.tokens.cache_read,
                cache_read: 0,
                ..r.tokens
            };
            Some(pricing.cost(&r.model, &uncached)? - pricing.cost(&r.model, &r.tokens)?)
        })
        .sum();
    h.raw("<div class=\"usage-summary\" id=\"usage-total\"><div class=\"stat\"><span>Cost</span><strong class=\"cost\" data-value=\"")
        .num(format_args!("{:.6}", total.cost_usd))
        .raw("\">");
    cost_text(h, total.cost_usd, unpriced);
    h.raw("</strong></div><div class=\"stat\"><span>Tokens</span><strong data-value=\"")
        .num(total.tokens())
        .raw("\">")
        .text(&thousands(total.tokens()))
        .raw("</strong><small>in ")
        .text(&thousands(total.input_tokens))
        .raw(" · out ")
        .text(&thousands(total.output_tokens))
        .raw(" · cache write ")
        .text(&thousands(total.cache_creation_tokens))
        .raw(" · cache read ")
        .text(&thousands(total.cache_read_tokens))
        .raw("</small></div><div class=\"stat\"><span>Responses</span><strong>")
        .text(&thousands(responses as i64))
        .raw("</strong></div><div class=\"stat\" id=\"cache-share\"><span>Input read from the cache</span><strong data-value=\"")
        .num(format_args!("{share:.6}"))
        .raw("\">")
        .num(format_args!("{:.1}", share * 100.0))
        .raw("%</strong><small>");
    if total.cache_creation_tokens > 0 {
        h.text(&format!(
            "{:.1} tokens read per token written",
            total.cache_read_tokens as f64 / total.cache_creation_tokens as f64
        ));
    }
    h.raw("</small></div><div class=\"stat\" id=\"cache-saved\"><span>Saved by cache reads</span><strong data-value=\"")
        .num(format_args!("{saved:.6}"))
        .raw("\">")
        .text(&money(saved))
        .raw("</strong><small>against the same tokens as uncached input</small></div></div>");
}

/// The chart's numbers as a table (`report`: the `stats` report that gives the same rows).
fn period_table(h: &mut Html, rows: &[Row], report: &'static str) {
    h.raw("<table class=\"usage\" id=\"periods\" data-report=\"")
        .raw(report)
        .raw("\"><thead><tr><th scope=\"col\">Period</th>")
        .raw(TOKEN_HEADS)
        .raw("</tr></thead><tbody>");
    for r in rows {
        h.raw("<tr data-period=\"")
            .text(&r.period)
            .raw("\"><td>")
            .text(&r.period)
            .raw("</td>");
        token_cells(h, &r.totals);
        cost_cell(h, &r.totals, &r.unpriced_models);
        h.raw("</tr>");
    }
    h.raw("</tbody></table>");
}

/// The sessions costing most, titled from the catalog, each linked to its page.
fn top_sessions(h: &mut Html, db: &Db, rows: &[Row], kept: &[&UsageRow]) {
    // A session id's project: the first response's (one session copied under two machines'
    // folders is one row of the report, as in `stats session`).
    let mut project_of: HashMap<&str, &str> = HashMap::new();
    for r in kept {
        project_of
            .entry(r.session.as_str())
            .or_insert(r.project.as_str());
    }
    h.raw("<table class=\"usage\"><thead><tr><th scope=\"col\">Session</th><th scope=\"col\" class=\"n\">Tokens</th><th scope=\"col\" class=\"n\">Cost</th></tr></thead><tbody>");
    for r in rows.iter().take(TOP) {
        let project = project_of.get(r.period.as_str()).copied().unwrap_or("");
        let title = db
            .find_exact_session(project, &r.period)
            .and_then(|s| db.session_info(&s, None))
            .ok()
            .and_then(|i| i.custom_title.or(i.summary).or(i.first_prompt));
        h.raw("<tr data-session=\"")
            .text(&r.period)
            .raw("\"><td class=\"title\"><a href=\"");
        session_href(h, project, &r.period);
        h.raw("\">")
            .text(&clip(title.as_deref().unwrap_or(&r.period), 120))
            .raw("</a><div class=\"sid\">")
            .text(&r.period)
            .raw("</div></td><td class=\"n\">")
            .text(&thousands(r.totals.tokens()))
            .raw("</td>");
        cost_cell(h, &r.totals, &r.unpriced_models);
        h.raw("</tr>");
    }
    h.raw("</tbody></table>");
}

/// The projects costing most, each linked to this page filtered to it.
fn top_projects(
    h: &mut Html,
    rows: &[Row],
    kept: &[&UsageRow],
    period: &'static str,
    tz: Option<&str>,
) {
    let mut cwd_of: HashMap<&str, &str> = HashMap::new();
    for r in kept {
        if let Some(cwd) = r.project_cwd.as_deref() {
            cwd_of.entry(r.project.as_str()).or_insert(cwd);
        }
    }
    let home = home();
    h.raw("<table class=\"usage\"><thead><tr><th scope=\"col\">Project</th><th scope=\"col\" class=\"n\">Tokens</th><th scope=\"col\" class=\"n\">Cost</th></tr></thead><tbody>");
    for r in rows.iter().take(TOP) {
        let shown = cwd_of
            .get(r.period.as_str())
            .map_or_else(|| r.period.clone(), |c| short_path(c, home.as_deref()));
        h.raw("<tr data-project=\"")
            .text(&r.period)
            .raw("\"><td class=\"project\"><a href=\"/usage?period=")
            .raw(period)
            .raw("&amp;project=")
            .url(&r.period);
        if let Some(tz) = tz {
            h.raw("&amp;tz=").url(tz);
        }
        h.raw("\" title=\"")
            .text(&r.period)
            .raw("\">")
            .text(&clip(&shown, 120))
            .raw("</a></td><td class=\"n\">")
            .text(&thousands(r.totals.tokens()))
            .raw("</td>");
        cost_cell(h, &r.totals, &r.unpriced_models);
        h.raw("</tr>");
    }
    h.raw("</tbody></table>");
}

fn model_table(h: &mut Html, rows: &[Row]) {
    h.raw("<table class=\"usage\"><thead><tr><th scope=\"col\">Model</th>")
        .raw(TOKEN_HEADS)
        .raw("</tr></thead><tbody>");
    for r in rows {
        h.raw("<tr data-model=\"")
            .text(&r.period)
            .raw("\"><td><code>")
            .text(&r.period)
            .raw("</code></td>");
        token_cells(h, &r.totals);
        cost_cell(h, &r.totals, &r.unpriced_models);
        h.raw("</tr>");
    }
    h.raw("</tbody></table>");
}

/// A session's own usage: its responses (its sub-agents' included) per model.
pub(crate) struct SessionUsage {
    project: String,
    models: Vec<Row>,
    responses: usize,
    subagent_responses: usize,
}

impl SessionUsage {
    /// Reads the responses the projection counts for `session` (a response its fork or
    /// an earlier copy shares is counted for one of them only: docs/usage.md).
    pub(crate) fn read(db: &Db, session: &SessionRef) -> Result<SessionUsage, Error> {
        let rows: Vec<UsageRow> = db
            .usage_rows(&Scope::Session(session.session_id.clone()))?
            .into_iter()
            .filter(|r| r.project == session.project)
            .collect();
        let pricing = Pricing::embedded();
        let models = report::report(
            &rows,
            &Options {
                grouping: Grouping::Model,
                mode: CostMode::Auto,
                pricing: &pricing,
                zone: TimeZone::UTC,
                filter: Filter::default(),
                breakdown: false,
                now_ms: crate::time::now_ms(),
            },
        );
        Ok(SessionUsage {
            project: session.project.clone(),
            models,
            responses: rows.len(),
            subagent_responses: rows.iter().filter(|r| r.agent.is_some()).count(),
        })
    }

    /// The panel's section: tokens by kind, cost (unpriced models named, never $0), the
    /// number of responses, and per model when there is more than one.
    pub(crate) fn write(&self, h: &mut Html) {
        h.raw("<section class=\"session-usage\" id=\"session-usage\"><h2>Usage</h2>");
        if self.models.is_empty() {
            h.raw("<p class=\"note\">No billed responses recorded.</p></section>");
            return;
        }
        let total = report::total(&self.models);
        let unpriced: Vec<String> = self
            .models
            .iter()
            .flat_map(|m| m.unpriced_models.iter().cloned())
            .collect();
        h.raw("<dl><dt>Cost</dt><dd class=\"cost\" data-value=\"")
            .num(format_args!("{:.6}", total.cost_usd))
            .raw("\">");
        cost_text(h, total.cost_usd, &unpriced);
        h.raw("</dd>");
        for (label, n) in [
            ("Input", total.input_tokens),
            ("Output", total.output_tokens),
            ("Cache write", total.cache_creation_tokens),
            ("Cache read", total.cache_read_tokens),
        ] {
            h.raw("<dt>")
                .raw(label)
                .raw("</dt><dd data-value=\"")
                .num(n)
                .raw("\">")
                .text(&thousands(n))
                .raw("</dd>");
        }
        h.raw("<dt>Responses</dt><dd>")
            .text(&thousands(self.responses as i64));
        if self.subagent_responses > 0 {
            h.raw(" (")
                .text(&thousands(self.subagent_responses as i64))
                .raw(" by sub-agents)");
        }
        h.raw("</dd></dl>");
        if self.models.len() > 1 {
            h.raw("<table class=\"usage models\"><thead><tr><th scope=\"col\">Model</th><th scope=\"col\" class=\"n\">Tokens</th><th scope=\"col\" class=\"n\">Cost</th></tr></thead><tbody>");
            for m in &self.models {
                h.raw("<tr data-model=\"")
                    .text(&m.period)
                    .raw("\"><td><code>")
                    .text(&m.period)
                    .raw("</code></td><td class=\"n\">")
                    .text(&thousands(m.totals.tokens()))
                    .raw("</td>");
                cost_cell(h, &m.totals, &m.unpriced_models);
                h.raw("</tr>");
            }
            h.raw("</tbody></table>");
        }
        h.raw("<p class=\"note\"><a href=\"/usage?period=all&amp;project=")
            .url(&self.project)
            .raw("\">Usage of the project</a> · <a href=\"/usage\">All usage</a></p></section>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_keeps_small_amounts_visible() {
        assert_eq!(money(0.0), "$0.00");
        assert_eq!(money(1234.567), "$1,234.57");
        assert_eq!(money(0.004_21), "$0.0042");
        assert_eq!(money(12.0), "$12.00");
        assert_eq!(money(-3.5), "$-3.50");
        assert_eq!(axis_money(0.005, 0.01), "$0.005");
        assert_eq!(axis_money(12.5, 25.0), "$12.50");
        assert_eq!(axis_money(1250.0, 2500.0), "$1,250");
    }

    #[test]
    fn chart_periods_run_evenly_through_gaps() {
        let d = |s: &str| s.parse::<Date>().expect("a date");
        let rows = vec![Row {
            period: "2026-01-02".into(),
            totals: Totals::default(),
            unpriced_models: vec![],
            models: None,
            block: None,
        }];
        let days = slots(d("2026-01-01"), d("2026-01-03"), Grouping::Daily, &rows);
        let labels: Vec<_> = days
            .iter()
            .map(|(l, r)| (l.as_str(), r.is_some()))
            .collect();
        assert_eq!(
            labels,
            [
                ("2026-01-01", false),
                ("2026-01-02", true),
                ("2026-01-03", false)
            ]
        );
        let weeks = slots(d("2025-12-28"), d("2026-01-12"), Grouping::Weekly, &[]);
        let labels: Vec<_> = weeks.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["2025-W52", "2026-W01", "2026-W02", "2026-W03"]);
        let months = slots(d("2025-11-30"), d("2026-01-01"), Grouping::Monthly, &[]);
        assert_eq!(months.len(), 3);
    }
}
