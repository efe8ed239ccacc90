#!/usr/bin/env python3
"""Differential test of `sessiondb resume --api` against the real Claude Code CLI.

Takes transcripts (the made cases of tests/fixtures/oracle-made and the real-transcript
pack's cases), derives variants from each, runs the real CLI offline on every variant
(tools/difftest/cli.py) and compares its first request with sessiondb's view.

    python3 tools/difftest/difftest.py --sessiondb target/debug/sessiondb [-n 500] [-j 2]
        [--seed 1] [--out DIR] [--only SUBSTR] [--skip SUBSTRS] [--variant NAMES] [--pick IDS]
        [--cli-version V]

Variants: `orig`; `swap` (two adjacent records of one API message exchanged); `drop` and
`dup` (a record removed or written twice); `cut-<type>` (the file ends after a record of
that type); `model` (the other model mode); `strip-rendered` (attachments lose their
stored text); `version` (every record claims another CLI version); `insert-<kind>` (an
attachment of a kind from the made cases spliced into the chain).

Comparison: when sessiondb's view ends with an assistant message, the CLI's request minus
its new turn (the last user message and trailing `system` messages) must equal it. When it
ends with user content, the new turn merged into that message: every message before it must
be equal, and the CLI's last stored message must begin with sessiondb's (text up to a seam
`\\n`). A refusal must be a refusal on both sides. Results: DIR/results.jsonl; every
disagreement's transcript is kept in DIR/disagree/<id>/."""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import glob
import json
import os
import random
import shutil
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cli  # noqa: E402

REPO = os.path.join(HERE, "..", "..")
MODELS = ("claude-sonnet-4-5", "claude-opus-4-8")


def read_lines(path):
    out = []
    for l in open(path, "rb").read().split(b"\n"):
        if l.strip():
            out.append(l)
    return out


def parse(l):
    try:
        r = json.loads(l)
        return r if isinstance(r, dict) else None
    except Exception:
        return None


def sources(shared, only):
    """(name, case dir, session id, project dir, model) of every input transcript."""
    dirs = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "oracle-made", "*", "case.json")))
    dirs += sorted(glob.glob(os.path.join(shared, "oracle", "real", "cases", "*", "case.json")))
    out = []
    for cj_path in dirs:
        d = os.path.dirname(cj_path)
        cj = json.load(open(cj_path))
        if only and only not in d:
            continue
        if cj.get("expected_error") or cj.get("view_not_compared"):
            continue
        model = cj.get("model") or next((a for a, b in zip(cj.get("cli_args", []), cj.get("cli_args", [])[1:] + [""])
                                         if False), None)
        args = cj.get("cli_args", [])
        if "--model" in args:
            model = args[args.index("--model") + 1]
        if not model:
            continue
        f = os.path.join(d, "projects", cj["project_dir_name"], cj["target_session_id"] + ".jsonl")
        if os.path.exists(f) and os.path.getsize(f) < 3_000_000:
            out.append((os.path.basename(d), d, cj["target_session_id"], cj["project_dir_name"], model))
    # a file that several cases hold for one model (the same file resumed by another CLI
    # version, e.g. issue25_later_332 beside issue25_later) gives the same variants: only
    # the case of the shortest name is taken
    first = {}
    for s in out:
        key = (s[4], open(os.path.join(s[1], "projects", s[3], s[2] + ".jsonl"), "rb").read())
        if key not in first or (len(s[0]), s[0]) < (len(first[key][0]), first[key][0]):
            first[key] = s
    keep = {id(s) for s in first.values()}
    return [s for s in out if id(s) in keep]


def attachment_catalog(skip=()):
    """Attachment payloads of the made cases (but those named in `skip`), one per kind (for
    `insert-<kind>`)."""
    cat = {}
    made = os.path.join(REPO, "tests", "fixtures", "oracle-made")
    for f in sorted(glob.glob(os.path.join(made, "*", "projects", "*", "*.jsonl"))):
        if any(x in os.path.relpath(f, made).split(os.sep)[0] for x in skip):
            continue
        for l in read_lines(f):
            r = parse(l)
            if r and r.get("type") == "attachment" and isinstance(r.get("attachment"), dict):
                cat.setdefault(r["attachment"].get("type"), r["attachment"])
    return cat


