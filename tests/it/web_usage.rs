//! The usage page (`/usage`) and a session's usage on its page, over real HTTP: the same
//! numbers as `sessiondb stats --json` on the same store, unknown models shown as not
//! priced (never $0), hostile project names, titles and model names kept text, the period
//! choice. The browser tests are tools/web/test_usage.py.

use crate::serve::Server;
use crate::support::*;
use crate::web::{assert_clean, fixture_store, get};
use serde_json::{json, Value};
use sessiondb::serve::http::Config;
use std::path::Path;

const OPUS: &str = "claude-opus-4-5-20251101";
const UNKNOWN: &str = "claude-<b>nova</b>-9";
const HOSTILE_PROJECT: &str = "-home-dev-<img src=x onerror=window.__pwned=1>";
const MIXED: &str = "44444444-4444-4444-8444-444444444444";

/// A prompt and the assistant's answer (response `id` of `model`), at `at`.
fn turn(session: &str, n: u32, id: &str, model: &str, at: &str, tokens: [i64; 4]) -> Vec<String> {
    let base = json!({"isSidechain": false, "userType": "external", "cwd": "/home/dev/mixed",
        "sessionId": session, "version": "2.1.0", "timestamp": at});
    let mut user = base.clone();
    user["type"] = json!("user");
    user["uuid"] = json!(format!("44444444-0000-4000-8000-{:012}", 2 * n));
    user["parentUuid"] = if n == 1 {
        Value::Null
    } else {
        json!(format!("44444444-0000-4000-8000-{:012}", 2 * n - 1))
    };
    user["message"] = json!({"role": "user", "content": format!("question {n}")});
    let mut reply = base;
    reply["type"] = json!("assistant");
    reply["uuid"] = json!(format!("44444444-0000-4000-8000-{:012}", 2 * n + 1));
    reply["parentUuid"] = user["uuid"].clone();
    reply["requestId"] = json!(format!("req_{id}"));
    reply["message"] = json!({"id": id, "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": "answer"}],
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1],
            "cache_creation_input_tokens": tokens[2], "cache_read_input_tokens": tokens[3]}});
    vec![user.to_string(), reply.to_string()]
}

/// A session with two models, one of them unknown to the pricing table, under a project
/// folder whose name is markup; one response today (for the 30-day window).
fn mixed_tree(root: &Path) {
    let today = sessiondb::time::format_ms(sessiondb::time::now_ms());
    let mut lines = turn(
        MIXED,
        1,
        "msg_m1",
        OPUS,
        "2026-02-10T09:00:00.000Z",
        [100, 2000, 3000, 40000],
    );
    lines.extend(turn(
        MIXED,
        2,
        "msg_m2",
        UNKNOWN,
        "2026-02-11T09:00:00.000Z",
        [7, 70, 0, 700],
    ));
    lines.extend(turn(MIXED, 3, "msg_m3", OPUS, &today, [5, 50, 0, 500]));
    lines.push(
        json!({"type": "custom-title", "customTitle": "<script>window.__pwned='usage'</script>mixed", "sessionId": MIXED})
            .to_string(),
    );
    let dir = root.join(HOSTILE_PROJECT);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join(format!("{MIXED}.jsonl")), lines.join("\n") + "\n").expect("write");
}

fn stats(db: &Path, args: &[&str]) -> Value {
    let mut all = vec!["stats"];
    all.extend_from_slice(args);
    all.extend(["--json", "--timezone", "UTC"]);
    serde_json::from_slice(&sessiondb_ok(db, &all)).expect("JSON")
}

/// The `data-value` of the first element after `marker` in `page`.
fn value_after(page: &str, marker: &str) -> String {
    let at = page
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} not in\n{page}"));
    let rest = &page[at..];
    let start = rest.find("data-value=\"").expect("a data-value") + 12;
    rest[start..start + rest[start..].find('"').expect("quote")].to_owned()
}

/// The attribute value `marker` ends at.
fn value_of(page: &str, marker: &str) -> String {
    let at = page
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} not in\n{page}"))
        + marker.len();
    page[at..at + page[at..].find('"').expect("quote")].to_owned()
}

