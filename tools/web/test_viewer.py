"""The viewer's drawing of tool calls, its folding of bookkeeping, its switches and its live
pages, in a real browser against the same `sessiondb serve` as test_browser.py. Each test
imports what it needs into the served store (which also exercises the live pages); writes
screenshots of corpus sessions to $WEB_SCREENSHOTS."""

import json
import os
import shutil
import subprocess
import time

import pytest
from selenium.webdriver.common.by import By

import tool_shapes
from conftest import sessiondb_bin
from test_browser import INJECTION_CHECK, go, loaded, open_every_fold, screenshot_dir, wait

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "..", "shared", "corpus", "claude-code")
# A corpus session with Edit, Write, Bash, Read and TodoWrite calls (d-kimuson/claude-code-viewer's).
CORPUS_SESSION = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"


def import_tree(served, tree):
    subprocess.run([sessiondb_bin(), "--db", served.db, "import", tree], check=True, capture_output=True)


@pytest.fixture(scope="module")
def tools_page(served, tmp_path_factory):
    tree = str(tmp_path_factory.mktemp("tools"))
    tool_shapes.tools_session(tree)
    import_tree(served, tree)
    return f"{served.url}/session/{tool_shapes.PROJECT}/{tool_shapes.SESSION}"


def tool(browser, name, nth=0):
    """The fold of the `nth` call of tool `name`, opened and loaded."""
    folds = [
        d for d in browser.find_elements(By.CSS_SELECTOR, "details.tool")
        if browser.execute_script("return arguments[0].querySelector(':scope > summary > .tname').textContent", d) == name
    ]
    fold = folds[nth]
    if fold.get_attribute("open") is None:
        fold.find_element(By.TAG_NAME, "summary").click()
    wait(browser).until(lambda d: fold.get_attribute("data-state") == "loaded")
    return fold


def texts(fold, css):
    return [e.text for e in fold.find_elements(By.CSS_SELECTOR, css)]


