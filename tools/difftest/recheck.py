#!/usr/bin/env python3
"""Replay every made case (tests/fixtures/oracle-made) with a CLI binary (`CLAUDE_BIN`) and
print the cases whose first request's stored part changed.

    CLAUDE_BIN=/path/to/claude python3 tools/difftest/recheck.py [--only SUBSTR] [-j 2]"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cli  # noqa: E402


def one(d, scratch):
    cj = json.load(open(os.path.join(d, "case.json")))
    want_path = os.path.join(d, "expected-api-view.json")
    if not os.path.exists(want_path):
        return os.path.basename(d), "skipped (no view)", None
    req, res = cli.run(os.path.join(d, "projects"), cj["target_session_id"], cj["project_dir_name"],
                       cj["model"], os.path.join(scratch, os.path.basename(d)))
    if req is None:
        return os.path.basename(d), "NO REQUEST", res["stderr"][-300:]
    now = cli.strip_new_turn(req)
    want = json.load(open(want_path))
    if now == want:
        return os.path.basename(d), "same", None
    # a case made with another version (e.g. issue25_later_332 replayed with 2.1.336) may
    # change by a rule `resume --cli-version` follows: said so, still counted
    changed = "CHANGED" if cj.get("cli_version", cli.VERSION) == cli.VERSION else \
        "CHANGED (made with %s)" % cj["cli_version"]
    for i, (a, b) in enumerate(zip(want, now)):
        if a != b:
            return os.path.basename(d), changed, "message %d\n  was %s\n  now %s" % (
                i, json.dumps(a, ensure_ascii=False)[:300], json.dumps(b, ensure_ascii=False)[:300])
    return os.path.basename(d), changed, "length %d -> %d" % (len(want), len(now))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--scratch", default="/tmp/difftest-recheck")
    args = ap.parse_args()
    dirs = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(HERE, "..", "..", "tests", "fixtures", "oracle-made", "*", "case.json")))
    dirs = [d for d in dirs if not args.only or args.only in d]
    changed = 0
    with cf.ThreadPoolExecutor(args.j) as ex:
        for name, verdict, detail in ex.map(lambda d: one(d, args.scratch), dirs):
            print("%-45s %s" % (name, verdict))
            if detail:
                print("  " + detail)
            changed += verdict != "same" and not verdict.startswith("skipped")
    print("%d of %d made cases changed" % (changed, len(dirs)))


if __name__ == "__main__":
    main()
