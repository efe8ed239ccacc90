"""The web viewer in a real browser (headless Chromium over WebDriver) against a real
`sessiondb serve`: browsing, filtering, expanding, the resume view, search, the actions,
keyboard use, phone width, and a hostile transcript that must stay text. Writes screenshots
of the three pages, light and dark, to $WEB_SCREENSHOTS (default: a temporary folder)."""

import os
import subprocess
import tempfile
import time

import pytest
from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from fixture import AGENT, HOSTILE, PROJECT, READABLE, TAGGED


class ReloadTolerantWait(WebDriverWait):
    """Waits through a reload: chromedriver sometimes reports an element that a reload
    detached as an "unhandled inspector error" ("Node with given id does not belong to the
    document") instead of a stale element; that is read as "not yet", like staleness."""

    def until(self, method, message=""):
        def tolerant(driver):
            try:
                return method(driver)
            except WebDriverException as e:
                if "does not belong to the document" in str(e):
                    return False
                raise

        return super().until(tolerant, message)


def wait(driver, seconds=15):
    # Actions reload the page: an element found just before the reload goes stale.
    return ReloadTolerantWait(driver, seconds, ignored_exceptions=[StaleElementReferenceException, NoSuchElementException])


def go(driver, url):
    driver.get(url)
    wait(driver).until(lambda d: d.execute_script("return document.body && document.body.dataset.ready === '1'"))


def loaded(driver):
    """Whether every open fold that loads its content when opened has it."""
    return driver.execute_script("return document.querySelectorAll('details[open][data-src]:not([data-state=loaded])').length === 0")


def open_every_fold(driver):
    """Opens every fold and waits for the ones filled when opened, then the folds inside those."""
    for _ in range(6):
        opened = driver.execute_script(
            "const closed = document.querySelectorAll('details:not([open])');"
            "for (const d of closed) d.open = true; return closed.length;"
        )
        wait(driver, 60).until(loaded)
        if not opened:
            return
    raise AssertionError("folds kept appearing")


def session_url(served, session):
    return f"{served.url}/session/{PROJECT}/{session}"


def rows(driver):
    return [r.text for r in driver.find_elements(By.CSS_SELECTOR, "table.sessions tbody tr")]


def test_sessions_page_lists_and_filters_by_tag(served, browser):
    go(browser, served.url + "/")
    # (Other tests add sessions of other projects.)
    listed = [r for r in rows(browser) if "~dev/webapp" in r]
    assert len(listed) == 3
    assert "Readable demo session" in listed[0], "newest first"
    tag = browser.find_element(By.NAME, "tag")
    tag.send_keys("release")
    tag.send_keys(Keys.ENTER)
    wait(browser).until(EC.url_contains("tag=release"))
    listed = rows(browser)
    assert len(listed) == 1 and TAGGED in listed[0]


def test_session_expands_a_tool_call_and_a_sub_agent(served, browser):
    go(browser, served.url + "/")
    browser.find_element(By.LINK_TEXT, "Readable demo session").click()
    wait(browser).until(EC.url_contains(READABLE))
    tool = browser.find_element(By.XPATH, "//details[contains(@class,'tool')][.//span[@class='tname' and text()='Bash']]")
    # The call's input and result are fetched when the fold is first opened.
    assert not tool.find_elements(By.CSS_SELECTOR, ".tres pre")
    tool.find_element(By.TAG_NAME, "summary").click()
    assert tool.get_attribute("open") is not None
    wait(browser).until(lambda d: tool.get_attribute("data-state") == "loaded")
    assert "Cargo.toml" in tool.find_element(By.CSS_SELECTOR, ".tres pre").text
    # A shell command is drawn as a terminal: the command, then its output.
    assert "ls -la" in tool.find_element(By.CSS_SELECTOR, ".tin pre.term.cmd").text
    assert "Cargo.toml" in tool.find_element(By.CSS_SELECTOR, ".tres pre.term.out").text
    # The sub-agent sits inside its Task call; opening it loads its conversation in place.
    task = browser.find_element(By.XPATH, "//details[contains(@class,'tool')][.//span[@class='tname' and text()='Task']]")
    task.find_element(By.TAG_NAME, "summary").click()
    agent = task.find_element(By.CSS_SELECTOR, "details.subagent")
    agent.find_element(By.TAG_NAME, "summary").click()
    body = agent.find_element(By.CSS_SELECTOR, ".agent-body")
    wait(browser).until(lambda d: "okapi" in body.text)
    # And it links to the sub-agent's own page.
    link = agent.find_element(By.LINK_TEXT, "Open the sub-agent's conversation")
    assert link.get_attribute("href").endswith(f"/agent/{AGENT}")


