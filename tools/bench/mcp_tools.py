#!/usr/bin/env python3
"""The MCP tools' speed (issue 26: each tool <= 20 ms server-side).

    python3 tools/bench/mcp_tools.py --db STORE [--bin target/release/sessiondb] [--runs 50]

On `STORE` (`../shared/bench/perf.sh` leaves its 10,000-session one at `$PERF_DIR/s.db`),
one `sessiondb mcp` process is spoken to as a client would, newline-delimited JSON-RPC on its
standard input and output (standard library only: no client library's own cost in the
figures). Each tool is called as an agent would call it, on the store's largest transcript
(as perf.sh picks it); each call runs once to warm up, then `--runs` times: p50 and p95 of
the round trip in ms. The same for MCP's `ping`, the floor every call pays (the pipe, the
JSON-RPC envelope both ways, the server's dispatch): a call's time minus the ping's is the
time the tool took inside the server. Beside it, the server process's own CPU time per call
(user + system of all its threads over the timed runs, from `/proc`; Linux only): on a
loaded machine the wall clock also counts the time the server waited for a core, the CPU
time does not. Every answer is checked to be a success.
Not a test: the figures depend on the machine's load (docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Server:
    """A `sessiondb mcp` process, initialized."""

    def __init__(self, bin_path: str, db: str) -> None:
        self.proc = subprocess.Popen(
            [bin_path, "--db", db, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=dict(os.environ, TZ=os.environ.get("TZ", "UTC")),
        )
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer

    def call(self, name: str, arguments: dict) -> int:
        """Calls a tool; the answer's size in bytes (a failure raises)."""
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        result = answer.get("result")
        if not result or result.get("isError"):
            raise RuntimeError(f"{name} {arguments}: {answer}")
        return len(result["content"][0]["text"].encode())

    def cpu_seconds(self) -> float | None:
        """User + system CPU time the server has used so far (all threads); None off Linux."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def timed(runs: int, f) -> tuple[float, float]:
    f()
    ms = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    at = lambda q: ms[min(len(ms), max(1, math.ceil(len(ms) * q))) - 1]  # noqa: E731
    return at(0.5), at(0.95)


def cli(bin_path: str, db: str, *args: str):
    out = subprocess.run([bin_path, "--db", db, *args], check=True, capture_output=True)
    return json.loads(out.stdout)


def calls(bin_path: str, db: str) -> list[tuple[str, dict]]:
    """Each tool as an agent would call it, on the largest session."""
    big = max(cli(bin_path, db, "sessions", "--json"), key=lambda s: s["file_size"])
    sid, project = big["session_id"], big["project"]
    messages = cli(bin_path, db, "messages", sid, "--json")
    middle = messages[len(messages) // 2]["uuid"]
    path = "README.md"
    for m in messages:
        for b in m["message"].get("content") or []:
            if isinstance(b, dict) and b.get("name") == "Read":
                path = "/".join(b["input"]["file_path"].split("/")[-2:])
                break
        else:
            continue
        break
    return [
        ("find", {"query": "migration"}),
        ("find", {"query": "test", "limit": 20, "tools": True}),
        ("find", {"query": "fix", "since": "2025-09-01", "branch": "main"}),
        ("find", {"query": sid[:13]}),
        ("list_sessions", {}),
        ("list_sessions", {"project": project, "limit": 50}),
        ("session_overview", {"session": sid}),
        ("read", {"session": sid}),
        ("read", {"session": sid, "offset": -20, "tools": True}),
        ("read", {"session": sid, "around": middle, "limit": 10}),
        ("files", {"path": path}),
        ("resume_plan", {"session": sid}),
        ("usage", {}),
        ("usage", {"by": "model", "since": "2026-01-01"}),
        ("usage", {"session": sid}),
    ]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "sessiondb"))
    ap.add_argument("--runs", type=int, default=50)
    a = ap.parse_args()
    todo = calls(a.bin, a.db)
    server = Server(a.bin, a.db)
    try:
        floor = timed(a.runs, lambda: server.request("ping", {}))
        print(f"ping (the floor): p50 {floor[0]:.2f} ms, p95 {floor[1]:.2f} ms\n")
        print("| tool | arguments | answer bytes | round trip p50 | p95 | in the server p50 (− ping) "
              "| server CPU per call |")
        print("|---|---|---|---|---|---|---|")
        for name, args in todo:
            size = server.call(name, args)
            before = server.cpu_seconds()
            p50, p95 = timed(a.runs, lambda: server.call(name, args))
            after = server.cpu_seconds()
            # The warm-up call inside `timed` is counted too: runs + 1 calls.
            cpu = "-" if before is None or after is None else \
                f"{(after - before) * 1000 / (a.runs + 1):.2f} ms"
            shown = json.dumps(args).replace("|", "\\|")
            if len(shown) > 60:
                shown = shown[:57] + "…"
            print(f"| `{name}` | `{shown}` | {size} | {p50:.2f} ms | {p95:.2f} ms "
                  f"| {p50 - floor[0]:.2f} ms | {cpu} |")
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
