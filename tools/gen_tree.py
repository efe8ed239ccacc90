#!/usr/bin/env python3
"""Build a Claude Code projects tree for the import benchmark.

    tools/gen_tree.py OUT_DIR [TARGET_SIZE] [SEED] [--corpus DIR]

Replicates the corpus transcripts (default: ../shared/corpus/claude-code next to the
repository) under fresh session ids until the tree holds at least TARGET_SIZE bytes
(default 1G; suffixes K, M, G accepted). Layout:

    OUT_DIR/<project>/<session-uuid>.jsonl
    OUT_DIR/<project>/<session-uuid>/subagents/agent-<id>.jsonl

Each replica ("round") maps every distinct `sessionId` value it meets to a fresh uuid and
replaces it byte for byte inside the lines, so sessions are distinct; an agent file gets a
fresh agent id and is put under its (renamed) parent session. A main file whose name is
not a uuid is named after its renamed session id, or a fresh uuid. The output depends only
on the corpus and SEED. Standard library only. Never write the output into the repository.
"""

import os
import random
import re
import sys
import uuid

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
SESSION_RE = re.compile(rb'"(?:sessionId|session_id)"\s*:\s*"([^"\\]+)"')
PROJECTS = 8


def parse_size(text):
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text and text[-1] in scale:
        return int(float(text[:-1]) * scale[text[-1]])
    return int(text)


def fresh_uuid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def load_corpus(corpus):
    files = []
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(corpus, name), "rb") as f:
            data = f.read()
        stem = name[: -len(".jsonl")]
        slug, _, original = stem.partition("__")
        ids = []
        for m in SESSION_RE.finditer(data):
            sid = m.group(1)
            if sid not in ids:
                ids.append(sid)
        files.append(
            {
                "slug": slug,
                "stem": original or stem,
                "data": data,
                "ids": ids,
                "agent": (original or stem).startswith("agent-"),
            }
        )
    return files


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main(argv):
    args = [a for a in argv if not a.startswith("--corpus")]
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus", "claude-code")
    for i, a in enumerate(argv):
        if a.startswith("--corpus="):
            corpus = a.split("=", 1)[1]
        elif a == "--corpus":
            corpus = argv[i + 1]
            args.remove(corpus)
    if not args or len(args) > 3:
        sys.stderr.write(__doc__)
        return 2
    out = args[0]
    target = parse_size(args[1]) if len(args) > 1 else 1 << 30
    seed = int(args[2]) if len(args) > 2 else 1
    files = load_corpus(corpus)
    if not any(f["data"] for f in files):
        sys.stderr.write(f"no transcripts in {corpus}\n")
        return 1
    rng = random.Random(seed)
    total = 0
    count = 0
    rounds = 0
    while total < target:
        mapping = {}
        used = set()

        def new_id(old):
            if old not in mapping:
                mapping[old] = fresh_uuid(rng).encode()
            return mapping[old]

        project = f"-bench-project-{rounds % PROJECTS}"
        for f in files:
            data = f["data"]
            for old in f["ids"]:
                data = data.replace(old, new_id(old))
            if f["agent"]:
                parent = new_id(f["ids"][0]) if f["ids"] else fresh_uuid(rng).encode()
                agent = f"a{rng.getrandbits(64):016x}"
                old_agent = f["stem"][len("agent-") :].encode()
                data = data.replace(old_agent, agent.encode())
                path = os.path.join(out, project, parent.decode(), "subagents", f"agent-{agent}.jsonl")
            else:
                if UUID_RE.match(f["stem"]):
                    name = new_id(f["stem"].encode()).decode()
                elif f["ids"]:
                    name = new_id(f["ids"][0]).decode()
                else:
                    name = fresh_uuid(rng)
                if name in used:
                    name = fresh_uuid(rng)
                used.add(name)
                path = os.path.join(out, project, f"{name}.jsonl")
            write(path, data)
            total += len(data)
            count += 1
            if total >= target:
                break
        rounds += 1
    print(f"{out}: {count} files, {total} bytes, {rounds} rounds, seed {seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
