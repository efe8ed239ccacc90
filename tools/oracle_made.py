#!/usr/bin/env python3
"""Make resume oracle cases for tests/fixtures/oracle-made/ with the real Claude Code CLI.

Each scenario below is a synthetic transcript (as an older CLI would have written it) and the
`--model` values to resume it with. For each, the real CLI 2.1.332 resumes it offline through
the real-transcript pack's harness (`oracle/real/tool/lib.py`, fake Messages API, fresh HOME),
and the first request's messages minus the new turn become `expected-api-view.json`. Every
scenario ends with a stored assistant text, so the new turn is exactly the last message (for
models that get reminders as folded text; `system`-message models are not used here).

    python3 tools/oracle_made.py [--shared ../shared] [--out tests/fixtures/oracle-made] [NAME...]

Needs the CLI installed by the harness (default prefix /tmp/ccoracle) and writes scratch runs
under $REALORACLE_ROOT (default /tmp/realoracle-made). Not run in CI.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import uuid

SID = "7e3c1a52-0b9d-4c8e-9f21-6a5d3b8e4c10"
CWD = "/home/dev/project"
PDIR = "-home-dev-project"

LEGACY_TOOLS = ["Task", "KillShell", "KillBash", "ListPeers", "Brief", "ListMcpResources",
                "ReadMcpResource", "ReadMcpResourceDir", "ProposeGoal"]


class Transcript:
    """Builds a linear transcript the way 1.0.x / 2.0.x CLIs wrote it."""

    def __init__(self, version="1.0.98"):
        self.records, self.parent, self.n, self.version = [], None, 0, version

    def _env(self, kind):
        self.n += 1
        u = str(uuid.uuid5(uuid.NAMESPACE_URL, "oracle-made:%s:%d" % (SID, self.n)))
        r = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": CWD,
             "sessionId": SID, "version": self.version, "type": kind, "uuid": u,
             "timestamp": "2025-09-01T10:%02d:%02d.000Z" % (self.n // 60, self.n % 60)}
        self.parent = u
        return r

    def user(self, content, **extra):
        r = self._env("user")
        r["message"] = {"role": "user", "content": content}
        r.update(extra)
        self.records.append(r)
        return r

    def assistant(self, content, model="claude-sonnet-4-20250514", mid=None):
        r = self._env("assistant")
        r["message"] = {"id": mid or "msg_%04d" % self.n, "type": "message", "role": "assistant",
                        "model": model, "content": content, "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 5}}
        r["requestId"] = "req_%04d" % self.n
        self.records.append(r)
        return r

    def jsonl(self):
        return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in self.records)


def thinking(text, signed=True):
    b = {"type": "thinking", "thinking": text}
    if signed:
        b["signature"] = "sig-" + text.replace(" ", "-")
    return b


def legacy_tools():
    """B2: one tool_use per legacy tool name, each answered."""
    t = Transcript()
    t.user("Use the old tools")
    for i, name in enumerate(LEGACY_TOOLS):
        tid = "toolu_legacy_%02d" % i
        t.assistant([{"type": "tool_use", "id": tid, "name": name, "input": {"arg": name}}])
        t.user([{"tool_use_id": tid, "type": "tool_result", "content": "ok %s" % name}],
               toolUseResult={"stdout": "ok"})
    t.assistant([{"type": "text", "text": "All done."}])
    return t


def model_mix():
    """B1/B14: one signed-thinking assistant turn per recorded model id."""
    t = Transcript(version="2.0.30")
    t.user("Think with several models")
    models = ["claude-sonnet-4-20250514", "claude-sonnet-4-0", "claude-sonnet-4-5-20250929",
              "claude-sonnet-4-5", "claude-opus-4-20250514", "claude-opus-4-1-20250805",
              "claude-opus-5-5", "claude-haiku-4-5-20251001", "claude-3-7-sonnet-20250219",
              "claude-3-7-sonnet-latest", None]
    for i, m in enumerate(models):
        a = t.assistant([thinking("thought %d by %s" % (i, m)), thinking("unsigned %d" % i, signed=False),
                         {"type": "redacted_thinking", "data": "redacted-%d" % i},
                         {"type": "text", "text": "answer %d" % i}], model=m or "x")
        if m is None:
            del a["message"]["model"]
        t.user("next %d" % i)
    t.assistant([{"type": "text", "text": "Finished."}], model="claude-sonnet-4-5-20250929")
    return t


def tool_references():
    """B6: ToolSearch results naming a deferred tool, a model-dependent one and an MCP tool
    (no MCP server is configured when the CLI runs offline)."""
    t = Transcript(version="2.1.30")
    t.user("Load some tools")
    for i, names in enumerate([["WebFetch"], ["TaskCreate"], ["mcp__notes__search"],
                               ["WebSearch", "mcp__notes__search"]]):
        tid = "toolu_search_%02d" % i
        t.assistant([{"type": "tool_use", "id": tid, "name": "ToolSearch",
                      "input": {"query": "select:" + ",".join(names)}}], model="claude-sonnet-4-5-20250929")
        t.user([{"tool_use_id": tid, "type": "tool_result",
                 "content": [{"type": "tool_reference", "tool_name": n} for n in names]}],
               toolUseResult={"matches": names, "query": "select:" + ",".join(names)})
    t.assistant([{"type": "text", "text": "Loaded."}], model="claude-sonnet-4-5-20250929")
    return t


def parallel_file_order():
    """B4: parallel tool results off the chain whose timestamps run against file order
    (R3 puts them back after the message's last chain record)."""
    t = Transcript(version="2.1.12")
    t.user("Run three commands")
    m = "claude-sonnet-4-5-20250929"
    t.assistant([{"type": "text", "text": "Running them."}], model=m, mid="msg_parallel")
    a2 = t.assistant([{"type": "tool_use", "id": "toolu_par_%d" % i, "name": "Bash",
                       "input": {"command": "echo %d" % i}} for i in (1, 2, 3)],
                     model=m, mid="msg_parallel")
    res = {}
    for i in (2, 1, 3):  # file order 2, 1, 3
        t.parent = a2["uuid"] if i != 3 else t.parent
        res[i] = t.user([{"tool_use_id": "toolu_par_%d" % i, "type": "tool_result", "content": "out %d" % i}],
                        toolUseResult={"stdout": "out %d" % i}, sourceToolAssistantUUID=a2["uuid"])
    res[3]["parentUuid"] = a2["uuid"]
    res[1]["timestamp"], res[2]["timestamp"] = res[2]["timestamp"], res[1]["timestamp"]  # time: 1, 2
    t.parent = res[3]["uuid"]
    t.assistant([{"type": "text", "text": "All ran."}], model=m)
    return t


SCENARIOS = {
    "tool_references": (tool_references, ["claude-sonnet-4-5", "claude-opus-4-8"]),
    "parallel_file_order": (parallel_file_order, ["claude-sonnet-4-5"]),
    "legacy_tool_names": (legacy_tools, ["claude-sonnet-4-5"]),
    "model_mix": (model_mix, ["claude-sonnet-4-0", "claude-sonnet-4-5", "opus", "haiku", "fable", "sonnet",
                              "claude-opus-4-20250514",
                              "claude-opus-4-1-20250805", "claude-3-7-sonnet-latest"]),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "oracle-made"))
    ap.add_argument("--models", help="comma-separated subset of the scenario's models")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    os.environ.setdefault("REALORACLE_ROOT", "/tmp/realoracle-made")
    sys.path.insert(0, os.path.join(a.shared, "oracle", "real", "tool"))
    import lib  # noqa: E402  (the real pack's harness)

    for name in a.names or SCENARIOS:
        build, models = SCENARIOS[name]
        t = build()
        for model in a.models.split(",") if a.models else models:
            case = "%s__%s" % (name, model)
            src = os.path.join(lib.ROOT, "inputs", case)
            shutil.rmtree(src, ignore_errors=True)
            os.makedirs(os.path.join(src, PDIR))
            with open(os.path.join(src, PDIR, SID + ".jsonl"), "w") as f:
                f.write(t.jsonl())
            r = lib.run_cli(src, SID, PDIR, model, os.path.join(lib.ROOT, "runs", case))
            dst = os.path.join(a.out, case)
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, os.path.join(dst, "projects"))
            info = {"cli_version": "2.1.332", "pack": "oracle-made", "mode": "resume",
                    "target_session_id": SID, "project_dir_name": PDIR, "cwd": CWD, "model": model,
                    "made_by": "tools/oracle_made.py " + name, "cli_args": r["args"]}
            if not r["bodies"]:
                info["expected_error"] = r["stderr"].strip()
                print(case, "refused:", info["expected_error"][:200])
            else:
                req = lib.av.strip_cache_control(r["bodies"][0]["messages"])
                while req and req[-1]["role"] == "system":  # the new turn's reminders (B10)
                    req.pop()
                last = req[-1]
                assert last["role"] == "user", (case, last)
                json.dump(req[:-1], open(os.path.join(dst, "expected-api-view.json"), "w"),
                          indent=1, ensure_ascii=False)
                info["request_model"] = r["bodies"][0].get("model")
                if any(m["role"] == "system" and "output_config" in m for m in req):
                    os.remove(os.path.join(dst, "expected-api-view.json"))
                    info["view_not_compared"] = (
                        "the CLI sends this model an effort statement ({role: system, content: [], "
                        "output_config: {effort: medium}}) after the first user message, which "
                        "sessiondb does not model; the case is kept for B14 (request_model)")
                print(case, "->", info["request_model"], len(req) - 1, "messages")
            json.dump(info, open(os.path.join(dst, "case.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
