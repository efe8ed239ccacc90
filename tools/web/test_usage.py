"""The usage page (/usage) and a session's usage on its page, in a real browser against the
same `sessiondb serve` as test_browser.py (SQLite, or the team store SESSIONDB_WEB_DB names):
every figure the page shows is the one `sessiondb stats ... --json` gives for the same store;
an unknown model is "not priced", never $0; markup in project names, titles and model names
stays text; the charts are drawn under the page's Content-Security-Policy. Writes
screenshots of the page and of a session's usage, from corpus sessions, to $WEB_SCREENSHOTS."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import sessiondb_bin
from test_browser import INJECTION_CHECK, go, screenshot_dir, wait

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "..", "shared", "corpus", "claude-code")
# A corpus session that used two models (Opus 4.1 and Sonnet 4).
CORPUS_SESSION = "86f87fad-a317-4a18-89b3-d1e33de12a4a"

OPUS = "claude-opus-4-5-20251101"
UNKNOWN = "claude-<b>nova</b>-9"
PROJECT = "-home-dev-<img src=x onerror=window.__pwned='project'>"
SESSION = "77777777-7777-4777-8777-777777777777"
TITLE = "<script>window.__pwned='usage-title'</script>Usage mix"
# Our own charts are SVG; INJECTION_CHECK refuses any other.
CHECK = INJECTION_CHECK.replace("'svg',", "'svg:not(.chart)',")


def turn(n, msg, model, at, tokens):
    """A prompt and its answer with these token counts (input, output, cache write, cache read)."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/usage-mix", "sessionId": SESSION,
            "version": "2.1.0", "timestamp": at, "gitBranch": "main"}
    user = f"77777777-0000-4000-8000-{2 * n:012d}"
    reply = f"77777777-0000-4000-8000-{2 * n + 1:012d}"
    parent = None if n == 1 else f"77777777-0000-4000-8000-{2 * n - 1:012d}"
    i, o, w, r = tokens
    return [
        dict(base, type="user", uuid=user, parentUuid=parent, message={"role": "user", "content": f"question {n}"}),
        dict(base, type="assistant", uuid=reply, parentUuid=user, requestId=f"req_{msg}",
             message={"id": msg, "type": "message", "role": "assistant", "model": model,
                      "content": [{"type": "text", "text": "answer"}], "stop_reason": "end_turn",
                      "usage": {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": w,
                                "cache_read_input_tokens": r}}),
    ]


