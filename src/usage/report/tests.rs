use super::*;

fn row(session: &str, model: &str, at: &str, input: i64, output: i64) -> UsageRow {
    UsageRow {
        session: session.into(),
        project: "-w-app".into(),
        project_cwd: Some("/w/app".into()),
        tag: None,
        host: None,
        agent: None,
        model: model.into(),
        timestamp_ms: crate::time::parse_iso8601_ms(at).expect("a time"),
        branch: Some("main".into()),
        tokens: Tokens {
            input,
            output,
            ..Default::default()
        },
        recorded_cost_usd: None,
    }
}

fn options<'a>(pricing: &'a Pricing, grouping: Grouping, zone: &str) -> Options<'a> {
    Options {
        grouping,
        mode: CostMode::Calculate,
        pricing,
        zone: TimeZone::get(zone).expect("a zone"),
        filter: Filter::default(),
        breakdown: true,
        now_ms: crate::time::parse_iso8601_ms("2026-01-05T12:00:00Z").expect("a time"),
    }
}

const OPUS: &str = "claude-opus-4-5-20251101";

#[test]
fn days_weeks_and_months_are_cut_in_the_zone() {
    let p = Pricing::embedded();
    let rows = [
        row("a", OPUS, "2025-12-31T23:30:00Z", 1_000_000, 0),
        row("a", OPUS, "2026-01-01T00:30:00Z", 0, 1_000_000),
    ];
    let days = |zone| -> Vec<String> {
        report(&rows, &options(&p, Grouping::Daily, zone))
            .into_iter()
            .map(|r| r.period)
            .collect()
    };
    assert_eq!(days("UTC"), ["2025-12-31", "2026-01-01"]);
    assert_eq!(days("Asia/Tokyo"), ["2026-01-01"]);
    let weeks = report(&rows, &options(&p, Grouping::Weekly, "UTC"));
    assert_eq!(weeks.len(), 1, "both days are in ISO week 2026-W01");
    assert_eq!(weeks[0].period, "2026-W01");
    let months = report(&rows, &options(&p, Grouping::Monthly, "UTC"));
    assert_eq!(months[1].period, "2026-01");
    assert_eq!(months[0].totals.cost_usd, 5.0);
    assert_eq!(months[1].totals.cost_usd, 25.0);
}

#[test]
fn unknown_models_are_named_never_priced_at_zero_silently() {
    let p = Pricing::embedded();
    let rows = [row("a", "claude-unknown-9", "2026-01-01T00:00:00Z", 10, 10)];
    let out = report(&rows, &options(&p, Grouping::Daily, "UTC"));
    assert_eq!(out[0].unpriced_models, ["claude-unknown-9"]);
    assert_eq!(out[0].totals.input_tokens, 10);
}

#[test]
fn the_cost_mode_chooses_the_recorded_cost() {
    let p = Pricing::embedded();
    let mut r = row("a", OPUS, "2026-01-01T00:00:00Z", 1_000_000, 0);
    r.recorded_cost_usd = Some(1.25);
    assert_eq!(cost_of(&r, CostMode::Auto, &p), (1.25, true));
    assert_eq!(cost_of(&r, CostMode::Calculate, &p), (5.0, true));
    assert_eq!(cost_of(&r, CostMode::Display, &p), (1.25, true));
    r.recorded_cost_usd = None;
    assert_eq!(cost_of(&r, CostMode::Auto, &p), (5.0, true));
    assert_eq!(cost_of(&r, CostMode::Display, &p), (0.0, true));
}

#[test]
fn blocks_are_five_hour_windows_from_the_hour() {
    let p = Pricing::embedded();
    let rows = [
        row("a", OPUS, "2026-01-05T03:20:00Z", 1, 0),
        row("a", OPUS, "2026-01-05T08:10:00Z", 1, 0),
        row("a", OPUS, "2026-01-05T09:00:00Z", 1, 0),
        row("a", OPUS, "2026-01-05T11:00:00Z", 1, 0),
    ];
    let out = report(&rows, &options(&p, Grouping::Blocks, "UTC"));
    let starts: Vec<&str> = out.iter().map(|r| r.period.as_str()).collect();
    assert_eq!(starts, ["2026-01-05T03:00:00Z", "2026-01-05T08:00:00Z"]);
    let open = out[1].block.as_ref().expect("a block");
    assert!(open.active && !out[0].block.as_ref().expect("a block").active);
    assert_eq!(open.minutes_left, Some(60));
    assert_eq!(out[1].totals.input_tokens, 3);
}

#[test]
fn filters_and_the_session_report() {
    let p = Pricing::embedded();
    let mut other = row("b", OPUS, "2026-01-02T00:00:00Z", 0, 2_000_000);
    other.branch = Some("dev".into());
    let rows = [row("a", OPUS, "2026-01-01T00:00:00Z", 1_000_000, 0), other];
    let mut o = options(&p, Grouping::Session, "UTC");
    let all = report(&rows, &o);
    assert_eq!(all[0].period, "b", "the costliest session first");
    o.filter.branch = Some("main".into());
    assert_eq!(report(&rows, &o).len(), 1);
    o.filter = Filter {
        since: Some("2026-01-02".into()),
        ..Filter::default()
    };
    assert_eq!(report(&rows, &o)[0].period, "b");
    o.filter = Filter {
        project: Some("w/app".into()),
        until: Some("2026-01-01".into()),
        ..Filter::default()
    };
    assert_eq!(report(&rows, &o)[0].period, "a");
}