def test_switch_to_the_resume_view(served, browser):
    go(browser, session_url(served, READABLE))
    browser.find_element(By.LINK_TEXT, "What the model sees on resume").click()
    wait(browser).until(EC.url_contains("view=resume"))
    current = browser.find_element(By.CSS_SELECTOR, "nav.views a[aria-current='page']")
    assert current.text == "What the model sees on resume"
    assert browser.find_elements(By.CSS_SELECTOR, "article.msg")
    assert "Restored state" in browser.find_element(By.CSS_SELECTOR, "aside.panel").text


def test_search_and_follow_a_hit_into_a_tool_result(served, browser):
    go(browser, served.url + "/search")
    browser.find_element(By.CSS_SELECTOR, "main input[name=q]").send_keys("Cargo")
    browser.find_element(By.CSS_SELECTOR, "main input[name=tools]").click()
    browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "ol.hits a.hit")))
    mark = browser.find_element(By.CSS_SELECTOR, ".snippet mark")
    assert mark.text.lower() == "cargo"
    browser.find_element(By.CSS_SELECTOR, "ol.hits a.hit").click()
    wait(browser).until(EC.url_contains("#m-"))
    go(browser, browser.current_url)
    target_id = browser.current_url.split("#", 1)[1]
    target = browser.find_element(By.ID, target_id)
    # The result sits inside the folded tool call: following the hit unfolds it (and loads it).
    wait(browser).until(lambda d: target.is_displayed() and "Cargo.toml" in target.text)


def test_rename_and_tag_from_the_page(served, browser):
    go(browser, session_url(served, TAGGED))
    title = browser.find_element(By.NAME, "title")
    title.clear()
    title.send_keys("Release notes, renamed")
    title.send_keys(Keys.ENTER)
    wait(browser).until(lambda d: d.find_element(By.ID, "title").text == "Release notes, renamed")
    go(browser, session_url(served, TAGGED))
    tag = browser.find_element(By.CSS_SELECTOR, "form[data-action=tag] input[name=tag]")
    tag.clear()
    tag.send_keys("shipped")
    browser.execute_script("document.body.dataset.old = '1'")
    browser.find_element(By.CSS_SELECTOR, "form[data-action=tag] button[type=submit]").click()
    # The page reloads once the tag is stored.
    wait(browser).until(lambda d: d.execute_script("return document.body.dataset.ready === '1' && !document.body.dataset.old"))
    assert browser.find_element(By.CSS_SELECTOR, "form[data-action=tag] input[name=tag]").get_attribute("value") == "shipped"
    go(browser, served.url + "/?tag=shipped")
    listed = rows(browser)
    assert len(listed) == 1 and "Release notes, renamed" in listed[0]
    # Clear the tag again.
    go(browser, session_url(served, TAGGED))
    browser.find_element(By.CSS_SELECTOR, "button.clear-tag").click()
    wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "form[data-action=tag] input[name=tag]").get_attribute("value") == "")


