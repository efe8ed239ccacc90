#!/usr/bin/env python3
"""Benchmark of the web viewer in headless Chromium (a benchmark, not a test).

    tools/web/bench.py [--bin target/release/sessiondb] [--compare OTHER_BIN]
                       [--corpus DIR] [--sessions 10000] [--size 100M] [--runs 7]
                       [--cpu-slowdown N] [--work DIR]

1. Imports the corpus (default ../shared/corpus/claude-code beside the repository) as one
   project, serves it, and loads the page of its largest session `runs` times (and its
   resume view).
2. Builds a tree of `sessions` sessions with tools/gen_sessions.py (`size` bytes in all),
   imports it, and loads the sessions page (`/`, 50 per page) `runs` times (and page 100,
   and a name filter).

For each it prints the median and the worst of: the server's answer (navigation
responseEnd), DOMContentLoaded, and the load event ("ready": the page laid out, its script
run), in milliseconds, from the Navigation Timing API, with the bytes of HTML and the
number of elements.

`--compare OTHER_BIN` serves the same databases with a second binary at the same time and
alternates the two, load by load, so that both are measured under the same machine load;
the figures of OTHER_BIN are printed as "before". `--cpu-slowdown N` has Chromium run its
pages N times slower (DevTools CPU throttling), to see what a busy machine does to the
browser's share. `--renderer-cpu` also prints the CPU time the page's renderer main thread
spent (the sum of its top-level tasks' thread time, from Chromium's trace): unlike the
wall-clock figures it hardly depends on how busy the machine is. Needs selenium, chromium,
chromedriver.
"""

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from conftest import CHROMIUM_FLAGS, find_browser  # noqa: E402

TIMING = (
    "const n = performance.getEntriesByType('navigation')[0];"
    "return [n.responseEnd, n.domContentLoadedEventEnd, n.loadEventEnd, n.transferSize,"
    " document.getElementsByTagName('*').length];"
)


def serve(binary, db, log):
    out = open(log, "w+")
    proc = subprocess.Popen([binary, "--db", db, "serve", "--addr", "127.0.0.1:0"], stdout=out, stderr=subprocess.STDOUT)
    for _ in range(400):
        out.seek(0)
        for line in out.read().splitlines():
            if line.startswith("listening on "):
                return proc, line[len("listening on "):]
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("sessiondb serve did not start")


# WebDriver's get() may return before the load event under a heavy machine load: wait for it.
TIMING_AFTER_LOAD = (
    "const done = arguments[0];"
    "(function poll() {"
    "  const n = performance.getEntriesByType('navigation')[0];"
    "  if (n && n.loadEventEnd > 0) done((function () {" + TIMING + "})());"
    "  else setTimeout(poll, 10);"
    "})();"
)