/// A page's cost (`data-value`, 6 decimals) is `stats --json`'s.
#[track_caller]
fn same_cost(shown: &str, stats: &Value, what: &str) {
    let shown: f64 = shown.parse().expect("a number");
    let want = stats.as_f64().expect("a number");
    assert!(
        (shown - want).abs() < 1e-6,
        "{what}: page {shown}, stats {want}"
    );
}

#[test]
fn the_usage_page_adds_up_what_stats_reports() {
    let (dir, store) = fixture_store();
    mixed_tree(&dir.path().join("mixed"));
    import(&store, &[&dir.path().join("mixed")]);
    let db = dir.path().join("sessions.db");
    let server = Server::start(store, Config::default());
    let a = server.addr;

    let page = get(a, "/usage?period=all&tz=UTC");
    assert_eq!(page.status, 200, "{}", page.body);
    let page = page.body;
    assert_clean(&page, "/usage");
    assert!(page.contains("<a href=\"/usage\" aria-current=\"page\">Usage</a>"));
    assert!(page.contains("<svg class=\"chart\"") && !page.contains("style="));
    // Each model's row and the total: the numbers of `stats model --json`.
    let models = stats(&db, &["model"]);
    let mut total = 0.0;
    for m in models.as_array().expect("rows") {
        let name = m["period"].as_str().expect("model");
        let row = format!(
            "<tr data-model=\"{}\">",
            sessiondb::serve::web::html::escape(name)
        );
        same_cost(&value_after(&page, &row), &m["cost_usd"], name);
        let cells = &page[page.find(&row).expect("row")..];
        let cells = &cells[..cells.find("</tr>").expect("end")];
        for field in [
            "input_tokens",
            "output_tokens",
            "cache_creation_tokens",
            "cache_read_tokens",
        ] {
            let n = m[field].as_i64().expect("count");
            let shown = format!(">{}</td>", grouped(n));
            assert!(cells.contains(&shown), "{name} {field} {shown} in {cells}");
        }
        total += m["cost_usd"].as_f64().expect("cost");
    }
    assert_eq!(
        value_after(&page, "id=\"usage-total\""),
        format!("{total:.6}")
    );
    // The unknown model: named, its tokens counted, its cost "not priced" and never $0.
    let unknown_row = format!(
        "<tr data-model=\"{}\">",
        sessiondb::serve::web::html::escape(UNKNOWN)
    );
    let cells = &page[page.find(&unknown_row).expect("unknown model row")..];
    let cells = &cells[..cells.find("</tr>").expect("end")];
    assert!(
        cells.contains(">not priced</span>") && !cells.contains("$0.00"),
        "{cells}"
    );
    assert!(page.contains("id=\"unpriced\"") && page.contains("claude-&lt;b&gt;nova&lt;/b&gt;-9"));
    // Sessions and projects in cost order with their costs, linked; markup stays text.
    let sessions = stats(&db, &["session"]);
    let mut at = 0;
    for s in sessions.as_array().expect("rows").iter().take(10) {
        let id = s["period"].as_str().expect("id");
        let row = format!("<tr data-session=\"{id}\">");
        let here = page.find(&row).unwrap_or_else(|| panic!("{id} missing"));
        assert!(here > at, "{id} out of cost order");
        at = here;
        same_cost(&value_after(&page, &row), &s["cost_usd"], id);
    }
    assert!(page.contains("&lt;script&gt;window.__pwned=&#39;usage&#39;&lt;/script&gt;mixed"));
    for p in stats(&db, &["project"]).as_array().expect("rows") {
        let name = p["period"].as_str().expect("project");
        let row = format!(
            "<tr data-project=\"{}\">",
            sessiondb::serve::web::html::escape(name)
        );
        same_cost(&value_after(&page, &row), &p["cost_usd"], name);
    }
    assert!(page.contains("/usage?period=all&amp;project=-home-dev-%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D1%3E"), "{page}");
    // The days: `stats daily` row by row.
    // The periods (weeks here: the history is longer than 120 days), as `stats` has them.
    let step = value_of(&page, "id=\"periods\" data-report=\"");
    assert_eq!(step, "weekly");
    for d in stats(&db, &[&step]).as_array().expect("rows") {
        let day = d["period"].as_str().expect("day");
        same_cost(
            &value_after(&page, &format!("<tr data-period=\"{day}\">")),
            &d["cost_usd"],
            day,
        );
    }

    // The 30-day window: today's response only, and the same as `stats --since`.
    let since =
        sessiondb::time::format_ms(sessiondb::time::now_ms() - 29 * 86_400_000)[..10].to_owned();
    let window = get(a, "/usage?period=30d&tz=UTC").body;
    assert!(
        window.contains(&format!("data-since=\"{since}\"")),
        "{window}"
    );
    let daily = stats(&db, &["daily", "--since", &since]);
    let rows = daily.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{daily}");
    same_cost(
        &value_after(&window, "id=\"usage-total\""),
        &rows[0]["cost_usd"],
        "30 days",
    );
    assert_eq!(window.matches("<tr data-period=").count(), 1);
    // A project filter, and choices that do not parse.
    let one = get(a, "/usage?period=all&tz=UTC&project=-home-dev-webapp").body;
    assert!(!one.contains(MIXED) && one.contains("11111111-1111-4111-8111-111111111111"));
    assert_eq!(get(a, "/usage?period=1y").status, 400);
    assert_eq!(get(a, "/usage?tz=Mars/Olympus").status, 400);
}

