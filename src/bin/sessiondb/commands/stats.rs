//! `sessiondb stats [REPORT…]`: usage reports (docs/usage.md), as a table or `--json`.

use crate::cli_usage::{CostModeArg, StatsArgs, StatsReport};
use anyhow::Context;
use sessiondb::usage::pricing::Pricing;
use sessiondb::usage::report::{self, CostMode, Filter, Grouping, Options, Row, Totals};
use sessiondb::usage::Scope;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

pub fn run(db: &Path, args: StatsArgs) -> anyhow::Result<()> {
    let pricing = pricing(args.pricing.as_deref())?;
    let zone = match &args.timezone {
        Some(name) => jiff::tz::TimeZone::get(name)
            .with_context(|| format!("--timezone {name}: not a time zone this machine knows"))?,
        None => crate::human::time_zone(),
    };
    let filter = Filter {
        since: args
            .since
            .as_deref()
            .map(|d| day("--since", d))
            .transpose()?,
        until: args
            .until
            .as_deref()
            .map(|d| day("--until", d))
            .transpose()?,
        project: args.project.clone(),
        branch: args.branch.clone(),
        tag: args.tag.clone(),
        host: args.host.clone(),
    };
    let store = super::open_db_read(db)?;
    // One read for every report asked for: they all add up the same snapshot.
    let rows = store.usage_rows(&Scope::All)?;
    let reports = if args.reports.is_empty() {
        vec![StatsReport::Daily]
    } else {
        args.reports.clone()
    };
    let made: Vec<(StatsReport, Vec<Row>)> = reports
        .iter()
        .map(|&which| {
            let options = Options {
                grouping: grouping(which),
                mode: mode(args.mode),
                pricing: &pricing,
                zone: zone.clone(),
                filter: filter.clone(),
                breakdown: args.breakdown,
                now_ms: sessiondb::time::now_ms(),
            };
            (which, report::report(&rows, &options))
        })
        .collect();
    warn_unpriced(&made);
    if args.json {
        return if let [(_, rows)] = made.as_slice() {
            crate::output::print_json(rows)
        } else {
            let object: serde_json::Map<String, serde_json::Value> = made
                .iter()
                .map(|(which, rows)| Ok((name(*which).to_owned(), serde_json::to_value(rows)?)))
                .collect::<anyhow::Result<_>>()?;
            crate::output::print_json(&object)
        };
    }
    let mut out = crate::output::stdout();
    for (i, (which, rows)) in made.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        if made.len() > 1 {
            writeln!(out, "{}", name(*which))?;
        }
        table(&mut out, *which, rows)?;
    }
    out.flush()?;
    Ok(())
}

/// The embedded prices, or those of `--pricing FILE`.
pub fn pricing(file: Option<&Path>) -> anyhow::Result<Pricing> {
    Ok(match file {
        Some(path) => Pricing::read(path)?,
        None => Pricing::embedded(),
    })
}

/// A `--since`/`--until` day as `YYYY-MM-DD`.
fn day(flag: &str, text: &str) -> anyhow::Result<String> {
    let digits: String = text.chars().filter(|c| *c != '-').collect();
    let ok = digits.len() == 8 && digits.chars().all(|c| c.is_ascii_digit());
    let iso = format!(
        "{}-{}-{}",
        &digits.get(..4).unwrap_or(""),
        digits.get(4..6).unwrap_or(""),
        digits.get(6..).unwrap_or("")
    );
    if !ok || jiff::civil::Date::strptime("%Y-%m-%d", &iso).is_err() {
        anyhow::bail!("{flag} {text}: expected a day, YYYY-MM-DD or YYYYMMDD");
    }
    Ok(iso)
}

fn grouping(which: StatsReport) -> Grouping {
    match which {
        StatsReport::Daily => Grouping::Daily,
        StatsReport::Weekly => Grouping::Weekly,
        StatsReport::Monthly => Grouping::Monthly,
        StatsReport::Session => Grouping::Session,
        StatsReport::Project => Grouping::Project,
        StatsReport::Model => Grouping::Model,
        StatsReport::Blocks => Grouping::Blocks,
    }
}

