#!/usr/bin/env python3
"""Median milliseconds of the Agent SDK's get_session_messages on one transcript file.

    python3 tools/sdk_messages_timing.py FILE.jsonl [RUNS]

Copies FILE into a temporary Claude config dir (projects/<dir>/<uuid>.jsonl), points the
SDK at it, and prints one number. Exits 1 with a message when claude_agent_sdk is missing.
"""
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid


def main() -> int:
    try:
        import claude_agent_sdk as sdk
    except ImportError:
        print("claude_agent_sdk is not installed (pip install claude-agent-sdk)", file=sys.stderr)
        return 1
    src = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    with tempfile.TemporaryDirectory() as config:
        cwd = os.path.join(config, "work")
        os.makedirs(cwd)
        project = os.path.join(config, "projects", "".join(c if c.isalnum() else "-" for c in cwd))
        os.makedirs(project)
        sid = str(uuid.uuid4())
        shutil.copy(src, os.path.join(project, sid + ".jsonl"))
        os.environ["CLAUDE_CONFIG_DIR"] = config
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            messages = sdk.get_session_messages(sid, directory=cwd)
            samples.append((time.perf_counter() - started) * 1e3)
        if not messages:
            print("the SDK returned no messages", file=sys.stderr)
            return 1
        print("%.3f" % statistics.median(samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