def test_each_tool_is_drawn_for_people(tools_page, browser):
    go(browser, tools_page)
    # Edit: a diff with the file's line numbers from Claude Code's own patch.
    edit = tool(browser, "Edit")
    assert "/home/dev/toolbox/src/parser.rs" in edit.find_element(By.CSS_SELECTOR, ".tin p.file").text
    assert texts(edit, "table.diff tr.del td.code") == ["    let mut p = Parser::new(input);", "    p.tree()"]
    assert texts(edit, "table.diff tr.add td.code") == ["    let mut parser = Parser::new(input);", "    parser.tree()"]
    assert texts(edit, "table.diff tr.del td.ln")[0] == "41"
    assert "@@ line 40 @@" in edit.find_element(By.CSS_SELECTOR, "table.diff tr.hunk").text
    # MultiEdit: one diff per edit.
    multi = tool(browser, "MultiEdit")
    assert len(multi.find_elements(By.CSS_SELECTOR, "table.diff")) == 2
    assert "const MAX: usize = 64;" in texts(multi, "tr.add td.code")
    # Write: the file with numbered lines, the rest behind an expander.
    write = tool(browser, "Write")
    shown = write.find_element(By.CSS_SELECTOR, ".tin > pre.code").text
    assert "line 40 of the notes" in shown and "line 41 of the notes" not in shown
    more = write.find_element(By.CSS_SELECTOR, "details.more-lines")
    assert "Show all 60 lines" in more.text
    more.find_element(By.TAG_NAME, "summary").click()
    assert "line 60 of the notes" in more.find_element(By.CSS_SELECTOR, "pre.code").text
    # Bash: a terminal with the command, stdout and stderr apart; a failure's exit status.
    bash = tool(browser, "Bash")
    assert "cargo test --lib parser" in bash.find_element(By.CSS_SELECTOR, "pre.term.cmd").text
    assert bash.find_element(By.CSS_SELECTOR, "pre.term.out").text == "running 3 tests\ntest result: ok. 3 passed"
    assert bash.find_element(By.CSS_SELECTOR, "pre.term.err").text == "warning: unused variable `x`"
    failed = tool(browser, "Bash", 1)
    assert failed.find_element(By.CSS_SELECTOR, "p.exit.error").text == "exit 101"
    assert "could not compile" in failed.find_element(By.CSS_SELECTOR, "pre.term.out").text
    # Read: the excerpt with its line numbers.
    read = tool(browser, "Read")
    assert texts(read, "pre.code .ln") == ["40", "41", "42"]
    assert "1,234 lines in the file" in read.text
    # Grep and Glob: lists of files.
    assert texts(tool(browser, "Grep"), "ul.files li") == ["src/parser.rs", "src/lib.rs"]
    assert len(texts(tool(browser, "Glob"), "ul.files li")) == 3
    # TodoWrite: a checklist.
    todo = tool(browser, "TodoWrite")
    assert [e.get_attribute("class") for e in todo.find_elements(By.CSS_SELECTOR, "ul.todos li")] == ["done", "doing", "todo"]
    assert "<script>" in todo.find_element(By.CSS_SELECTOR, "ul.todos li.doing").text
    # WebFetch and WebSearch: links that open without a referrer; no script URL becomes one.
    fetch = tool(browser, "WebFetch")
    a = fetch.find_element(By.CSS_SELECTOR, ".tin a")
    assert a.get_attribute("href") == "https://doc.rust-lang.org/std/"
    assert a.get_attribute("rel") == "noopener noreferrer"
    search = tool(browser, "WebSearch")
    hrefs = [e.get_attribute("href") for e in search.find_elements(By.CSS_SELECTOR, "ol.links a")]
    assert hrefs == ["https://crates.io/crates/nom", "https://docs.rs/winnow"]
    # Agent: the sub-agent's answer, and its transcript one click away.
    agent = tool(browser, "Agent")
    assert agent.find_element(By.CSS_SELECTOR, ".tres .md strong").text == "no"
    sub = agent.find_element(By.CSS_SELECTOR, "details.subagent")
    sub.find_element(By.TAG_NAME, "summary").click()
    wait(browser).until(lambda d: "pangolin" in sub.text)
    link = sub.find_element(By.LINK_TEXT, "Open the sub-agent's conversation")
    assert link.get_attribute("href").endswith(f"/agent/{tool_shapes.AGENT}")
    # An image in a tool result, inline from the stored bytes; an unknown tool as JSON.
    shot = tool(browser, "mcp__shots__screenshot")
    assert shot.find_element(By.CSS_SELECTOR, ".tres img").get_attribute("src").startswith("data:image/png;base64,")
    assert '"selector": "#app"' in shot.find_element(By.CSS_SELECTOR, ".tin pre").text
    # Everything open: still nothing but text.
    open_every_fold(browser)
    assert browser.execute_script(INJECTION_CHECK) == []


def test_bookkeeping_folds_and_a_turn_is_one_card(tools_page, browser):
    go(browser, tools_page)
    # One card for the prompt, one for the whole assistant turn: 14 API messages streamed
    # as 16 records, their 13 results beside their calls, the bookkeeping between them.
    cards = browser.find_elements(By.CSS_SELECTOR, ".conversation > article.msg")
    assert [c.get_attribute("class") for c in cards] == ["msg user", "msg assistant"]
    assert len(cards[1].find_elements(By.CSS_SELECTOR, "details.tool")) == 13
    assert len(cards[1].find_elements(By.CSS_SELECTOR, ".part")) == 15
    assert len(cards[1].find_elements(By.CSS_SELECTOR, "button.fork")) == 16
    # Two progress records inside the turn: one line; the three records after it: one line.
    runs = [r.find_element(By.TAG_NAME, "summary").text for r in browser.find_elements(By.CSS_SELECTOR, "details.meta-run")]
    assert any(r.startswith("2 records progress ×2") for r in runs), runs
    assert any(r.startswith("3 records system · stop_hook_summary · file-history-snapshot · last-prompt") for r in runs), runs
    # Opening a run shows each record's own fold, loaded when opened.
    run = browser.find_elements(By.CSS_SELECTOR, "details.meta-run")[-1]
    run.find_element(By.TAG_NAME, "summary").click()
    inner = run.find_elements(By.CSS_SELECTOR, ".run-body > details")
    assert len(inner) == 3
    inner[2].find_element(By.TAG_NAME, "summary").click()
    wait(browser).until(lambda d: inner[2].get_attribute("data-state") == "loaded")
    assert "lastPrompt" in inner[2].text


