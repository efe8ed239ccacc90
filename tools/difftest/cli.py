"""Run the real Claude Code CLI offline on a projects tree and take its first request.

Uses the real-transcript pack's harness (`oracle/real/tool/lib.py`: fake Messages API on
127.0.0.1, fresh HOME, fixed offline environment). `CLAUDE_BIN` picks another CLI binary
(e.g. a platform package of a newer version)."""
from __future__ import annotations

import copy
import json
import os
import sys

SHARED = os.environ.get("SESSIONDB_SHARED", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
sys.path.insert(0, os.path.join(SHARED, "oracle", "real", "tool"))
import lib  # noqa: E402

if os.environ.get("CLAUDE_BIN"):
    lib.CLAUDE = os.environ["CLAUDE_BIN"]

PROMPT = lib.PROMPT


def cli_version():
    """The version the binary reports (`claude --version`)."""
    import subprocess
    out = subprocess.run([lib.CLAUDE, "--version"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "DISABLE_AUTOUPDATER": "1"}).stdout
    return out.split()[0] if out.split() else "?"


def run(projects, sid, pdir, model, rundir, extra_env=None):
    """First request's messages (cache_control removed), or None and the CLI's stderr."""
    res = lib.run_cli(projects, sid, pdir, model, rundir, extra_env=extra_env)
    if not res["bodies"]:
        return None, res
    return lib.av.strip_cache_control(res["bodies"][0]["messages"]), res


def is_new_turn_tail(view_tail_role):
    return view_tail_role


def strip_new_turn(req):
    """The stored conversation from a request whose stored part ends with an assistant
    message: drop trailing `system` messages (the new turn's reminders in system-message
    mode) and the last user message (the prompt and its reminders)."""
    view = copy.deepcopy(req)
    while view and view[-1]["role"] == "system":
        view.pop()
    if view and view[-1]["role"] == "user":
        view.pop()
    return view


def sessiondb_view(binary, projects, sid, model, workdir, cli_version=None):
    """`sessiondb resume SID --api --model MODEL` on a fresh database of `projects`:
    (messages or None, stderr)."""
    import subprocess
    db = os.path.join(workdir, "s.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    p = subprocess.run([binary, "--db", db, "-q", "import", projects], capture_output=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.decode("utf-8", "replace")
    argv = [binary, "--db", db, "resume", sid, "--api", "--model", model]
    if cli_version:
        argv += ["--cli-version", cli_version]
    p = subprocess.run(argv, capture_output=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.decode("utf-8", "replace")
    return json.loads(p.stdout), ""


VERSION = os.environ.get("CLAUDE_VERSION", "2.1.332")
