#!/usr/bin/env python3
"""Write the web viewer's test tree: a Claude Code projects folder with

* a readable session (thinking, tool calls and results, a Task sub-agent with its own
  transcript, a compaction boundary and summary, an API error, an interruption, an image);
* a second session tagged `release` (for the tag filter);
* a hostile session: markup, script, `javascript:` links, HTML inside Markdown, right-to-left
  overrides, deeply nested JSON, an SVG "image", and (with --big) a 10 MB tool output.

    tools/web/fixture.py OUT_DIR [--big]

The output depends only on the arguments. Used by tools/web/test_browser.py and the Rust
tests (tests/it/web.rs runs it with python3).
"""

import base64
import json
import os
import sys

PROJECT = "-home-dev-webapp"
CWD = "/home/dev/webapp"
READABLE = "11111111-1111-4111-8111-111111111111"
TAGGED = "22222222-2222-4222-8222-222222222222"
HOSTILE = "33333333-3333-4333-8333-333333333333"
AGENT = "a1b2c3d4e5f607182"
# A 1x1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5dd8ad5"
        "0000000049454e44ae426082"
    )
).decode()


class Chain:
    """Records of one transcript, each the child of the previous message."""

    def __init__(self, session, start, sidechain=False, agent=None):
        self.session = session
        self.parent = None
        self.n = 0
        self.start = start
        self.sidechain = sidechain
        self.agent = agent
        self.records = []

    def uuid(self):
        self.n += 1
        prefix = self.session[:8] if self.agent is None else "aaaaaaaa"
        return f"{prefix}-0000-4000-8000-{self.n:012d}"

    def stamp(self):
        return f"{self.start}T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z"

    def add(self, kind, chained=True, **fields):
        uuid = self.uuid()
        rec = {
            "parentUuid": self.parent if chained else None,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session,
            "version": "2.1.0",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": self.stamp(),
        }
        if self.agent:
            rec["agentId"] = self.agent
        rec.update(fields)
        self.records.append(rec)
        if chained:
            self.parent = uuid
        return uuid

    def user(self, content, **fields):
        return self.add("user", message={"role": "user", "content": content}, **fields)

    def assistant(self, mid, blocks, **fields):
        return self.add(
            "assistant",
            message={
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": blocks,
                "stop_reason": None,
                "usage": {
                    "input_tokens": 120,
                    "output_tokens": 45,
                    "cache_read_input_tokens": 1000,
                    "cache_creation_input_tokens": 10,
                },
            },
            **fields,
        )

    def meta(self, kind, **fields):
        rec = {"type": kind, "sessionId": self.session}
        rec.update(fields)
        self.records.append(rec)

    def write(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for r in self.records:
                f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
        # The file's mtime is the session's "last modified": the day the chain started.
        y, m, d = (int(x) for x in self.start.split("-"))
        stamp = int(__import__("calendar").timegm((y, m, d, 12, 0, 0)))
        os.utime(path, (stamp, stamp))


def readable(out):
    c = Chain(READABLE, "2026-03-01")
    c.user("Please **list** the files and check `README.md` for the setup steps.")
    c.assistant("msg_1", [{"type": "thinking", "thinking": "The user wants a listing first.", "signature": "sig"}])
    c.assistant("msg_1", [{"type": "text", "text": "Let me look at the *project* files."}])
    c.assistant("msg_1", [{"type": "tool_use", "id": "toolu_ls", "name": "Bash", "input": {"command": "ls -la", "description": "List files"}}])
    c.user(
        [{"type": "tool_result", "tool_use_id": "toolu_ls", "content": "README.md\nsrc\nCargo.toml\n", "is_error": False}],
        toolUseResult={"stdout": "README.md\nsrc\nCargo.toml\n", "stderr": "", "interrupted": False},
    )
    c.assistant("msg_2", [{"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"description": "Explore the code", "prompt": "Find the modules", "subagent_type": "Explore"}}])
    c.user(
        [{"type": "tool_result", "tool_use_id": "toolu_task", "content": [{"type": "text", "text": "Found 3 modules: parser, store, web."}]}],
        toolUseResult={"status": "completed", "agentId": AGENT, "prompt": "Find the modules", "content": [{"type": "text", "text": "Found 3 modules"}]},
    )
    c.assistant("msg_3", [{"type": "text", "text": "The project has **three modules**: parser, store and web."}])
    c.add("system", subtype="compact_boundary", content="Conversation compacted", level="info",
          compactMetadata={"trigger": "manual", "preTokens": 52000}, logicalParentUuid=c.parent, chained=False)
    c.parent = c.records[-1]["uuid"]
    c.user("This session is being continued from a previous conversation. Summary: the user asked for a listing; three modules were found.",
           isCompactSummary=True, isVisibleInTranscriptOnly=True)
    c.assistant("msg_4", [{"type": "text", "text": "API Error: 529 Overloaded"}], isApiErrorMessage=True, apiErrorStatus=529)
    c.user([{"type": "text", "text": "[Request interrupted by user]"}])
    c.user([{"type": "text", "text": "Here is the screenshot of the *zebra* page."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}])
    c.assistant("msg_5", [{"type": "text", "text": "| page | state |\n|---|---|\n| zebra | fine |\n\nAll good."}])
    c.meta("custom-title", customTitle="Readable demo session")
    c.write(os.path.join(out, PROJECT, READABLE + ".jsonl"))

    a = Chain(READABLE, "2026-03-01", sidechain=True, agent=AGENT)
    a.user("Find the modules")
    a.assistant("msg_a1", [{"type": "tool_use", "id": "toolu_a_grep", "name": "Grep", "input": {"pattern": "mod "}}])
    a.user([{"type": "tool_result", "tool_use_id": "toolu_a_grep", "content": "src/parser.rs\nsrc/store.rs\nsrc/web.rs"}])
    a.assistant("msg_a2", [{"type": "text", "text": "Found 3 modules: parser, store, web (the *okapi* note)."}])
    a.write(os.path.join(out, PROJECT, READABLE, "subagents", f"agent-{AGENT}.jsonl"))


def tagged(out):
    c = Chain(TAGGED, "2026-02-01")
    c.user("Prepare the release notes for version 2.")
    c.assistant("msg_r1", [{"type": "text", "text": "Release notes drafted."}])
    c.meta("tag", tag="release")
    c.write(os.path.join(out, PROJECT, TAGGED + ".jsonl"))


def nested(depth):
    v = "bottom"
    for _ in range(depth):
        v = {"n": v}
    return v


def hostile(out, big):
    c = Chain(HOSTILE, "2026-01-01")
    c.user(
        "<script>window.__pwned='user-script'</script> hello <img src=x onerror=\"window.__pwned='img'\"> "
        "[click me](javascript:window.__pwned='link') [data](data:text/html,<script>alert(1)</script>) "
        "<a href=\"javascript:window.__pwned='a'\">raw anchor</a>\n\n"
        "<div onclick=\"window.__pwned='div'\">html block</div>\n\n"
        "<iframe src=\"javascript:window.__pwned='iframe'\"></iframe>\n\n"
        "file: invoice\u202egpj.exe and \u2067isolate\u2069 text"
    )
    c.assistant("msg_h1", [
        {"type": "thinking", "thinking": "<svg onload=\"window.__pwned='svg'\"></svg>", "signature": "s"},
        {"type": "text", "text": "![x](javascript:window.__pwned='image') <style>body{display:none}</style>"},
        {"type": "tool_use", "id": "toolu_h1", "name": "<b onmouseover=\"window.__pwned='tool'\">Bash</b>",
         "input": {"command": "</pre><script>window.__pwned='input'</script>", "deep": nested(100)}},
    ])
    output = "</pre></details><script>window.__pwned='output'</script>\n"
    if big:
        output += ("0123456789abcdef<b>x</b>\n" * (10_000_000 // 25))
    c.user([{"type": "tool_result", "tool_use_id": "toolu_h1", "content": output}])
    c.user([{"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml",
                                         "data": base64.b64encode(b"<svg onload=\"window.__pwned='svgimg'\"/>").decode()}}])
    # Deeper than serde_json reads: shown as the raw line.
    c.assistant("msg_h2", [{"type": "text", "text": "deep"}], extra=nested(300))
    c.assistant("msg_h3", [{"type": "text", "text": "The end <script>window.__pwned='end'</script>"}])
    c.meta("custom-title", customTitle="<script>window.__pwned='title'</script>Hostile \u202etitle")
    c.meta("tag", tag="<img src=x onerror=window.__pwned='tag'>")
    c.write(os.path.join(out, PROJECT, HOSTILE + ".jsonl"))


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    out = argv[0]
    big = "--big" in argv[1:]
    readable(out)
    tagged(out)
    hostile(out, big)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