def test_switches_hide_thinking_tool_calls_and_bookkeeping(tools_page, browser):
    go(browser, tools_page)
    thread = browser.find_element(By.CSS_SELECTOR, "section.thread")
    switch = {i.get_attribute("data-toggle"): i for i in thread.find_elements(By.CSS_SELECTOR, ".toggles input")}
    assert set(switch) == {"thinking", "tools", "meta"}
    visible = lambda css: sum(1 for e in thread.find_elements(By.CSS_SELECTOR, css) if e.is_displayed())  # noqa: E731
    assert visible("details.tool") == 13 and visible("details.thinking") == 1 and visible("details.meta-run") >= 2
    for name, css in [("tools", "details.tool"), ("thinking", "details.thinking"), ("meta", "details.meta-run")]:
        switch[name].click()
        assert visible(css) == 0, name
    # Remembered across pages.
    go(browser, tools_page)
    thread = browser.find_element(By.CSS_SELECTOR, "section.thread")
    assert visible("details.tool") == 0
    for i in thread.find_elements(By.CSS_SELECTOR, ".toggles input"):
        i.click()
    assert visible("details.tool") == 13


def test_the_list_shows_the_project_path_and_local_times(tools_page, served, browser):
    browser.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    try:
        go(browser, served.url + "/?project=" + tool_shapes.PROJECT)
        check_project_and_time(browser)
    finally:
        browser.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": ""})


def check_project_and_time(browser):
    row = browser.find_element(By.CSS_SELECTOR, "table.sessions tbody tr")
    project = row.find_element(By.CSS_SELECTOR, "td.project a")
    assert project.text in ("~dev/toolbox", "~/toolbox")
    assert project.get_attribute("title") == "/home/dev/toolbox"
    when = row.find_element(By.CSS_SELECTOR, "td[data-label=Updated] time")
    assert when.text.endswith(" ago")
    # The exact time on hover, in the reader's time zone (the script wrote it): the file was
    # last written at 12:00 UTC, 21:00 in Tokyo.
    title = when.get_attribute("title")
    assert "2025" in title and ("9:00:00 PM" in title or "21:00:00" in title), title


