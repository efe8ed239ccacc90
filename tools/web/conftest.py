"""Fixtures for the web viewer's browser tests: a `sessiondb serve` on a temporary database
(or the store `SESSIONDB_WEB_DB` names) holding tools/web/fixture.py's tree, and headless
Chromium driven over WebDriver."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fixture  # noqa: E402  (same folder)

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
]


def find_browser():
    """(chromium, chromedriver) paths, or None when either is missing."""
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    if not chromium or not driver:
        return None
    return chromium, driver


def sessiondb_bin():
    path = os.environ.get("SESSIONDB_BIN")
    if not path:
        root = os.path.dirname(os.path.dirname(HERE))
        path = os.path.join(root, "target", "debug", "sessiondb")
    if not os.path.exists(path):
        pytest.fail(f"no sessiondb binary at {path} (set SESSIONDB_BIN or cargo build)")
    return path


class Served:
    """A running `sessiondb serve`: its URL, database and temporary folder."""

    def __init__(self, tmp, url, proc, db):
        self.tmp = tmp
        self.url = url.rstrip("/")
        self.proc = proc
        self.db = db


@pytest.fixture(scope="session")
def served():
    tmp = tempfile.mkdtemp(prefix="sessiondb-web-")
    tree = os.path.join(tmp, "tree")
    fixture.main([tree, "--big"])
    # SESSIONDB_WEB_DB runs the same tests on another store, e.g. an empty PostgreSQL team
    # store (`postgres://…/db`): the viewer must behave the same on it.
    db = os.environ.get("SESSIONDB_WEB_DB") or os.path.join(tmp, "web.db")
    binary = sessiondb_bin()
    subprocess.run([binary, "--db", db, "import", tree], check=True, capture_output=True)
    out = open(os.path.join(tmp, "serve.out"), "w+")
    proc = subprocess.Popen([binary, "--db", db, "serve", "--addr", "127.0.0.1:0"], stdout=out, stderr=subprocess.STDOUT)
    url = None
    for _ in range(200):
        out.seek(0)
        for line in out.read().splitlines():
            if line.startswith("listening on "):
                url = line[len("listening on "):]
        if url or proc.poll() is not None:
            break
        time.sleep(0.05)
    if not url:
        proc.kill()
        pytest.fail("sessiondb serve did not start")
    try:
        yield Served(tmp, url, proc, db)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def browser():
    found = find_browser()
    if not found:
        if os.environ.get("CI"):
            pytest.fail("chromium and chromedriver are required under CI (apt-get install chromium chromium-driver)")
        pytest.skip("chromium or chromedriver not installed")
    chromium, driver_path = found
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="sessiondb-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