def renderer_cpu_ms(driver):
    """CPU milliseconds of the renderer main thread in the trace collected since the last call."""
    events = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
    events = [m["params"] for m in events if m.get("method") == "Tracing.dataCollected"]
    names = {(e["pid"], e["tid"]): e["args"].get("name") for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    per_process = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "toplevel" and "tdur" in e and names.get((e["pid"], e["tid"])) == "CrRendererMain":
            per_process[e["pid"]] += e["tdur"]
    return max(per_process.values(), default=0) / 1000


def load(driver, url, cpu):
    driver.get("about:blank")
    if cpu:
        driver.get_log("performance")
    driver.get(url)
    timing = driver.execute_async_script(TIMING_AFTER_LOAD)
    if cpu:
        time.sleep(0.3)  # the page's last tasks
        driver.get("about:blank")
        timing.append(renderer_cpu_ms(driver))
    return timing


def measure(driver, urls, runs, cpu=False):
    """Loads each of `urls` (one per binary) `runs` times, alternating; a summary per URL."""
    for url in urls:
        driver.get(url)  # warm: the database pages and the browser's cache of the assets
    samples = [[] for _ in urls]
    for _ in range(runs):
        for i, url in enumerate(urls):
            samples[i].append(load(driver, url, cpu))
    out = []
    for rows in samples:
        cols = list(zip(*rows))
        out.append({
            "response_ms": (statistics.median(cols[0]), max(cols[0])),
            "dom_ms": (statistics.median(cols[1]), max(cols[1])),
            "ready_ms": (statistics.median(cols[2]), max(cols[2])),
            "bytes": cols[3][-1],
            "elements": cols[4][-1],
            "cpu_ms": (statistics.median(cols[5]), max(cols[5])) if cpu else None,
        })
    return out


def show(name, results, labels):
    for label, m in zip(labels, results):
        print(
            f"{name}{label}: ready median {m['ready_ms'][0]:.0f} ms (worst {m['ready_ms'][1]:.0f}); "
            f"DOMContentLoaded {m['dom_ms'][0]:.0f} ms; server answer {m['response_ms'][0]:.0f} ms; "
            f"{m['bytes'] / 1e6:.2f} MB HTML, {m['elements']} elements"
            + (f"; renderer CPU median {m['cpu_ms'][0]:.0f} ms (worst {m['cpu_ms'][1]:.0f})" if m["cpu_ms"] else ""),
            flush=True,
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "sessiondb"))
    ap.add_argument("--compare", help="a second sessiondb binary, measured alternately (\"before\")")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus", "claude-code"))
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--size", default="100M")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cpu-slowdown", type=float, default=1.0)
    ap.add_argument("--renderer-cpu", action="store_true")
    ap.add_argument("--work")
    a = ap.parse_args()
    found = find_browser()
    if not found:
        raise SystemExit("chromium and chromedriver are needed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    bins = [a.bin] + ([a.compare] if a.compare else [])
    labels = [" (after)", " (before)"] if a.compare else [""]
    work = a.work or tempfile.mkdtemp(prefix="sessiondb-webbench-")
    profile = tempfile.mkdtemp(prefix="sessiondb-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    if a.renderer_cpu:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        options.add_experimental_option("perfLoggingPrefs", {"traceCategories": "toplevel"})
    driver = webdriver.Chrome(service=Service(found[1]), options=options)
    driver.set_page_load_timeout(120)
    if a.cpu_slowdown != 1.0:
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": a.cpu_slowdown})
        print(f"Chromium's CPU slowed down {a.cpu_slowdown:g} times", flush=True)
    procs = []

    def serve_all(db, tag):
        urls = []
        for i, binary in enumerate(bins):
            proc, url = serve(binary, db, os.path.join(work, f"serve-{tag}-{i}.out"))
            procs.append(proc)
            urls.append(url)
        return urls

    try:
        # 1. The largest corpus session.
        tree = os.path.join(work, "corpus", "bench")
        os.makedirs(tree, exist_ok=True)
        mains = [f for f in os.listdir(a.corpus) if f.endswith(".jsonl") and "agent-" not in f]
        for f in mains:
            shutil.copyfile(os.path.join(a.corpus, f), os.path.join(tree, f))
        largest = max(mains, key=lambda f: os.path.getsize(os.path.join(a.corpus, f)))
        db = os.path.join(work, "corpus.db")
        subprocess.run([a.bin, "--db", db, "import", os.path.dirname(tree)], check=True, capture_output=True)
        urls = serve_all(db, "corpus")
        size = os.path.getsize(os.path.join(a.corpus, largest))
        page = f"/session/bench/{largest[:-6]}"
        show(f"session page of {largest} ({size / 1e6:.1f} MB)", measure(driver, [u + page for u in urls], a.runs, a.renderer_cpu), labels)
        show("session page, resume view", measure(driver, [u + page + "?view=resume" for u in urls], a.runs, a.renderer_cpu), labels)

        # 2. The sessions page of a many-session tree.
        many = os.path.join(work, "many")
        if not os.path.isdir(many):
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_sessions.py"), many, str(a.sessions), a.size,
                            "--corpus", a.corpus], check=True, capture_output=True)
        db = os.path.join(work, "many.db")
        if not os.path.exists(db):
            subprocess.run([a.bin, "--db", db, "import", many], check=True, capture_output=True)
        urls = serve_all(db, "many")
        for name, path in ((f"sessions page, {a.sessions} sessions", "/"),
                           (f"sessions page, {a.sessions} sessions, page 100", "/?page=100"),
                           (f"sessions page, {a.sessions} sessions, name filter", "/?name=phase")):
            show(name, measure(driver, [u + path for u in urls], a.runs, a.renderer_cpu), labels)
    finally:
        driver.quit()
        for p in procs:
            p.terminate()
            p.wait()
        shutil.rmtree(profile, ignore_errors=True)
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