def write_lines(path, records):
    with open(path, "a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def turn(session, n, parent, word):
    """A prompt and its answer, as Claude Code appends them."""
    user = f"{session[:8]}-0000-4000-8000-{2 * n:012d}"
    reply = f"{session[:8]}-0000-4000-8000-{2 * n + 1:012d}"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/live", "sessionId": session, "version": "2.1.0"}
    return reply, [
        dict(base, parentUuid=parent, type="user", uuid=user, timestamp=stamp, message={"role": "user", "content": f"Tell me about {word}."}),
        dict(base, parentUuid=user, type="assistant", uuid=reply, timestamp=stamp,
             message={"id": f"msg_live_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                      "content": [{"type": "text", "text": f"All about the **{word}**."}], "stop_reason": "end_turn",
                      "usage": {"input_tokens": 10, "output_tokens": 5}}),
    ]


def test_a_new_turn_appears_without_a_reload(served, browser, tmp_path):
    tree = str(tmp_path)
    session = "55555555-5555-4555-8555-555555555555"
    path = os.path.join(tree, "-home-dev-live", session + ".jsonl")
    os.makedirs(os.path.dirname(path))
    parent, lines = turn(session, 1, None, "aardvark")
    write_lines(path, lines)
    import_tree(served, tree)
    go(browser, f"{served.url}/session/-home-dev-live/{session}")
    wait(browser).until(lambda d: d.execute_script("return document.body.dataset.live === 'open'"))
    browser.execute_script("window.__samePage = 1")
    cards = len(browser.find_elements(By.CSS_SELECTOR, ".conversation > article.msg"))
    # Opened folds elsewhere stay open through an update.
    browser.execute_script("document.querySelector('.conversation > article.msg').dataset.kept = '1'")
    # Claude Code appends a turn; capture (here: import) stores it.
    parent, lines = turn(session, 2, parent, "okapi")
    write_lines(path, lines)
    import_tree(served, tree)
    stored = time.monotonic()
    wait(browser, 10).until(lambda d: "okapi" in d.find_element(By.CSS_SELECTOR, "section.thread").text)
    took = time.monotonic() - stored
    assert took <= 2.0, f"the new turn took {took:.2f} s"
    assert browser.execute_script("return window.__samePage") == 1, "the page was reloaded"
    assert len(browser.find_elements(By.CSS_SELECTOR, ".conversation > article.msg")) == cards + 2
    assert browser.execute_script("return document.querySelector('.conversation > article.msg').dataset.kept") == "1"

    # The list follows too: a new session appears, marked live.
    go(browser, served.url + "/")
    wait(browser).until(lambda d: d.execute_script("return document.body.dataset.live === 'open'"))
    browser.execute_script("window.__samePage = 1")
    other = "66666666-6666-4666-8666-666666666666"
    _, lines = turn(other, 1, None, "narwhal")
    write_lines(os.path.join(tree, "-home-dev-live", other + ".jsonl"), lines)
    import_tree(served, tree)
    stored = time.monotonic()
    wait(browser, 10).until(lambda d: "narwhal" in d.find_element(By.ID, "listing").text)
    took = time.monotonic() - stored
    assert took <= 2.0, f"the new session took {took:.2f} s"
    assert browser.execute_script("return window.__samePage") == 1
    row = browser.find_element(By.XPATH, "//table[@class='sessions']//tr[contains(., 'narwhal')]")
    assert row.find_element(By.CSS_SELECTOR, ".live-mark").text == "live"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_a_corpus_session(served, browser, scheme, tmp_path):
    """An Edit's diff and a Bash call from a real transcript of the corpus."""
    source = os.path.join(CORPUS, f"ccviewer__{CORPUS_SESSION}.jsonl")
    if not os.path.exists(source):
        if os.environ.get("CI"):
            pytest.fail(f"the corpus is required under CI: {source} is missing")
        pytest.skip(f"no corpus at {CORPUS}")
    tree = str(tmp_path)
    os.makedirs(os.path.join(tree, "-path-to-Demo"))
    # (A copy in a temporary folder: import does not follow symbolic links.)
    shutil.copyfile(source, os.path.join(tree, "-path-to-Demo", CORPUS_SESSION + ".jsonl"))
    import_tree(served, tree)
    out = screenshot_dir()
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    try:
        browser.set_window_size(1280, 900)
        go(browser, f"{served.url}/session/-path-to-Demo/{CORPUS_SESSION}")
        for name, kind, hint in [("edit", "Edit", "src/app/page.tsx"), ("bash", "Bash", "ls -la components/")]:
            fold = browser.find_element(
                By.XPATH,
                f"//details[contains(@class,'tool') and not(contains(@class,'error'))][./summary/span[@class='tname' and text()='{kind}']][contains(./summary/code, '{hint}')]",
            )
            browser.execute_script("arguments[0].scrollIntoView({block: 'start'}); arguments[0].open = true", fold)
            wait(browser).until(loaded)
            card = fold.find_element(By.XPATH, "./ancestor::article")
            assert fold.find_elements(By.CSS_SELECTOR, "table.diff tr.hunk" if kind == "Edit" else "pre.term.out")
            path = os.path.join(out, f"{name}-{scheme}.png")
            assert fold.screenshot(path)
            assert os.path.getsize(path) > 1000
            assert card.is_displayed()
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
