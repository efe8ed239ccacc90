#!/usr/bin/env python3
"""Resume every transcript of a folder with the real CLI (offline) and with sessiondb, and
compare the first request (the comparison of difftest.py, no variants).

    CLAUDE_BIN=/path/to/claude python3 tools/difftest/unseen.py --sessiondb target/debug/sessiondb DIR
        [--models claude-sonnet-4-5,claude-opus-4-8] [-j 2] [--out DIR] [--only SUBSTR]
        [--variants --seed 1] [--together] [--cli-version V]

Each `DIR/*.jsonl` is one main transcript: its session id is the file name when that is a
UUID, else the last record's `sessionId`; its project folder is the first record's `cwd`
with every non-alphanumeric character replaced by `-`. Results go to OUT/results.jsonl and
every disagreement's transcript and both answers to OUT/disagree/<name>~<model>/.

`--variants` also runs difftest.py's variants of each transcript (records swapped, dropped
or written twice, the file cut after a record of each type, the other model, stored text
stripped, another version claimed, an attachment spliced in), drawn from `--seed`.
`--together` resumes each transcript with every other one of the folder beside it (one
projects tree; transcripts of one working directory share a project folder)."""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import glob
import json
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cli  # noqa: E402
import difftest  # noqa: E402


def meta(path):
    m = cli.lib.session_meta(path)
    pdir = re.sub(r"[^A-Za-z0-9]", "-", m["cwd"] or "/unknown")
    return m, pdir


def run_one(path, model, args, variant="orig", lines=None):
    name = os.path.basename(path)[:-6]
    m, pdir = meta(path)
    sid = m["sid"]
    vid = "%s~%s~%s" % (name, variant, model)
    work = os.path.join(args.out, "work", vid)
    shutil.rmtree(work, ignore_errors=True)
    proj = os.path.join(work, "projects", pdir)
    os.makedirs(proj)
    for other in args.together_with:
        om, opdir = meta(other)
        os.makedirs(os.path.join(work, "projects", opdir), exist_ok=True)
        shutil.copyfile(other, os.path.join(work, "projects", opdir, om["sid"] + ".jsonl"))
    if lines is None:
        shutil.copyfile(path, os.path.join(proj, sid + ".jsonl"))
    else:
        with open(os.path.join(proj, sid + ".jsonl"), "wb") as f:
            f.write(b"\n".join(lines) + b"\n")
    verdict, want, req, view, err, res = difftest.resume_both(work, sid, pdir, model, args)
    row = {"name": name, "variant": variant, "model": model, "versions": m["versions"], "records": m["records"],
           "verdict": verdict, "cli_refused": req is None, "sessiondb_refused": view is None}
    if verdict == "disagree":
        keep = os.path.join(args.out, "disagree", vid)
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(os.path.join(work, "projects"), os.path.join(keep, "projects"))
        json.dump({"cli": want, "cli_full": req, "sessiondb": view, "sessiondb_error": err,
                   "cli_stderr": res["stderr"][-2000:]},
                  open(os.path.join(keep, "result.json"), "w"), indent=1, ensure_ascii=False)
    shutil.rmtree(work, ignore_errors=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessiondb", required=True)
    ap.add_argument("dir")
    ap.add_argument("--models", default=",".join(difftest.MODELS))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--out", default=os.environ.get("DIFFTEST_OUT", os.path.join(tempfile.gettempdir(), "difftest-unseen")))
    ap.add_argument("--only")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--together", action="store_true")
    ap.add_argument("--cli-version", help="passed to `sessiondb resume --cli-version` (the CLI version CLAUDE_BIN runs)")
    args = ap.parse_args()
    args.sessiondb = os.path.abspath(args.sessiondb)
    os.makedirs(args.out, exist_ok=True)
    files = sorted(glob.glob(os.path.join(args.dir, "*.jsonl")))
    args.together_with = list(files) if args.together else []
    files = [f for f in files if not args.only or args.only in f]
    jobs = [(f, m, "orig", None) for f in files for m in args.models.split(",")]
    if args.variants:
        import random
        rng = random.Random(args.seed)
        catalog = difftest.attachment_catalog()
        for f in files:
            for vname, v, m in difftest.variants(difftest.read_lines(f), difftest.MODELS[0], rng, catalog):
                if vname not in ("orig", "model"):
                    jobs.append((f, m, vname, v))
    counts = {}
    with open(os.path.join(args.out, "results.jsonl"), "w") as out, cf.ThreadPoolExecutor(args.j) as ex:
        for row in ex.map(lambda j: run_one(j[0], j[1], args, j[2], j[3]), jobs):
            out.write(json.dumps(row) + "\n")
            out.flush()
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
            print("%-40s %-16s %-18s %-9s %s" % (row["name"][:40], row["variant"][:16], row["model"], row["verdict"],
                                           ",".join(row["versions"])[:40]), flush=True)
    print(json.dumps({"transcripts": len(files), "runs": len(jobs), **counts}))


if __name__ == "__main__":
    main()
