#!/usr/bin/env python3
"""The Python package's speed beside the Rust library and `serve` (issue 29), in one run.

    python tools/bench/python_package.py --db STORE [--bin target/release/sessiondb]
        [--runs 30] [--batches 10]

Run with a Python where the package (a release wheel: `maturin build --release`) and
`claude-agent-sdk==0.2.189` are installed. On `STORE` (`../shared/bench/perf.sh` leaves its
10,000-session one at `$PERF_DIR/s.db`), for its largest transcript, it times warm medians of

* `Store.messages(session)` and `SessionStore.load(key)` (awaited, as the SDK awaits it;
  also the native `stream_load` without the thread hop), beside the Rust library's own
  time for the same calls (tools/bench/library_speed.rs, an example of the package's crate
  built in release, run first by this script), and beside `json.loads` of the text `load`
  reads (the stored lines as one JSON array, as bytes and as `str`): the least any `load`
  returning Python objects could cost with Python's own parser;

and, on two fresh SQLite files in a temporary folder, an append of 500 entries (~1.2 KB
each, user/assistant pairs with uuids; `--batches` batches to one session):

* in process: `SessionStore.append` (the protocol, fold included), the native
  `stream_append` alone, and `stream_append` of the batch serialized before the clock
  starts (the store work alone, as `serve`'s `Server-Timing` reports it);
* through `serve` (`--bin`): the HTTP adapter `SessionDbStore.append` (same protocol, fold
  included), and a bare `POST /v1/store/append` with its `Server-Timing` (the store work).

Not a test: the figures depend on the machine's load (docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

import sessiondb
from sessiondb.http import SessionDbStore

REPO = Path(__file__).resolve().parents[2]
WORDS = " ".join(["refactor the parser so that streaming works"] * 24)


def entries(session: str, start: int, n: int) -> list[dict]:
    out = []
    for i in range(start, start + n):
        role = "user" if i % 2 == 0 else "assistant"
        content = f"{i} {WORDS}" if role == "user" else [{"type": "text", "text": WORDS}]
        out.append({
            "type": role, "uuid": f"{session}-{i:08d}",
            "parentUuid": f"{session}-{i - 1:08d}" if i else None,
            "sessionId": session, "timestamp": "2026-12-03T16:00:00.000Z",
            "message": {"role": role, "content": content},
        })
    return out


def median_ms(runs: int, f) -> float:
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


async def amedian_ms(runs: int, f) -> float:
    await f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        await f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def rust_library(db: str, runs: int) -> dict:
    out = subprocess.run(
        ["cargo", "run", "-q", "--release", "--manifest-path", "packages/python/Cargo.toml",
         "--example", "library_speed", "--", db, "--runs", str(runs)],
        cwd=REPO, check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


async def appends(bin_path: str, batches: int) -> dict:
    """Median ms of one 500-entry append, each way."""
    tmp = tempfile.mkdtemp(prefix="sessiondb-pkg-bench-")
    project = "-bench-append"
    results = {}
    # In process.
    store = sessiondb.SessionStore(f"{tmp}/inproc.db")
    for label, session, append in (
        ("in process: SessionStore.append", "inproc-a",
         lambda key, es: store.append(key, es)),
        ("in process: native stream_append", "inproc-b",
         lambda key, es: asyncio.to_thread(store.store.stream_append, key["project_key"],
                                           key["session_id"], None, json.dumps(es).encode())),
    ):
        key = {"project_key": project, "session_id": session}
        times = []
        for b in range(batches):
            batch = entries(session, b * 500, 500)
            t = time.perf_counter()
            await append(key, batch)
            times.append((time.perf_counter() - t) * 1000)
        results[label] = statistics.median(times)
    session = "inproc-c"
    times = []
    for b in range(batches):
        payload = json.dumps(entries(session, b * 500, 500)).encode()
        t = time.perf_counter()
        store.store.stream_append(project, session, None, payload)
        times.append((time.perf_counter() - t) * 1000)
    results["in process: native stream_append, batch serialized beforehand"] = statistics.median(times)
    # Through serve.
    proc = subprocess.Popen(
        [bin_path, "--db", f"{tmp}/served.db", "serve", "--addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )
    try:
        line = proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"sessiondb serve did not start: {line!r}")
        url = line.split()[-1]
        remote = SessionDbStore(url)
        key = {"project_key": project, "session_id": "served-a"}
        times = []
        for b in range(batches):
            batch = entries("served-a", b * 500, 500)
            t = time.perf_counter()
            await remote.append(key, batch)
            times.append((time.perf_counter() - t) * 1000)
        results["through serve: SessionDbStore.append"] = statistics.median(times)
        addr = urlparse(url)
        conn = http.client.HTTPConnection(addr.hostname, addr.port, timeout=120)
        times, store_ms = [], []
        for b in range(batches):
            body = json.dumps({"key": {"project_key": project, "session_id": "served-b"},
                               "entries": entries("served-b", b * 500, 500)}).encode()
            t = time.perf_counter()
            conn.request("POST", "/v1/store/append", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            times.append((time.perf_counter() - t) * 1000)
            assert response.status == 200 and json.loads(data)["appended"] == 500, data[:200]
            timing = response.getheader("Server-Timing") or ""
            if "dur=" in timing:
                store_ms.append(float(timing.split("dur=")[1]))
        results["through serve: bare POST /v1/store/append"] = statistics.median(times)
        if store_ms:
            results["  of which the store work (Server-Timing)"] = statistics.median(store_ms)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        subprocess.run(["rm", "-rf", tmp], check=False)
    return results


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "sessiondb"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--batches", type=int, default=10)
    a = ap.parse_args()
    rust = rust_library(a.db, a.runs)
    st = sessiondb.Store(a.db)
    ss = sessiondb.SessionStore(store=st)
    sid, key = rust["session"], {"project_key": rust["project"], "session_id": rust["session"]}
    assert st.messages(sid), "the session has messages"
    py_messages = median_ms(a.runs, lambda: st.messages(sid))
    py_load = await amedian_ms(a.runs, lambda: ss.load(key))
    py_native_load = median_ms(a.runs, lambda: st.stream_load(key["project_key"], key["session_id"], None))
    n_messages, n_entries = len(st.messages(sid)), len(await ss.load(key))
    # The text load reads: the stored lines of the session's file as one JSON array.
    lines = [line.strip() for line in st.export(sid).split(b"\n")]
    text = b"[" + b",".join(line for line in lines if line) + b"]"
    assert len(json.loads(text)) == n_entries, "the same entries as load"
    py_loads_bytes = median_ms(a.runs, lambda: json.loads(text))
    text_str = text.decode()
    py_loads_str = median_ms(a.runs, lambda: json.loads(text_str))
    print(f"session {sid} ({n_messages} messages, {n_entries} entries)\n")
    print("| in process | Python | Rust library | ratio |")
    print("|---|---|---|---|")
    print(f"| `Store.messages()` | {py_messages:.2f} ms | {rust['messages_ms']:.2f} ms | {py_messages / rust['messages_ms']:.2f}x |")
    print(f"| `await SessionStore.load()` | {py_load:.2f} ms | {rust['load_ms']:.2f} ms | {py_load / rust['load_ms']:.2f}x |")
    print(f"| native `stream_load` (no thread hop) | {py_native_load:.2f} ms | {rust['load_ms']:.2f} ms | {py_native_load / rust['load_ms']:.2f}x |")
    print()
    print(f"The same {len(text) / 1e6:.1f} MB of entries as objects:\n")
    print("| building the entries' objects | ms | `await SessionStore.load()` against it |")
    print("|---|---|---|")
    print(f"| Rust: `load` then `serde_json::from_slice::<Vec<Value>>` | {rust['load_values_ms']:.2f} | {py_load / rust['load_values_ms']:.2f}x |")
    print(f"| Python: `json.loads` of the text as `bytes` | {py_loads_bytes:.2f} | {py_load / py_loads_bytes:.2f}x |")
    print(f"| Python: `json.loads` of the text as `str` | {py_loads_str:.2f} | {py_load / py_loads_str:.2f}x |")
    print()
    print("| append of 500 entries (median) | ms |")
    print("|---|---|")
    for label, ms in (await appends(a.bin, a.batches)).items():
        print(f"| {label} | {ms:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