def test_fork_at_a_message_then_delete_the_fork(served, browser):
    go(browser, session_url(served, READABLE))
    third = browser.find_element(By.ID, "m-11111111-0000-4000-8000-000000000003")
    third.find_element(By.CSS_SELECTOR, "button.fork").click()
    wait(browser).until(lambda d: READABLE not in d.current_url and "/session/" in d.current_url)
    go(browser, browser.current_url)
    fork_url = browser.current_url
    text = browser.find_element(By.CSS_SELECTOR, "section.thread").text
    assert "Let me look at the project files." in text
    assert "three modules" not in text
    # Delete asks first: dismissing keeps the session.
    browser.find_element(By.CSS_SELECTOR, "button.delete").click()
    wait(browser).until(EC.alert_is_present())
    browser.switch_to.alert.dismiss()
    go(browser, fork_url)
    assert browser.find_elements(By.CSS_SELECTOR, "button.delete")
    browser.find_element(By.CSS_SELECTOR, "button.delete").click()
    wait(browser).until(EC.alert_is_present())
    browser.switch_to.alert.accept()
    wait(browser).until(lambda d: d.current_url.rstrip("/") == served.url)
    fork_id = fork_url.rstrip("/").rsplit("/", 1)[1]
    assert all(fork_id not in r for r in rows(browser))


def test_keyboard_moves_between_messages(served, browser):
    go(browser, session_url(served, READABLE))
    browser.find_element(By.TAG_NAME, "body").send_keys("j")
    first = browser.switch_to.active_element
    assert first.tag_name == "article" and "msg" in first.get_attribute("class")
    first.send_keys("j")
    second = browser.switch_to.active_element
    assert second.get_attribute("id") != first.get_attribute("id")
    second.send_keys("/")
    assert browser.switch_to.active_element.get_attribute("id") == "quick-search"


def test_phone_width_does_not_scroll_sideways(served, browser):
    try:
        browser.set_window_size(390, 844)
        for url in (served.url + "/", session_url(served, READABLE), served.url + "/search?q=zebra"):
            go(browser, url)
            overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{url} is {overflow}px wider than a phone"
    finally:
        browser.set_window_size(1280, 900)


INJECTION_CHECK = """
const found = [];
for (const el of document.querySelectorAll('*')) {
  for (const a of el.attributes) {
    const v = a.value.toLowerCase();
    if (a.name.startsWith('on')) found.push(el.tagName + ' ' + a.name);
    if ((a.name === 'href' || a.name === 'src') && (v.startsWith('javascript:') || (v.startsWith('data:') && !v.startsWith('data:image/png')))) found.push(el.tagName + ' ' + a.name + '=' + v.slice(0, 40));
  }
}
for (const sel of ['iframe', 'svg', 'object', 'embed', 'style', 'b[onmouseover]', 'img[src=x]', 'form:not(.quick):not(.act):not(.filters):not(#login)']) {
  for (const el of document.querySelectorAll(sel)) found.push('element ' + sel);
}
const scripts = Array.from(document.scripts).map(s => s.getAttribute('src'));
if (scripts.length !== 1 || !/^[/]assets[/]app[.]js[?]v=[0-9a-f]{16}$/.test(scripts[0])) found.push('scripts ' + JSON.stringify(scripts));
if (window.__pwned !== undefined) found.push('script ran: ' + window.__pwned);
return found;
"""


