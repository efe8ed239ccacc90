//! `usage`: token and cost totals from the usage projection, made by the reports `sessiondb
//! stats` prints ([`crate::usage::report`]), so the tool and the CLI add up the same way.
//!
//! Days are cut in the server's time zone (`TZ`, else the system's), as `stats` cuts them
//! without `--timezone`; costs are `stats`' default (`--mode auto`, the embedded prices).

use super::args::{clip, Args, ToolError};
use super::page::{object, Page};
use super::Context;
use crate::usage::pricing::Pricing;
use crate::usage::report::{self, CostMode, Filter, Grouping, Options, Row};
use crate::usage::Scope;
use jiff::tz::TimeZone;
use serde_json::{json, Value};

/// The largest `limit` (rows of a report).
const MAX_ROWS: i64 = 100;

/// `usage`.
pub fn usage(cx: &Context<'_>, a: &Args<'_>) -> Result<Value, ToolError> {
    let spec = super::tools::spec("usage", false).expect("usage is listed");
    a.only(&spec.param_names())?;
    let grouping = match a.text("by")? {
        None | Some("day") => Grouping::Daily,
        Some("week") => Grouping::Weekly,
        Some("month") => Grouping::Monthly,
        Some("session") => Grouping::Session,
        Some("project") => Grouping::Project,
        Some("model") => Grouping::Model,
        Some(other) => {
            return Err(ToolError::invalid(format!(
                "by {:?} is not a grouping: send day, week, month, session, project or model",
                clip(other, 40)
            )))
        }
    };
    let limit = a.limit("limit", 50, MAX_ROWS)?;
    let offset = a.cursor()?;
    let zone = TimeZone::try_system().unwrap_or(TimeZone::UTC);
    let filter = Filter {
        since: day(a, "since", &zone)?,
        until: day(a, "until", &zone)?,
        project: a.text("project")?.map(str::to_owned),
        tag: a.text("tag")?.map(str::to_owned),
        ..Filter::default()
    };
    let pricing = Pricing::embedded();
    let options = |grouping| Options {
        grouping,
        mode: CostMode::Auto,
        pricing: &pricing,
        zone: zone.clone(),
        filter: filter.clone(),
        breakdown: false,
        now_ms: crate::time::now_ms(),
    };
    if let Some(name) = a.text("session")? {
        // One session: its totals, and per model (a session's rows are few).
        let session = cx.db.resolve_session(name)?;
        let rows: Vec<_> = cx
            .db
            .usage_rows(&Scope::Session(session.session_id.clone()))?
            .into_iter()
            .filter(|r| r.project == session.project)
            .collect();
        let models = report::report(&rows, &options(Grouping::Model));
        return Ok(object([
            ("session", json!(session.session_id)),
            ("project", json!(session.project)),
            ("total", totals(&report::total(&models), &models)),
            ("models", Value::Array(models.iter().map(item).collect())),
        ]));
    }
    let rows = cx.db.usage_rows(&Scope::All)?;
    let made = report::report(&rows, &options(grouping));
    let mut page = Page::new(cx.budget);
    let mut taken = 0;
    for row in made.iter().skip(offset as usize).take(limit as usize) {
        if !page.push(item(row)) {
            break;
        }
        taken += 1;
    }
    let next = offset + taken as i64;
    let mut out = super::page::listing("rows", page, (next < made.len() as i64).then_some(next));
    out["total"] = totals(&report::total(&made), &made);
    out["timezone"] = json!(zone.iana_name().unwrap_or("UTC"));
    Ok(out)
}

/// A `since`/`until` argument as the day it names in `zone`: a `YYYY-MM-DD` as it is (as
/// `stats --since` takes it), a time or an age (`3d`) as its day.
fn day(a: &Args<'_>, name: &str, zone: &TimeZone) -> Result<Option<String>, ToolError> {
    if let Some(text) = a.text(name)? {
        if let Ok(date) = jiff::civil::Date::strptime("%Y-%m-%d", text) {
            return Ok(Some(date.to_string()));
        }
    }
    Ok(a.time(name)?.map(|ms| report::day_of(ms, zone)))
}

/// A report row as `stats --json` writes it (period, the four counts, cost), the cost
/// rounded to the cent's hundredth, empty fields left out.
fn item(row: &Row) -> Value {
    object([
        ("period", json!(row.period)),
        ("input_tokens", json!(row.totals.input_tokens)),
        ("output_tokens", json!(row.totals.output_tokens)),
        (
            "cache_creation_tokens",
            json!(row.totals.cache_creation_tokens),
        ),
        ("cache_read_tokens", json!(row.totals.cache_read_tokens)),
        ("cost_usd", json!(round(row.totals.cost_usd))),
        ("unpriced_models", json!(row.unpriced_models)),
    ])
}

/// The sum of a report, with the models no price was found for.
fn totals(sum: &report::Totals, rows: &[Row]) -> Value {
    let mut unpriced: Vec<&String> = rows.iter().flat_map(|r| &r.unpriced_models).collect();
    unpriced.sort();
    unpriced.dedup();
    object([
        ("input_tokens", json!(sum.input_tokens)),
        ("output_tokens", json!(sum.output_tokens)),
        ("cache_creation_tokens", json!(sum.cache_creation_tokens)),
        ("cache_read_tokens", json!(sum.cache_read_tokens)),
        ("cost_usd", json!(round(sum.cost_usd))),
        ("unpriced_models", json!(unpriced)),
    ])
}

/// USD to 4 decimals: what a model needs, in fewer bytes.
fn round(usd: f64) -> f64 {
    (usd * 10_000.0).round() / 10_000.0
}
