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

Each figure is given twice: the wall clock, and the CPU time spent on it (Python:
`time.process_time`, the whole process, worker threads included; Rust: the same for its
process, whose library reads a long session on several threads; `serve`: the client's CPU time plus the server process's, from Linux's
`/proc/PID/task/*/schedstat`). On a loaded machine the wall clock also counts the time
other processes hold the cores, so the CPU times are what compares across paths.

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


def median_ms(runs: int, f) -> tuple[float, float]:
    """Medians of `runs` timed calls (after one untimed): wall ms, CPU ms."""
    f()
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        f()
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu)


async def amedian_ms(runs: int, f) -> tuple[float, float]:
    await f()
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        await f()
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def server_cpu_ms(pid: int) -> float:
    """The CPU time the process's live threads have used, in ms (Linux)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total / 1e6


class Clock:
    """Wall and CPU time of each timed step; `server` adds a process's CPU time."""

    def __init__(self, server: int | None = None) -> None:
        self.server = server
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> "Clock":
        self.t, self.c = time.perf_counter(), self.cpu_now()
        return self

    def __exit__(self, *exc) -> None:
        self.wall.append((time.perf_counter() - self.t) * 1000)
        self.cpu.append(self.cpu_now() - self.c)

    def cpu_now(self) -> float:
        ms = time.process_time() * 1000
        return ms + server_cpu_ms(self.server) if self.server is not None else ms

    def medians(self) -> tuple[float, float]:
        return statistics.median(self.wall), statistics.median(self.cpu)


def rust_library(db: str, runs: int) -> dict:
    out = subprocess.run(
        ["cargo", "run", "-q", "--release", "--manifest-path", "packages/python/Cargo.toml",
         "--example", "library_speed", "--", db, "--runs", str(runs)],
        cwd=REPO, check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


async def appends(bin_path: str, batches: int) -> dict:
    """Medians of one 500-entry append, each way: (wall ms, CPU ms)."""
    tmp = tempfile.mkdtemp(prefix="sessiondb-pkg-bench-")
    project = "-bench-append"
    results = {}
    # In process.
    store = sessiondb.SessionStore(f"{tmp}/inproc.db")
    for label, session, append in (
        ("in process: SessionStore.append", "inproc-a",
         lambda key, es: store.append(key, es)),
        ("in process: native stream_append of json.dumps", "inproc-b",
         lambda key, es: asyncio.to_thread(store.store.stream_append, key["project_key"],
                                           key["session_id"], None, json.dumps(es).encode())),
    ):
        key = {"project_key": project, "session_id": session}
        clock = Clock()
        for b in range(batches):
            batch = entries(session, b * 500, 500)
            with clock:
                await append(key, batch)
        results[label] = clock.medians()
    session = "inproc-c"
    clock = Clock()
    for b in range(batches):
        payload = json.dumps(entries(session, b * 500, 500)).encode()
        with clock:
            store.store.stream_append(project, session, None, payload)
    results["in process: native stream_append, batch serialized beforehand"] = clock.medians()
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
        clock = Clock(server=proc.pid)
        for b in range(batches):
            batch = entries("served-a", b * 500, 500)
            with clock:
                await remote.append(key, batch)
        results["through serve: SessionDbStore.append"] = clock.medians()
        addr = urlparse(url)
        conn = http.client.HTTPConnection(addr.hostname, addr.port, timeout=120)
        clock, store_ms = Clock(server=proc.pid), []
        for b in range(batches):
            body = json.dumps({"key": {"project_key": project, "session_id": "served-b"},
                               "entries": entries("served-b", b * 500, 500)}).encode()
            with clock:
                conn.request("POST", "/v1/store/append", body,
                             {"Content-Type": "application/json"})
                response = conn.getresponse()
                data = response.read()
            assert response.status == 200 and json.loads(data)["appended"] == 500, data[:200]
            timing = response.getheader("Server-Timing") or ""
            if "dur=" in timing:
                store_ms.append(float(timing.split("dur=")[1]))
        results["through serve: bare POST /v1/store/append"] = clock.medians()
        if store_ms:
            results["  of which the store work (Server-Timing, wall)"] = (
                statistics.median(store_ms), None)
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

    def rust_of(name: str) -> tuple[float, float | None]:
        return rust[f"{name}_ms"], rust.get(f"{name}_cpu_ms")

    def ratio(ours: float, theirs: float | None) -> str:
        return f"{ours / theirs:.2f}x" if theirs else "-"

    def ms(v: float | None, digits: int = 2) -> str:
        return f"{v:.{digits}f}" if v is not None else "-"

    print(f"session {sid} ({n_messages} messages, {n_entries} entries)\n")
    print("| in process | Python wall | Rust wall | ratio | Python CPU | Rust CPU | ratio |")
    print("|---|---|---|---|---|---|---|")
    for label, ours, theirs in (
        ("`Store.messages()`", py_messages, rust_of("messages")),
        ("`await SessionStore.load()`", py_load, rust_of("load")),
        ("native `stream_load` (no thread hop)", py_native_load, rust_of("load")),
    ):
        print(f"| {label} | {ours[0]:.2f} ms | {theirs[0]:.2f} ms | {ratio(ours[0], theirs[0])} "
              f"| {ours[1]:.2f} ms | {ms(theirs[1])} ms | {ratio(ours[1], theirs[1])} |")
    print()
    print(f"The same {len(text) / 1e6:.1f} MB of entries as objects:\n")
    print("| building the entries' objects | wall ms | CPU ms | `await SessionStore.load()` against it, CPU |")
    print("|---|---|---|---|")
    for label, theirs in (
        ("Rust: `load` then `serde_json::from_slice::<Vec<Value>>`", rust_of("load_values")),
        ("Python: `json.loads` of the text as `bytes`", py_loads_bytes),
        ("Python: `json.loads` of the text as `str`", py_loads_str),
    ):
        print(f"| {label} | {theirs[0]:.2f} | {ms(theirs[1])} | {ratio(py_load[1], theirs[1])} |")
    print()
    results = await appends(a.bin, a.batches)
    print("| append of 500 entries (median) | wall ms | CPU ms (serve: client + server) |")
    print("|---|---|---|")
    for label, (wall, cpu) in results.items():
        print(f"| {label} | {wall:.1f} | {ms(cpu, 1)} |")
    ours, theirs = results["in process: SessionStore.append"], results["through serve: SessionDbStore.append"]
    print(f"\n`SessionDbStore.append` through serve / `SessionStore.append` in process: "
          f"wall {theirs[0] / ours[0]:.2f}x, CPU {theirs[1] / ours[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
