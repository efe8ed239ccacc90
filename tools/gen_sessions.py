#!/usr/bin/env python3
"""Build a many-session Claude Code projects tree for the catalog/search benchmark.

    tools/gen_sessions.py OUT_DIR [SESSIONS] [TARGET_SIZE] [SEED] [--corpus DIR]

Writes SESSIONS main transcripts (default 10000) holding at least TARGET_SIZE bytes in all
(default 1G; suffixes K, M, G) under OUT_DIR/<project>/<uuid>.jsonl, spread over 8 project
folders, from the corpus transcripts (default ../shared/corpus/claude-code next to the
repository) under fresh ids: every `sessionId` of a copy is replaced by a fresh uuid, as
tools/gen_tree.py does (its helpers are reused). The first round copies every main corpus
file once (so the largest corpus session is in the tree); the rest are chosen so that the
running total follows TARGET_SIZE * i / SESSIONS (the largest file that fits the deficit).
Each file gets a distinct mtime (one second apart) so listing orders are deterministic.
The output depends only on the corpus and SEED. Never write it into the repository.
"""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_tree  # noqa: E402  (same folder)

PROJECTS = 8
BASE_MTIME = 1_760_000_000


def main(argv):
    corpus = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus", "claude-code"
    )
    args = []
    it = iter(argv)
    for a in it:
        if a == "--corpus":
            corpus = next(it)
        elif a.startswith("--corpus="):
            corpus = a.split("=", 1)[1]
        else:
            args.append(a)
    if not args or len(args) > 4:
        sys.stderr.write(__doc__)
        return 2
    out = args[0]
    sessions = int(args[1]) if len(args) > 1 else 10_000
    target = gen_tree.parse_size(args[2]) if len(args) > 2 else 1 << 30
    seed = int(args[3]) if len(args) > 3 else 1
    files = [f for f in gen_tree.load_corpus(corpus) if not f["agent"] and f["data"]]
    if not files:
        sys.stderr.write(f"no transcripts in {corpus}\n")
        return 1
    by_size = sorted(files, key=lambda f: len(f["data"]))
    rng = random.Random(seed)
    picks = list(files)
    total = sum(len(f["data"]) for f in picks)
    while len(picks) < sessions:
        want = target * (len(picks) + 1) // sessions - total
        fitting = [f for f in by_size if len(f["data"]) <= max(want, len(by_size[0]["data"]))]
        pick = fitting[-1 - rng.randrange(min(3, len(fitting)))]
        picks.append(pick)
        total += len(pick["data"])
    written = 0
    for i, f in enumerate(picks):
        mapping = {}
        data = f["data"]
        for old in f["ids"]:
            mapping[old] = gen_tree.fresh_uuid(rng).encode()
            data = data.replace(old, mapping[old])
        name = gen_tree.fresh_uuid(rng)
        path = os.path.join(out, f"-bench-catalog-{i % PROJECTS}", f"{name}.jsonl")
        gen_tree.write(path, data)
        t = BASE_MTIME + i
        os.utime(path, (t, t))
        written += len(data)
    print(f"{out}: {len(picks)} sessions, {written} bytes, seed {seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