def test_hostile_transcript_renders_as_text(served, browser):
    for url in (
        session_url(served, HOSTILE),
        session_url(served, HOSTILE) + "?view=resume",
        served.url + "/",
        served.url + "/search?q=pwned&tools=1",
    ):
        go(browser, url)
        # Open every fold (loading what is loaded on opening) so that everything is laid out
        # and hovered-over markup would exist.
        open_every_fold(browser)
        assert browser.execute_script(INJECTION_CHECK) == [], url
    go(browser, session_url(served, HOSTILE))
    text = browser.find_element(By.CSS_SELECTOR, "section.thread").text
    assert "<script>window.__pwned='user-script'</script>" in text
    assert "[U+202E]" in text
    # The 10 MB output is cut (inside its folded tool call), with the way to see all of it.
    tool = browser.find_element(By.CSS_SELECTOR, "details.tool")
    tool.find_element(By.TAG_NAME, "summary").click()
    cut = wait(browser).until(lambda d: tool.find_element(By.CSS_SELECTOR, ".tres p.cut"))
    assert "more characters" in cut.text
    cut.find_element(By.LINK_TEXT, "Show all").click()
    wait(browser, 60).until(EC.presence_of_element_located((By.CSS_SELECTOR, "pre.whole")))
    assert browser.execute_script(INJECTION_CHECK) == []
    # Shown in parts (a browser lays out 10 MB of text slowly); the last part and the raw
    # line are one click away.
    parts = browser.find_element(By.CSS_SELECTOR, "span.part").text
    assert parts.startswith("Part 1 of ") and int(parts.rsplit(" ", 1)[1]) >= 50, parts
    raw = browser.find_element(By.LINK_TEXT, "Download the line").get_attribute("href")
    length = browser.execute_async_script(
        "const done = arguments[1]; fetch(arguments[0]).then(r => r.text()).then(t => done(t.length));", raw
    )
    assert length > 10_000_000
    browser.find_element(By.LINK_TEXT, "Part 2 →").click()
    wait(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "span.part").text.startswith("Part 2 of"))
    assert browser.execute_script(INJECTION_CHECK) == []


def test_login_with_a_token(served, browser):
    """A server with a token: the page asks for it once, then the cookie carries it."""
    from conftest import sessiondb_bin

    out = open(os.path.join(served.tmp, "serve-token.out"), "w+")
    env = dict(os.environ, SESSIONDB_TOKEN="pa55-w0rd-0123456789")
    proc = subprocess.Popen([sessiondb_bin(), "--db", served.db, "serve", "--addr", "127.0.0.1:0"],
                            stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        url = None
        for _ in range(200):
            out.seek(0)
            lines = [line for line in out.read().splitlines() if line.startswith("listening on ")]
            if lines:
                url = lines[0][len("listening on "):]
                break
            time.sleep(0.05)
        assert url, "the server with a token did not start"
        go(browser, url + "/search?q=zebra")
        assert "/login?next=" in browser.current_url
        field = browser.find_element(By.NAME, "token")
        field.send_keys("wrong")
        field.send_keys(Keys.ENTER)
        wait(browser).until(lambda d: d.find_element(By.ID, "login-error").text != "")
        field.clear()
        field.send_keys("pa55-w0rd-0123456789")
        field.send_keys(Keys.ENTER)
        wait(browser).until(EC.url_contains("/search?q=zebra"))
        go(browser, browser.current_url)
        assert browser.find_elements(By.CSS_SELECTOR, "ol.hits a.hit")
        # The cookie is not readable by script.
        assert "sessiondb_" not in browser.execute_script("return document.cookie")
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        browser.delete_all_cookies()


def screenshot_dir():
    path = os.environ.get("WEB_SCREENSHOTS") or tempfile.mkdtemp(prefix="sessiondb-screens-")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots(served, browser, scheme):
    out = screenshot_dir()
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    try:
        browser.set_window_size(1280, 900)
        pages = {
            "sessions": served.url + "/",
            "search": served.url + "/search?q=modules",
            "session": session_url(served, READABLE),
        }
        for name, url in pages.items():
            go(browser, url)
            dark = browser.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches")
            assert dark == (scheme == "dark")
            if name == "session":
                browser.execute_script("document.querySelector('details.tool').open = true")
                wait(browser).until(loaded)
            path = os.path.join(out, f"{name}-{scheme}.png")
            assert browser.save_screenshot(path)
            assert os.path.getsize(path) > 1000
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_no_alert_left_open(browser):
    try:
        browser.switch_to.alert.dismiss()
        pytest.fail("an alert was left open")
    except NoAlertPresentException:
        pass
