#!/usr/bin/env python3
"""A 500-entry SessionStore append through `sessiondb serve`, 8 clients at once (issue 17).

    python3 tools/bench/serve_append.py [--bin target/release/sessiondb] [--db DB | --url URL]
        [--clients 8] [--batch 500] [--batches 15]

`--db` is what the server serves: a PostgreSQL URL (an existing, preferably empty database:
the bench appends to project `-bench-append`, deleting its sessions first) or a SQLite file
(default: a new one in a temporary folder). Each client appends `--batches` batches of
`--batch` entries (~1.2 KB each: user/assistant pairs with uuids) to a session of its own,
all clients at once, on one keep-alive connection each. The request bodies are made before
the clock starts, so that only the round trip is timed. Prints the round trip's p50 / p95
and the server-side store time (`Server-Timing`), and checks that each session holds
exactly what its client sent. Standard library only. Not a test: figures depend on the load.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[2]
PROJECT = "-bench-append"
WORDS = " ".join(["refactor the parser so that streaming works"] * 24)


def batch(session: str, start: int, n: int) -> bytes:
    entries = []
    for i in range(start, start + n):
        role = "user" if i % 2 == 0 else "assistant"
        content = f"{i} {WORDS}" if role == "user" else [{"type": "text", "text": WORDS}]
        entries.append({
            "type": role, "uuid": f"{session}-{i}", "parentUuid": f"{session}-{i - 1}" if i else None,
            "sessionId": session, "timestamp": "2026-12-03T16:00:00.000Z",
            "message": {"role": role, "content": content},
        })
    key = {"project_key": PROJECT, "session_id": session}
    return json.dumps({"key": key, "entries": entries}).encode()


def post(conn: http.client.HTTPConnection, path: str, body: bytes) -> tuple[dict, float | None]:
    conn.request("POST", path, body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status} {data[:300]!r}")
    timing = response.getheader("Server-Timing")
    store_ms = float(timing.split("dur=")[1]) if timing and "dur=" in timing else None
    return json.loads(data), store_ms


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "sessiondb"))
    ap.add_argument("--db", help="PostgreSQL URL or SQLite file (default: a temporary file)")
    ap.add_argument("--url", help="a running server to use instead (http://HOST:PORT/)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--batches", type=int, default=15)
    a = ap.parse_args()
    if a.url:
        addr = urlparse(a.url)
        return run(a, addr.hostname, addr.port)
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db or f"{tmp}/bench.db"
        proc = subprocess.Popen(
            [a.bin, "--db", db, "serve", "--addr", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )
        try:
            line = proc.stdout.readline()
            if not line.startswith("listening on "):
                raise RuntimeError(f"sessiondb serve did not start: {line!r}")
            addr = urlparse(line.split()[-1])
            return run(a, addr.hostname, addr.port)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def run(a: argparse.Namespace, host: str, port: int) -> int:
    sessions = [f"client-{n}" for n in range(a.clients)]
    setup = http.client.HTTPConnection(host, port, timeout=120)
    for s in sessions:
        post(setup, "/v1/store/delete", json.dumps({"key": {"project_key": PROJECT, "session_id": s}}).encode())
    bodies = {s: [batch(s, b * a.batch, a.batch) for b in range(a.batches)] for s in sessions}
    results: dict[str, list[tuple[float, float | None]]] = {}
    errors: list[str] = []
    start = threading.Barrier(a.clients)

    def client(session: str) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        times = []
        start.wait()
        try:
            for body in bodies[session]:
                t = time.perf_counter()
                answer, store_ms = post(conn, "/v1/store/append", body)
                times.append(((time.perf_counter() - t) * 1000, store_ms))
                if answer.get("appended") != a.batch:
                    errors.append(f"{session}: {answer}")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"{session}: {e}")
        results[session] = times

    threads = [threading.Thread(target=client, args=(s,)) for s in sessions]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    for s in sessions:
        body = json.dumps({"key": {"project_key": PROJECT, "session_id": s}}).encode()
        loaded, _ = post(setup, "/v1/store/load", body)
        expected = [e for b in bodies[s][: len(results[s])] for e in json.loads(b)["entries"]]
        if loaded["entries"] != expected:
            errors.append(f"{s}: loaded {len(loaded['entries'] or [])} entries, sent {len(expected)}")
    trips = sorted(t for r in results.values() for t, _ in r)
    stores = sorted(s for r in results.values() for _, s in r if s is not None)

    def pct(xs: list[float], p: float) -> float:
        return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")

    print(
        f"{a.clients} clients x {a.batches} appends of {a.batch} entries "
        f"({len(bodies[sessions[0]][0]) / 1e6:.2f} MB each), {len(trips)} appends in {wall:.1f} s: "
        f"round trip p50 {statistics.median(trips):.1f} ms, p95 {pct(trips, 0.95):.1f} ms; "
        f"server-side store time p50 {statistics.median(stores):.1f} ms, p95 {pct(stores, 0.95):.1f} ms; "
        f"errors {len(errors)}"
    )
    for e in errors[:10]:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
