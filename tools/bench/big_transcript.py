#!/usr/bin/env python3
"""Write one large Claude Code transcript, for the memory figures of import and export.

    tools/bench/big_transcript.py OUT_DIR [SIZE_MB]

Writes OUT_DIR/-bench-big/9b9b9b9b-0000-4000-8000-000000000000.jsonl: one session of user
and assistant text records (about 6 KB each, words drawn from a fixed list by a seeded
generator, so the file depends only on SIZE_MB, default 300), chained by parentUuid. What
docs/reliability.md measures with `/usr/bin/time -v sessiondb import` and `export`.
Never write it into the repository.
"""

import json
import os
import random
import sys

SESSION = "9b9b9b9b-0000-4000-8000-000000000000"
WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu function "
    "return value error test build import export stream memory record session store line"
).split()


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    size = int(argv[2]) * 1_000_000 if len(argv) > 2 else 300_000_000
    rng = random.Random(28)
    folder = os.path.join(out, "-bench-big")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, SESSION + ".jsonl")
    written = 0
    parent = None
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < size:
            n += 1
            uuid = "00000000-0000-4000-8000-%012d" % n
            role = "user" if n % 2 else "assistant"
            text = " ".join(rng.choice(WORDS) for _ in range(900))
            record = {
                "parentUuid": parent,
                "isSidechain": False,
                "type": role,
                "message": {"role": role, "content": text},
                "uuid": uuid,
                "timestamp": "2026-01-01T00:%02d:%02d.000Z" % (n // 60 % 60, n % 60),
                "sessionId": SESSION,
            }
            line = json.dumps(record, separators=(",", ":")) + "\n"
            f.write(line)
            written += len(line)
            parent = uuid
    print(f"{path}: {written} bytes, {n} records")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