#[test]
fn a_session_page_shows_its_own_usage() {
    let (dir, store) = fixture_store();
    mixed_tree(&dir.path().join("mixed"));
    import(&store, &[&dir.path().join("mixed")]);
    let db = dir.path().join("sessions.db");
    let server = Server::start(store, Config::default());
    let a = server.addr;
    let by_session = |id: &str| {
        stats(&db, &["session", "--breakdown"])
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["period"] == id)
            .cloned()
            .expect("the session's row")
    };

    // The readable session: its 5 main-agent and 2 sub-agent responses, one model.
    let readable = "11111111-1111-4111-8111-111111111111";
    let page = get(a, &format!("/session/-home-dev-webapp/{readable}")).body;
    let row = by_session(readable);
    let panel = &page[page.find("id=\"session-usage\"").expect("usage section")..];
    let panel = &panel[..panel.find("</section>").expect("end")];
    same_cost(
        &value_after(panel, "<dt>Cost</dt>"),
        &row["cost_usd"],
        "session",
    );
    for (label, field) in [
        ("Input", "input_tokens"),
        ("Output", "output_tokens"),
        ("Cache write", "cache_creation_tokens"),
        ("Cache read", "cache_read_tokens"),
    ] {
        assert_eq!(
            value_after(panel, &format!("<dt>{label}</dt>")),
            row[field].to_string(),
            "{label}"
        );
    }
    assert!(panel.contains("<dd>7 (2 by sub-agents)</dd>"), "{panel}");
    assert!(!panel.contains("<table"), "one model, no table: {panel}");

    // Two models, one not priced: per model, the unknown one "not priced", never $0.
    let path = format!(
        "/session/{}/{MIXED}",
        sessiondb::serve::web::html::url_part(HOSTILE_PROJECT)
    );
    let page = get(a, &path);
    assert_eq!(page.status, 200, "{path}");
    assert_clean(&page.body, &path);
    let panel = &page.body[page
        .body
        .find("id=\"session-usage\"")
        .expect("usage section")..];
    let panel = &panel[..panel.find("</section>").expect("end")];
    let row = by_session(MIXED);
    same_cost(
        &value_after(panel, "<dt>Cost</dt>"),
        &row["cost_usd"],
        "session",
    );
    assert!(panel.contains("+ <span class=\"unpriced\""), "{panel}");
    for m in row["models"].as_array().expect("models") {
        let name = sessiondb::serve::web::html::escape(m["model"].as_str().expect("model"));
        let cells = &panel[panel
            .find(&format!("<tr data-model=\"{name}\">"))
            .expect("model row")..];
        let cells = &cells[..cells.find("</tr>").expect("end")];
        if m["model"] == UNKNOWN {
            assert!(
                cells.contains(">not priced</span>") && !cells.contains('$'),
                "{cells}"
            );
        } else {
            same_cost(&value_after(cells, "<td"), &m["cost_usd"], "model");
        }
    }
}

/// `1234567` as `1,234,567`.
fn grouped(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
