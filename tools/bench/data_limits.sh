#!/usr/bin/env bash
# Issue 13 item 14: time and peak memory (RSS) of the two inputs the review measured, with
# the release binary: import of a file of 5 MB of blank lines, and import + `search` over a
# single 100 MB line. Targets: each under 5 s and 300 MB.
#
#   cargo build --release && bash tools/bench/data_limits.sh [WORKDIR]
#
# Needs GNU time as /usr/bin/time (Debian: apt-get install time) and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${SESSIONDB_BIN:-$PWD/target/release/sessiondb}"
work="${1:-$(mktemp -d)}"
mkdir -p "$work/blank/-p" "$work/big/-p"
[ -x /usr/bin/time ] || { echo "data_limits: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
open(f"{work}/blank/-p/blank.jsonl", "wb").write(b"\n" * 5_000_000)
words = ("lorem ipsum dolor sit amet zebra " * 3_100_000)[:100_000_000]
line = json.dumps({"parentUuid": None, "type": "user", "uuid": "u1", "sessionId": "big",
                   "timestamp": "2026-12-01T10:00:00.000Z",
                   "message": {"role": "user", "content": words}})
open(f"{work}/big/-p/big.jsonl", "w").write(line + "\n")
PY

measure() {
    local label="$1"; shift
    /usr/bin/time -v "$@" >"$work/out.txt" 2>"$work/time.txt" || { cat "$work/time.txt" >&2; exit 1; }
    local wall rss
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
    printf '%-34s wall %8s   max RSS %6d MB\n' "$label" "$wall" "$((rss / 1024))"
}

rm -f "$work"/*.db*
measure "import 5 MB of blank lines" "$bin" --db "$work/blank.db" import "$work/blank"
measure "import one 100 MB line" "$bin" --db "$work/big.db" import "$work/big"
measure "search over the 100 MB line" "$bin" --db "$work/big.db" search zebra
measure "search --tools, the 100 MB line" "$bin" --db "$work/big.db" search lorem --tools