def chain_records(lines):
    return [(i, r) for i, r in enumerate(map(parse, lines)) if r and r.get("uuid")]


def variants(lines, model, rng, catalog):
    """(name, lines, model) variants of one transcript."""
    recs = chain_records(lines)
    out = [("orig", lines, model)]
    other = MODELS[1] if model != MODELS[1] else MODELS[0]
    out.append(("model", lines, other))
    # swap two adjacent records of one API message
    pairs = [(a[0], b[0]) for a, b in zip(recs, recs[1:])
             if b[0] == a[0] + 1 and a[1].get("type") in ("assistant", "user") and
             (((a[1].get("message") or {}).get("id") and (a[1].get("message") or {}).get("id") == (b[1].get("message") or {}).get("id"))
              or (a[1].get("type") == "assistant" and b[1].get("type") == "user"
                  and a[1].get("message", {}).get("id") is not None))]
    if pairs:
        i, j = rng.choice(pairs)
        v = list(lines)
        v[i], v[j] = v[j], v[i]
        out.append(("swap", v, model))
    if len(recs) > 2:
        i = rng.choice(recs[1:])[0]
        out.append(("drop", lines[:i] + lines[i + 1:], model))
        i = rng.choice(recs[1:])[0]
        out.append(("dup", lines[:i + 1] + [lines[i]] + lines[i + 1:], model))
    by_type = {}
    for i, r in recs[1:]:
        key = r.get("type")
        if key == "user" and isinstance((r.get("message") or {}).get("content"), list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in r["message"]["content"]):
            key = "tool_result"
        by_type.setdefault(key, []).append(i)
    for t, idx in sorted(by_type.items()):
        i = rng.choice(idx)
        out.append(("cut-" + str(t), lines[:i + 1], model))
    if any(parse(l) and parse(l).get("rendered") is not None for l in lines):
        v = []
        for l in lines:
            r = parse(l)
            if r and r.get("type") == "attachment" and "rendered" in r:
                r = dict(r)
                r.pop("rendered")
                r.pop("renderedRole", None)
                l = json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()
            v.append(l)
        out.append(("strip-rendered", v, model))
    v = []
    for l in lines:
        r = parse(l)
        if r and "version" in r:
            r = dict(r)
            r["version"] = "2.0.50"
            l = json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()
        v.append(l)
    out.append(("version", v, model))
    # insert an attachment of some kind after a chain record, re-parenting its child
    kinds = sorted(k for k in catalog if k)
    if kinds and len(recs) > 1:
        for k in rng.sample(kinds, min(2, len(kinds))):
            i, r = rng.choice(recs[:-1])
            a = {k2: v2 for k2, v2 in r.items() if k2 in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "timestamp")}
            a.update({"parentUuid": r["uuid"], "type": "attachment", "uuid": "ffffffff-0000-4000-8000-%012d" % rng.randrange(10 ** 12),
                      "attachment": copy.deepcopy(catalog[k])})
            v = list(lines)
            for j, l in enumerate(v):
                c = parse(l)
                if c and c.get("parentUuid") == r["uuid"]:
                    c = dict(c)
                    c["parentUuid"] = a["uuid"]
                    v[j] = json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode()
            v.insert(i + 1, json.dumps(a, ensure_ascii=False, separators=(",", ":")).encode())
            out.append(("insert-" + k, v, model))
    return out


def js_trim(t):
    return t.strip(" \t\n\r\x0b\x0c\u00a0\ufeff\u2028\u2029")


