#!/usr/bin/env python3
"""Check with the real Claude Code CLI that sessions written by sessiondb resume.

    python3 tools/cli_check.py --sessiondb target/release/sessiondb \
        --oracle ../shared/oracle [--claude /tmp/ccoracle/node_modules/@anthropic-ai/claude-code/bin/claude.exe]

Builds derived oracle cases in a temp folder and runs the oracle's replay_case.py on them
(the real CLI, offline, against the fake API; it compares the CLI's first request with the
case's expected-request-messages.json):

* baseline/<case>: the original case, unchanged (proves the replay works here);
* fork/<case>: the case's projects imported, `sessiondb fork` of the target, the tree
  exported with `sessiondb export --all`, then `claude -p --resume <fork id> -- <prompt>`.
  The fork holds the same conversation, so the CLI must send the case's request.
* append/<case>: the PREVIOUS step's projects imported, `sessiondb resume --json`, then
  `sessiondb append` of the resumed messages followed by every record the CLI wrote in that
  step (from this case's projects); exported, then this case's `claude --resume`. The CLI
  must send the case's request.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

FORK_CASES = ["bash_resume__step-02", "chain_fork__step-04", "chain_fork__step-05",
              "content_replacement__step-03", "subagent_resume__step-02"]
APPEND_CASES = [("chain_fork__step-01", "chain_fork__step-02"),
                ("tools_mix__step-01", "tools_mix__step-02"),
                ("parallel_tools__step-01", "parallel_tools__step-02"),
                ("compact_twice__step-04", "compact_twice__step-05")]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def derive(src_case, dst, projects, target, drop_fork_flag):
    os.makedirs(dst)
    shutil.copytree(projects, os.path.join(dst, "projects"))
    shutil.copy(os.path.join(src_case, "expected-request-messages.json"), dst)
    cj = json.load(open(os.path.join(src_case, "case.json")))
    args = list(cj["cli_args"])
    if drop_fork_flag:
        args.remove("--fork-session")
    if "--continue" in args:
        args[args.index("--continue"):args.index("--continue") + 1] = ["--resume", target]
    else:
        args[args.index("--resume") + 1] = target
    cj.update(cli_args=args, mode="resume", continue_=False, target_session_id=target, file_mtimes={})
    json.dump(cj, open(os.path.join(dst, "case.json"), "w"), indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessiondb", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--claude", default="/tmp/ccoracle/node_modules/@anthropic-ai/claude-code/bin/claude.exe")
    a = ap.parse_args()
    sdb = os.path.abspath(a.sessiondb)
    cases = os.path.join(os.path.abspath(a.oracle), "cases")
    work = tempfile.mkdtemp(prefix="sessiondb-cli-check-")
    todo = []
    for name in FORK_CASES + [n for _, n in APPEND_CASES]:
        todo.append(os.path.join(cases, name))
    for name in FORK_CASES:
        case = os.path.join(cases, name)
        cj = json.load(open(os.path.join(case, "case.json")))
        d = os.path.join(work, "fork-" + name)
        db = d + ".db"
        run([sdb, "--db", db, "import", os.path.join(case, "projects")])
        new = run([sdb, "--db", db, "fork", cj["target_session_id"]], text=True).stdout.strip()
        run([sdb, "--db", db, "export", "--all", "--out", d + "-tree"])
        derive(case, d, d + "-tree", new, drop_fork_flag=True)
        todo.append(d)
    for prev, name in APPEND_CASES:
        case = os.path.join(cases, name)
        cj = json.load(open(os.path.join(case, "case.json")))
        pj = json.load(open(os.path.join(cases, prev, "case.json")))
        target = cj["target_session_id"]
        assert pj["target_session_id"] == target
        d = os.path.join(work, "append-" + name)
        db = d + ".db"
        run([sdb, "--db", db, "import", os.path.join(cases, prev, "projects")])
        resumed = json.loads(run([sdb, "--db", db, "resume", target, "--json"]).stdout)
        rel = os.path.join(cj["project_dir_name"], target + ".jsonl")
        before = open(os.path.join(cases, prev, "projects", rel), encoding="utf-8").read().splitlines()
        after = open(os.path.join(case, "projects", rel), encoding="utf-8").read().splitlines()
        assert after[:len(before)] == before, "the CLI appended to the file"
        batch = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in resumed["messages"])
        batch += "".join(line + "\n" for line in after[len(before):])
        run([sdb, "--db", db, "append", target], input=batch.encode())
        run([sdb, "--db", db, "export", "--all", "--out", d + "-tree"])
        ours = open(os.path.join(d + "-tree", rel), encoding="utf-8").read().splitlines()
        print("%-40s appended file %s the CLI's" % (name, "equals" if ours == after else "differs from"))
        derive(case, d, d + "-tree", target, drop_fork_flag=False)
        todo.append(d)
    replay = os.path.join(os.path.abspath(a.oracle), "tool", "replay_case.py")
    saved = os.path.join(work, "saved")
    # replay_case.py's own verdict compares with the recorded request, whose NEW turn depends
    # on the machine (an environment reminder can differ); the check here compares what the
    # CLI sent for sessiondb's file with what it sent, on this machine, for the original.
    subprocess.call([sys.executable, replay, "--claude", a.claude, "--save", saved] + todo)
    bad = 0
    for name in FORK_CASES + [n for _, n in APPEND_CASES]:
        base = os.path.join(saved, name + ".json")
        view = json.load(open(os.path.join(cases, name, "expected-api-view.json")))
        for kind in ("fork", "append"):
            mine = os.path.join(saved, "%s-%s.json" % (kind, name))
            if not os.path.exists(mine):
                continue
            got, want = json.load(open(mine)), json.load(open(base))
            same = got == want
            # the new prompt can merge into the conversation's last (user) message
            prefix = got[:len(view) - 1] == view[:-1]
            bad += not (same and prefix)
            print("%-45s request %s the original's; conversation %s expected-api-view"
                  % (kind + "-" + name, "equals" if same else "DIFFERS from",
                     "equals" if prefix else "DIFFERS from"))
    print("work folder:", work)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