fn mode(arg: CostModeArg) -> CostMode {
    match arg {
        CostModeArg::Auto => CostMode::Auto,
        CostModeArg::Calculate => CostMode::Calculate,
        CostModeArg::Display => CostMode::Display,
    }
}

fn name(which: StatsReport) -> &'static str {
    match which {
        StatsReport::Daily => "daily",
        StatsReport::Weekly => "weekly",
        StatsReport::Monthly => "monthly",
        StatsReport::Session => "session",
        StatsReport::Project => "project",
        StatsReport::Model => "model",
        StatsReport::Blocks => "blocks",
    }
}

/// Names the models no price was found for, once: their cost is not in any total.
fn warn_unpriced(made: &[(StatsReport, Vec<Row>)]) {
    let unpriced: BTreeSet<&str> = made
        .iter()
        .flat_map(|(_, rows)| rows.iter())
        .flat_map(|r| r.unpriced_models.iter().map(String::as_str))
        .collect();
    if !unpriced.is_empty() {
        let list: Vec<String> = unpriced
            .iter()
            .map(|m| crate::human::safe_text(m))
            .collect();
        crate::style::warn(format_args!(
            "not priced (no entry in the pricing table; pass --pricing FILE): {}; their cost is left out of the totals",
            list.join(", ")
        ));
    }
}

/// `1234567` as `1,234,567`.
pub fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

fn cells(label: String, t: &Totals) -> Vec<String> {
    vec![
        label,
        grouped(t.input_tokens),
        grouped(t.output_tokens),
        grouped(t.cache_creation_tokens),
        grouped(t.cache_read_tokens),
        grouped(t.tokens()),
        format!("${:.2}", t.cost_usd),
    ]
}

/// The table: one line per row (and per model with `--breakdown`), a totals line, numbers
/// right-aligned, the first column cut to what the terminal leaves it.
fn table(out: &mut impl Write, which: StatsReport, rows: &[Row]) -> anyhow::Result<()> {
    let first = match which {
        StatsReport::Daily => "Day",
        StatsReport::Weekly => "Week",
        StatsReport::Monthly => "Month",
        StatsReport::Session => "Session",
        StatsReport::Project => "Project",
        StatsReport::Model => "Model",
        StatsReport::Blocks => "Block start",
    };
    let head: Vec<String> = [
        first,
        "Input",
        "Output",
        "Cache write",
        "Cache read",
        "Tokens",
        "Cost",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut lines = vec![head];
    for row in rows {
        let mut label = crate::human::safe_text(&row.period);
        if let Some(block) = &row.block {
            if block.active {
                label.push_str(" (open)");
            }
        }
        lines.push(cells(label, &row.totals));
        for m in row.models.iter().flatten() {
            lines.push(cells(
                format!("  {}", crate::human::safe_text(&m.model)),
                &m.totals,
            ));
        }
    }
    let total = report::total(rows);
    lines.push(cells("Total".to_owned(), &total));
    let mut widths: Vec<usize> = (0..7)
        .map(|c| {
            lines
                .iter()
                .map(|l| crate::human::width(&l[c]))
                .max()
                .unwrap_or(0)
        })
        .collect();
    if let Some(cols) = crate::style::terminal_width() {
        let rest: usize = widths[1..].iter().map(|w| w + 2).sum();
        widths[0] = widths[0].min(cols.saturating_sub(rest).max(10));
    }
    let rule: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    let count = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if i == count - 1 {
            writeln!(out, "{}", "─".repeat(rule))?;
        }
        let mut text = crate::human::pad(&crate::human::fit(&line[0], widths[0]), widths[0]);
        for (cell, width) in line[1..].iter().zip(&widths[1..]) {
            text.push_str(&format!("  {cell:>width$}"));
        }
        let text = text.trim_end();
        if i == 0 || i == count - 1 {
            writeln!(out, "{}", crate::style::paint("1", text))?;
        } else {
            writeln!(out, "{text}")?;
        }
        if i == 0 {
            writeln!(out, "{}", "─".repeat(rule))?;
        }
    }
    Ok(())
}