@pytest.fixture(scope="module")
def mixed(served, tmp_path_factory):
    """A session of two models, one unknown to the pricing table, under a project folder
    whose name is markup, with a title that is markup; one response today."""
    tree = str(tmp_path_factory.mktemp("usage"))
    today = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    records = turn(1, "msg_u1", OPUS, "2026-02-10T09:00:00.000Z", (100, 2000, 3000, 40000))
    records += turn(2, "msg_u2", UNKNOWN, "2026-02-11T09:00:00.000Z", (7, 70, 0, 700))
    records += turn(3, "msg_u3", OPUS, today, (5, 50, 0, 500))
    records.append({"type": "custom-title", "customTitle": TITLE, "sessionId": SESSION})
    os.makedirs(os.path.join(tree, PROJECT))
    with open(os.path.join(tree, PROJECT, SESSION + ".jsonl"), "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    subprocess.run([sessiondb_bin(), "--db", served.db, "import", tree], check=True, capture_output=True)
    return served


def stats(served, *args):
    out = subprocess.run([sessiondb_bin(), "--db", served.db, "stats", *args, "--json", "--timezone", "UTC"],
                         check=True, capture_output=True)
    return json.loads(out.stdout)


def grouped(n):
    return f"{n:,}"


def value(el):
    return float(el.get_attribute("data-value"))


def close(shown, want, what):
    assert abs(shown - want) < 1e-6, f"{what}: page {shown}, stats {want}"


def cells(row):
    return [td.text for td in row.find_elements(By.TAG_NAME, "td")]


def check_tokens(row, want, what):
    shown = cells(row)[1:5]
    assert shown == [grouped(want[k]) for k in ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")], what


def no_csp_violation(browser):
    logs = [e["message"] for e in browser.get_log("browser")]
    assert not [m for m in logs if "Content Security Policy" in m], logs


def test_the_usage_page_shows_what_stats_reports(mixed, browser):
    served = mixed
    # Reached from the navigation of every page.
    go(browser, served.url + "/")
    browser.find_element(By.CSS_SELECTOR, "header.top nav").find_element(By.LINK_TEXT, "Usage").click()
    wait(browser).until(EC.url_contains("/usage"))
    assert browser.find_element(By.CSS_SELECTOR, "header.top a[aria-current='page']").text == "Usage"
    browser.get_log("browser")
    go(browser, served.url + "/usage?period=all&tz=UTC")
    assert browser.execute_script(CHECK) == []
    no_csp_violation(browser)

    # Every model: tokens and cost as `stats model`; the unknown one "not priced".
    models = stats(served, "model")
    rows = {r.get_attribute("data-model"): r for r in browser.find_elements(By.CSS_SELECTOR, "#models tbody tr")}
    assert set(rows) == {m["period"] for m in models}
    for m in models:
        row = rows[m["period"]]
        check_tokens(row, m, m["period"])
        cost = row.find_element(By.CSS_SELECTOR, "td.cost")
        if m["unpriced_models"]:
            assert cost.text == "not priced", cost.text
        else:
            close(value(cost), m["cost_usd"], m["period"])
            assert cost.text == f"${m['cost_usd']:,.2f}" or m["cost_usd"] < 0.01
    assert rows[UNKNOWN].find_element(By.TAG_NAME, "code").text == UNKNOWN
    assert UNKNOWN in browser.find_element(By.ID, "unpriced").text
    # The totals.
    total = browser.find_element(By.CSS_SELECTOR, "#usage-total strong.cost")
    close(value(total), sum(m["cost_usd"] for m in models), "total")
    assert total.text.endswith("+ not priced"), total.text
    tokens = sum(m[k] for m in models for k in ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens"))
    assert browser.find_element(By.XPATH, "//div[@id='usage-total']/div[span='Tokens']/strong").text == grouped(tokens)
    reads = sum(m["cache_read_tokens"] for m in models)
    inputs = sum(m["input_tokens"] + m["cache_creation_tokens"] + m["cache_read_tokens"] for m in models)
    close(value(browser.find_element(By.CSS_SELECTOR, "#cache-share strong")), reads / inputs, "cache share")

    # Top sessions and projects: `stats session` and `stats project`, in cost order.
    sessions = stats(served, "session")
    shown = browser.find_elements(By.CSS_SELECTOR, "#top-sessions tbody tr")
    assert [r.get_attribute("data-session") for r in shown] == [s["period"] for s in sessions[:10]]
    for r, s in zip(shown, sessions):
        close(value(r.find_element(By.CSS_SELECTOR, "td.cost")), s["cost_usd"], s["period"])
    mine = browser.find_element(By.CSS_SELECTOR, f"#top-sessions tr[data-session='{SESSION}'] td.title a")
    assert mine.text == TITLE
    projects = stats(served, "project")
    shown = browser.find_elements(By.CSS_SELECTOR, "#top-projects tbody tr")
    assert [r.get_attribute("data-project") for r in shown] == [p["period"] for p in projects[:10]]
    for r, p in zip(shown, projects):
        close(value(r.find_element(By.CSS_SELECTOR, "td.cost")), p["cost_usd"], p["period"])
    link = browser.find_element(By.CSS_SELECTOR, "#top-projects td.project a[title^='-home-dev-<img']")
    assert link.get_attribute("title") == PROJECT

    # The periods under the chart: the `stats` report the page names, row by row.
    table = browser.find_element(By.ID, "periods")
    report = table.get_attribute("data-report")
    periods = stats(served, report)
    browser.execute_script("document.querySelector('details.usage-periods').open = true")
    shown = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.get_attribute("data-period") for r in shown] == [p["period"] for p in periods]
    for r, p in zip(shown, periods):
        check_tokens(r, p, p["period"])
        close(value(r.find_element(By.CSS_SELECTOR, "td.cost")), p["cost_usd"], p["period"])
    # The charts: one bar per period with usage, coloured by the stylesheet, laid out.
    cost_chart = browser.find_element(By.CSS_SELECTOR, "#cost-chart svg.chart")
    assert len(cost_chart.find_elements(By.CSS_SELECTOR, "g.bar")) == len([p for p in periods if p["cost_usd"] > 0])
    assert cost_chart.size["width"] > 600 and cost_chart.size["height"] > 100
    fill = browser.execute_script("return getComputedStyle(document.querySelector('#token-chart rect.s3')).fill")
    assert fill not in ("", "none", "rgb(0, 0, 0)"), fill
    names = browser.execute_script("return [...document.querySelectorAll('svg.chart *')].map(e => e.tagName)")
    assert set(names) <= {"g", "rect", "line", "text", "title"}, set(names)
    bar = browser.execute_script("return document.querySelector('#cost-chart g.bar title').textContent")
    assert bar.startswith(periods[0]["period"] + ": $"), bar

    # The 30-day window, chosen from the page: `stats daily --since` that day.
    browser.find_element(By.CSS_SELECTOR, "nav.periods").find_element(By.LINK_TEXT, "30 days").click()
    wait(browser).until(EC.url_contains("period=30d"))
    since = browser.find_element(By.ID, "usage-scope").get_attribute("data-since")
    assert len(since) == 10
    daily = stats(served, "daily", "--since", since)
    shown = browser.find_elements(By.CSS_SELECTOR, "#periods tbody tr")
    assert [r.get_attribute("data-period") for r in shown] == [d["period"] for d in daily]
    close(value(browser.find_element(By.CSS_SELECTOR, "#usage-total strong.cost")), sum(d["cost_usd"] for d in daily), "30 days")

    # One project, from its link: `stats --project`.
    go(browser, served.url + "/usage?period=all&tz=UTC")
    browser.find_element(By.CSS_SELECTOR, "#top-projects td.project a[title^='-home-dev-<img']").click()
    wait(browser).until(EC.url_contains("project="))
    assert browser.execute_script(CHECK) == []
    one = stats(served, "model", "--project", PROJECT)
    close(value(browser.find_element(By.CSS_SELECTOR, "#usage-total strong.cost")), sum(m["cost_usd"] for m in one), "project")
    assert [r.get_attribute("data-session") for r in browser.find_elements(By.CSS_SELECTOR, "#top-sessions tbody tr")] == [SESSION]
    no_csp_violation(browser)


def test_a_session_page_shows_its_own_usage(mixed, browser):
    served = mixed
    go(browser, served.url + "/usage?period=all&tz=UTC")
    browser.find_element(By.CSS_SELECTOR, f"#top-sessions tr[data-session='{SESSION}'] td.title a").click()
    wait(browser).until(EC.url_contains(SESSION))
    assert browser.execute_script(CHECK) == []
    want = next(r for r in stats(served, "session", "--breakdown") if r["period"] == SESSION)
    panel = browser.find_element(By.ID, "session-usage")
    dd = {dt.text: dt.find_element(By.XPATH, "following-sibling::dd[1]") for dt in panel.find_elements(By.TAG_NAME, "dt")}
    close(value(dd["Cost"]), want["cost_usd"], "session cost")
    assert dd["Cost"].text.endswith("+ not priced"), dd["Cost"].text
    for label, key in [("Input", "input_tokens"), ("Output", "output_tokens"), ("Cache write", "cache_creation_tokens"), ("Cache read", "cache_read_tokens")]:
        assert dd[label].text == grouped(want[key]), label
    assert dd["Responses"].text == "3"
    rows = {r.get_attribute("data-model"): r for r in panel.find_elements(By.CSS_SELECTOR, "tbody tr")}
    assert set(rows) == {m["model"] for m in want["models"]}
    for m in want["models"]:
        cost = rows[m["model"]].find_element(By.CSS_SELECTOR, "td.cost")
        if m["model"] == UNKNOWN:
            assert cost.text == "not priced" and "$" not in cost.text
        else:
            close(value(cost), m["cost_usd"], m["model"])

    # The readable fixture session: one model, its sub-agent's responses counted with it.
    go(browser, f"{served.url}/session/-home-dev-webapp/11111111-1111-4111-8111-111111111111")
    want = next(r for r in stats(served, "session") if r["period"] == "11111111-1111-4111-8111-111111111111")
    panel = browser.find_element(By.ID, "session-usage")
    dd = {dt.text: dt.find_element(By.XPATH, "following-sibling::dd[1]") for dt in panel.find_elements(By.TAG_NAME, "dt")}
    close(value(dd["Cost"]), want["cost_usd"], "readable")
    assert dd["Input"].text == grouped(want["input_tokens"])
    assert dd["Responses"].text == "7 (2 by sub-agents)"
    assert not panel.find_elements(By.TAG_NAME, "table")


@pytest.fixture(scope="module")
def corpus_served():
    """A server of its own on the corpus (the screenshots show real sessions only)."""
    if not os.path.isdir(CORPUS):
        if os.environ.get("CI"):
            pytest.fail(f"the corpus is required under CI: {CORPUS} is missing")
        pytest.skip(f"no corpus at {CORPUS}")
    tmp = tempfile.mkdtemp(prefix="sessiondb-usage-")
    tree = os.path.join(tmp, "tree")
    # The corpus as a projects tree: one project per source repository (copies: import does
    # not follow symbolic links).
    for name in sorted(os.listdir(CORPUS)):
        if not name.endswith(".jsonl") or "__" not in name:
            continue
        repo, stem = name[:-len(".jsonl")].split("__", 1)
        project = os.path.join(tree, f"-corpus-{repo}")
        to = os.path.join(project, f"parent-{repo}", "subagents", stem + ".jsonl") if stem.startswith("agent-") else os.path.join(project, stem + ".jsonl")
        os.makedirs(os.path.dirname(to), exist_ok=True)
        shutil.copyfile(os.path.join(CORPUS, name), to)
    db = os.path.join(tmp, "corpus.db")
    binary = sessiondb_bin()
    subprocess.run([binary, "--db", db, "import", tree], check=True, capture_output=True)
    out = open(os.path.join(tmp, "serve.out"), "w+")
    proc = subprocess.Popen([binary, "--db", db, "serve", "--addr", "127.0.0.1:0"], stdout=out, stderr=subprocess.STDOUT)
    url = None
    for _ in range(200):
        out.seek(0)
        lines = [line for line in out.read().splitlines() if line.startswith("listening on ")]
        if lines or proc.poll() is not None:
            url = lines[0][len("listening on "):] if lines else None
            break
        time.sleep(0.05)
    try:
        assert url, "sessiondb serve did not start"
        yield url.rstrip("/"), db, tree
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.skipif(bool(os.environ.get("SESSIONDB_WEB_DB")), reason="the screenshots are taken once, on the SQLite run")
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_usage(corpus_served, browser, scheme):
    url, db, _ = corpus_served
    out = screenshot_dir()
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    try:
        browser.set_window_size(1280, 1560)
        go(browser, url + "/usage?period=all&tz=UTC")
        assert browser.execute_script(CHECK) == []
        models = json.loads(subprocess.run([sessiondb_bin(), "--db", db, "stats", "model", "--json", "--timezone", "UTC"],
                                           check=True, capture_output=True).stdout)
        close(value(browser.find_element(By.CSS_SELECTOR, "#usage-total strong.cost")), sum(m["cost_usd"] for m in models), "corpus")
        path = os.path.join(out, f"usage-{scheme}.png")
        assert browser.save_screenshot(path) and os.path.getsize(path) > 1000
        go(browser, f"{url}/session/-corpus-swordintel/{CORPUS_SESSION}")
        panel = browser.find_element(By.ID, "session-usage")
        assert len(panel.find_elements(By.CSS_SELECTOR, "tbody tr")) == 2
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", panel)
        path = os.path.join(out, f"session-usage-{scheme}.png")
        assert panel.screenshot(path) and os.path.getsize(path) > 1000
    finally:
        browser.set_window_size(1280, 900)
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