def same_block(x, y):
    """Whether the CLI's block `y` is sessiondb's `x` after the new turn merged into it: a
    `\n` seam on text (added, or taken by new-turn reminders inserted after a stored one), a reminder folded into a tool result (content trimmed, text added)."""
    if x == y:
        return True
    if x.get("type") == "text" and y.get("type") == "text":
        # sessiondb's last stored reminder carries the `\n` seam before the text after it;
        # in the CLI's request the new turn's reminders come in between and carry it
        xt, yt = x.get("text", ""), y.get("text", "")
        return yt == xt + "\n" or (xt.endswith("</system-reminder>\n") and xt == yt + "\n")
    if x.get("type") == "tool_result" and y.get("type") == "tool_result" and x.get("tool_use_id") == y.get("tool_use_id"):
        xc, yc = x.get("content"), y.get("content")
        if isinstance(xc, str) and isinstance(yc, str):
            return yc == js_trim(xc) or yc.startswith(js_trim(xc) + "\n\n") or not js_trim(xc)
        if isinstance(xc, list) and isinstance(yc, list) and len(yc) >= len(xc):
            return all(same_block(a, b) for a, b in zip(xc, yc))
    return False


def merged_into(a, b):
    """Whether content `b` (the CLI's last stored message, the new turn merged in) holds
    the blocks of `a` in order, new-turn blocks anywhere between them (R6 moves the new
    reminders up past trailing local-command text)."""
    def blocks(c):
        return [{"type": "text", "text": c}] if isinstance(c, str) else list(c)
    a, b = blocks(a), blocks(b)

    def seam_taken(x, k):
        # sessiondb's `\n` seam on text that the CLI's new-turn reminders follow instead
        y, after = b[k], b[k + 1] if k + 1 < len(b) else {}
        return (x.get("type") == y.get("type") == "text" and x.get("text") == y.get("text", "") + "\n"
                and str(after.get("text", "")).startswith("<system-reminder>"))
    j = 0
    for x in a:
        while j < len(b) and not same_block(x, b[j]) and not seam_taken(x, j):
            j += 1
        if j == len(b):
            return False
        j += 1
    return True


def text_of(c):
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c if isinstance(b, dict))


def compare(req, view):
    if view and view[-1]["role"] == "assistant":
        want = cli.strip_new_turn(req)
        return ("agree" if want == view else "disagree"), want
    if not view:
        return "agree", []
    if view[-1]["role"] == "system":
        # stored reminders with no reply after them: the CLI merges the new turn's
        # reminders into the same system message (text blocks), after the stored text
        n = len(view)
        if len(req) < n or req[n - 1]["role"] != "system":
            return "disagree", req
        if not text_of(req[n - 1]["content"]).startswith(text_of(view[-1]["content"])):
            return "disagree", req
        if view[:-1] == req[:n - 1]:
            return "agree", req
        if n < 2 or view[-2]["role"] == "assistant":
            return "disagree", req
        return compare(req[:n - 1], view[:-1])[0], req
    head = req[:len(view) - 1]
    if head != view[:-1]:
        return "disagree", req
    if len(req) < len(view) or req[len(view) - 1]["role"] != view[-1]["role"]:
        return "disagree", req
    return ("agree" if merged_into(view[-1]["content"], req[len(view) - 1]["content"]) else "disagree"), req


def resume_both(work, sid, pdir, model, args):
    """The real CLI and `sessiondb resume --api` (`args.sessiondb`, `args.cli_version`) on
    the session `sid` of `work/projects`: (verdict, what the CLI sent that the view is
    compared with, the CLI's request, the view, sessiondb's stderr, the CLI's run). A CLI
    that refused while sessiondb did not is run once more (its start can time out)."""
    projects = os.path.join(work, "projects")
    req, res = cli.run(projects, sid, pdir, model, os.path.join(work, "run"))
    view, err = cli.sessiondb_view(args.sessiondb, projects, sid, model, work, args.cli_version)
    if req is None and view is not None:
        req, res = cli.run(projects, sid, pdir, model, os.path.join(work, "run"))
    if req is None and view is None:
        verdict, want = "agree", None
    elif req is None or view is None:
        verdict, want = "disagree", req
    else:
        verdict, want = compare(req, view)
    return verdict, want, req, view, err, res


