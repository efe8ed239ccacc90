"""8 SDK-adapter clients appending to their own sessions at once (issue 6's concurrency check).

    python3 tools/python/bench_concurrent.py [--bin target/release/sessiondb] [--secs 30]
        [--clients 8] [--batch 100]

Starts `sessiondb serve` on a free loopback port with a temporary database, runs one thread
per client, each with its own `SessionDbStore`, appending batches (user prompt + assistant
reply pairs with uuids, a uuid-less `last-prompt` record every 50 entries) to its own
session until the time is up, then loads every session back and checks that it holds
exactly what its client appended, in order, and that its summary sidecar equals the SDK's
fold of the whole session. Prints the figures; exits 1 on any error or lost entry.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_agent_sdk import fold_session_summary  # noqa: E402

from sessiondb_store import SessionDbStore  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def entries(session: str, start: int, n: int) -> list[dict]:
    out = []
    for i in range(start, start + n):
        words = " ".join(["refactor the parser so streaming works"] * 25)
        if i % 50 == 49:
            out.append({"type": "last-prompt", "lastPrompt": f"{session} {i}", "sessionId": session})
        elif i % 2 == 0:
            out.append({"type": "user", "uuid": f"{session}-{i}", "parentUuid": f"{session}-{i - 1}",
                        "message": {"role": "user", "content": f"{i} {words}"},
                        "timestamp": "2026-12-01T14:00:00.000Z", "sessionId": session})
        else:
            out.append({"type": "assistant", "uuid": f"{session}-{i}", "parentUuid": f"{session}-{i - 1}",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": words}]},
                        "timestamp": "2026-12-01T14:00:01.000Z", "sessionId": session})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "sessiondb"))
    ap.add_argument("--secs", type=float, default=30)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--batch", type=int, default=100)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [a.bin, "--db", f"{tmp}/bench.db", "serve", "--addr", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )
        url = proc.stdout.readline().split()[-1]
        deadline = time.monotonic() + a.secs
        results: dict[int, tuple[int, int, list[float]]] = {}

        def client(n: int) -> None:
            store = SessionDbStore(url)
            key = {"project_key": "-bench", "session_id": f"client-{n}"}
            sent, errors, times = 0, 0, []
            while time.monotonic() < deadline:
                t = time.perf_counter()
                try:
                    anyio.run(store.append, key, entries(key["session_id"], sent, a.batch))
                    sent += a.batch
                except Exception as e:  # noqa: BLE001 - counted and reported
                    errors += 1
                    print(f"client {n}: {e}", file=sys.stderr)
                times.append((time.perf_counter() - t) * 1000)
            results[n] = (sent, errors, times)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(a.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        store = SessionDbStore(url)
        lost = 0
        summaries = {s["session_id"]: s for s in anyio.run(store.list_session_summaries, "-bench")}
        for n, (sent, _, _) in results.items():
            key = {"project_key": "-bench", "session_id": f"client-{n}"}
            loaded = anyio.run(store.load, key) or []
            if loaded != entries(key["session_id"], 0, sent):
                lost += max(1, abs(sent - len(loaded)))
            elif summaries[key["session_id"]]["data"] != fold_session_summary(None, key, loaded)["data"]:
                lost += 1
                print(f"client {n}: the summary is not the fold of the session", file=sys.stderr)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    total = sum(r[0] for r in results.values())
    errors = sum(r[1] for r in results.values())
    times = sorted(x for r in results.values() for x in r[2])
    median = times[len(times) // 2] if times else float("nan")
    p95 = times[int(len(times) * 0.95)] if times else float("nan")
    print(
        f"{a.clients} adapter clients x {a.secs:g} s, {a.batch}-entry batches: {total} entries in "
        f"{len(times)} appends ({total / a.secs:.0f} entries/s), append (with the summary fold) "
        f"median {median:.1f} ms, p95 {p95:.1f} ms; errors {errors}, lost or out-of-order {lost}, "
        f"server exit {code}"
    )
    return 0 if errors == 0 and lost == 0 and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
