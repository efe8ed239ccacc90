"""The real Claude Code CLI runs sessiondb's MCP tools: offline, against the fake Messages API
of ../shared/oracle/tool (fakeapi.py), a scripted assistant turn calls
`mcp__sessiondb__find`, the next one `mcp__sessiondb__read`; the CLI, configured with
`--mcp-config`, spawns `sessiondb mcp` and runs both, and the requests that follow carry
their tool_results: the expected session and text.

`CLAUDE_BIN` is the CLI (`npm install --prefix DIR @anthropic-ai/claude-code@2.1.332`, then
DIR/node_modules/@anthropic-ai/claude-code/bin/claude.exe); without it the test is skipped,
and fails under CI.
"""

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import REPO, binary, cli
from test_mcp import busiest_session, first_word_of

FAKEAPI = REPO.parent / "shared" / "oracle" / "tool" / "fakeapi.py"


def claude_bin():
    path = os.environ.get("CLAUDE_BIN")
    if not path or not Path(path).is_file():
        if os.environ.get("CI"):
            pytest.fail("CLAUDE_BIN must name the Claude Code CLI under CI (see .ci/run)")
        pytest.skip("set CLAUDE_BIN to the Claude Code CLI to run this test")
    if not FAKEAPI.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{FAKEAPI} is missing")
        pytest.skip(f"{FAKEAPI} is missing")
    return path


def test_claude_code_calls_find_then_read(store):
    claude = claude_bin()
    sid = busiest_session(store)["session_id"]
    word = first_word_of(store, sid)
    chain = {m["uuid"] for m in cli(store, "messages", sid, "--json")}
    hit = next(h for h in cli(store, "search", "--json", "--limit", "20", word)
               if h["session_id"] == sid and h["uuid"] in chain)
    with tempfile.TemporaryDirectory(prefix="sessiondb-claude-") as tmp:
        tmp = Path(tmp)
        work = tmp / "home" / "work"
        work.mkdir(parents=True)
        turns = [
            {"content": [{"type": "tool_use", "name": "mcp__sessiondb__find",
                          "input": {"query": word, "limit": 20}}]},
            {"content": [{"type": "tool_use", "name": "mcp__sessiondb__read",
                          "input": {"session": sid, "around": hit["uuid"], "limit": 1}}]},
            {"content": [{"type": "text", "text": "done"}]},
        ]
        (tmp / "turns.json").write_text(json.dumps(turns))
        config = {"mcpServers": {"sessiondb": {
            "type": "stdio", "command": binary(), "args": ["--db", store, "mcp"]}}}
        (work / "mcp.json").write_text(json.dumps(config))
        fake_out = open(tmp / "fake.out", "w+")
        fake = subprocess.Popen(
            ["python3", str(FAKEAPI), "--port", "0", "--logdir", str(tmp / "log"),
             "--turns", str(tmp / "turns.json")],
            stdout=fake_out, stderr=subprocess.STDOUT)
        try:
            port = None
            for _ in range(100):
                fake_out.seek(0)
                for line in fake_out.read().splitlines():
                    if line.startswith("PORT "):
                        port = line.split()[1]
                if port:
                    break
                time.sleep(0.1)
            assert port, "the fake API did not start"
            env = dict(
                os.environ, HOME=str(tmp / "home"), IS_SANDBOX="1",
                ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="sk-test-dummy",
                DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1", DISABLE_AUTOUPDATER="1",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_NON_ESSENTIAL_MODEL_CALLS="1",
            )
            env.pop("CLAUDE_CODE_SESSION_ID", None)
            run = subprocess.run(
                [claude, "-p", "--output-format", "stream-json", "--verbose",
                 "--dangerously-skip-permissions", "--model", "claude-sonnet-4-5",
                 "--strict-mcp-config", "--mcp-config", "mcp.json", "--", "what did we do?"],
                cwd=work, env=env, capture_output=True, text=True, timeout=180)
            assert run.returncode == 0, run.stderr[-2000:]
        finally:
            fake.kill()
            fake.wait()
        bodies = [json.loads(p.read_text()) for p in sorted((tmp / "log").glob("messages-*.json"))]
        results = []
        for body in bodies:
            last = body["messages"][-1]
            for block in last["content"] if isinstance(last["content"], list) else []:
                if block.get("type") == "tool_result":
                    results.append(block)
        assert len(results) == 2, [json.dumps(b["messages"][-1])[:300] for b in bodies]
        for r in results:
            assert not r.get("is_error"), r
        found = json.loads(result_text(results[0]))
        assert sid in [h["session"] for h in found["hits"]]
        assert hit["uuid"] in [h.get("uuid") for h in found["hits"]]
        read = json.loads(result_text(results[1]))
        assert read["session"] == sid
        assert read["messages"][0]["uuid"] == hit["uuid"]
        assert word.lower() in read["messages"][0]["text"].lower()


def result_text(block):
    """The tool's JSON: Claude Code may append a `<system-reminder>` after it."""
    content = block["content"]
    if not isinstance(content, str):
        content = "".join(part.get("text", "") for part in content)
    value, end = json.JSONDecoder().raw_decode(content)
    assert not content[end:].strip() or "<system-reminder>" in content[end:], content[end:][:200]
    return json.dumps(value)