def run_one(job, args, lock):
    vid, name, sid, pdir, vname, lines, model = job
    work = os.path.join(args.out, "work", vid)
    shutil.rmtree(work, ignore_errors=True)
    proj = os.path.join(work, "projects", pdir)
    os.makedirs(proj)
    with open(os.path.join(proj, sid + ".jsonl"), "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    verdict, want, req, view, err, res = resume_both(work, sid, pdir, model, args)
    row = {"id": vid, "source": name, "variant": vname, "model": model, "verdict": verdict,
           "cli_refused": req is None, "sessiondb_refused": view is None}
    if verdict == "disagree":
        keep = os.path.join(args.out, "disagree", vid)
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(os.path.join(work, "projects"), os.path.join(keep, "projects"))
        json.dump({"cli": want, "sessiondb": view, "sessiondb_error": err,
                   "cli_stderr": res["stderr"][-2000:]}, open(os.path.join(keep, "result.json"), "w"), indent=1, ensure_ascii=False)
    shutil.rmtree(work, ignore_errors=True)
    with lock:
        with open(os.path.join(args.out, "results.jsonl"), "a") as f:
            f.write(json.dumps(row) + "\n")
    return row


def recompare(out):
    """Verdicts of the kept disagreements again, with the current comparison."""
    still = []
    for d in sorted(glob.glob(os.path.join(out, "disagree", "*", "result.json"))):
        r = json.load(open(d))
        if r["cli"] is not None and r["sessiondb"] is not None:
            v, _ = compare(r["cli"] if r["sessiondb"] and r["sessiondb"][-1]["role"] != "assistant" else r["cli"], r["sessiondb"])
            if r["sessiondb"] and r["sessiondb"][-1]["role"] == "assistant":
                v = "agree" if r["cli"] == r["sessiondb"] else "disagree"
            if v == "agree":
                continue
        still.append(os.path.basename(os.path.dirname(d)))
    print("\n".join(still))
    print("%d still disagree" % len(still))


def main():
    if sys.argv[1:2] == ["--recompare"]:
        return recompare(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessiondb", required=True)
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("-n", type=int, default=500)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("DIFFTEST_OUT", "/tmp/difftest"))
    ap.add_argument("--only")
    ap.add_argument("--skip", help="leave out the sources whose name contains one of these "
                    "comma-separated substrings (e.g. made cases added since a run, to rerun its variants)")
    ap.add_argument("--cli-version")
    ap.add_argument("--variant", help="of the n chosen variants, run only those of these names "
                    "(comma-separated, e.g. drop,cut-assistant), so that a rerun checks the same ones")
    ap.add_argument("--pick", help="of the n chosen variants, run only those whose id contains "
                    "one of these comma-separated substrings (a rerun of named disagreements)")
    args = ap.parse_args()
    args.sessiondb = os.path.abspath(args.sessiondb)
    os.makedirs(args.out, exist_ok=True)
    open(os.path.join(args.out, "results.jsonl"), "w").close()
    rng = random.Random(args.seed)
    skip = [x for x in (args.skip or "").split(",") if x]
    catalog = attachment_catalog(skip)
    jobs = []
    for name, d, sid, pdir, model in sources(args.shared, args.only):
        if any(x in name for x in skip):
            continue
        lines = read_lines(os.path.join(d, "projects", pdir, sid + ".jsonl"))
        for vname, v, m in variants(lines, model, rng, catalog):
            jobs.append(("%s~%s~%s" % (name, vname, m), name, sid, pdir, vname, v, m))
    rng.shuffle(jobs)
    # made cases and small files first: they run fast
    jobs = jobs[:args.n]
    if args.variant:
        names = args.variant.split(",")
        jobs = [j for j in jobs if j[4] in names]
    if args.pick:
        picks = args.pick.split(",")
        jobs = [j for j in jobs if any(p in j[0] for p in picks)]
    lock = threading.Lock()
    counts = {}
    with cf.ThreadPoolExecutor(args.j) as ex:
        for row in ex.map(lambda j: run_one(j, args, lock), jobs):
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    print(json.dumps({"variants": len(jobs), **counts}))


if __name__ == "__main__":
    main()
