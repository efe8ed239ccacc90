#!/usr/bin/env bash
# Benchmark of the team store against the SQLite store, in one run on one tree (issue 17):
# import of the tree, then `sessions --json`, `resume --api` of the largest session and a
# two-word `search`, each a whole process, timed with hyperfine -N.
#
#   tools/bench_pg.sh [TREE]
#
# TREE is a Claude Code projects folder; by default the 10,000-session tree that
# ../shared/bench/perf.sh builds ($PERF_DIR/cfg/projects, PERF_DIR defaulting as there).
# A throwaway PostgreSQL cluster is started for the run (tools/pg/cluster.sh: loopback TCP,
# fsync off) and stopped at the end; the SQLite store is a fresh file in a temporary folder.
# Needs hyperfine and a release build (cargo build --release; SESSIONDB_BIN=PATH for another
# binary). RUNS (default 10) sets the hyperfine runs per command. The load average is
# printed before and after: on a shared machine only the ratios of one run mean much.
set -euo pipefail
cd "$(dirname "$0")/.."
tree="${1:-${PERF_DIR:-/tmp/sessiondb-perf}/cfg/projects}"
runs="${RUNS:-10}"
bin="${SESSIONDB_BIN:-target/release/sessiondb}"
command -v hyperfine >/dev/null || { echo "bench: hyperfine is required" >&2; exit 1; }
[ -x "$bin" ] || { echo "bench: $bin missing (cargo build --release)" >&2; exit 1; }
[ -d "$tree" ] || { echo "bench: no tree at $tree (run ../shared/bench/perf.sh first)" >&2; exit 1; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

work="$(mktemp -d)"
pgdir="$(mktemp -d)"
rmdir "$pgdir"
cleanup() {
    bash tools/pg/cluster.sh stop "$pgdir" || true
    rm -rf "$work"
}
trap cleanup EXIT
url="$(bash tools/pg/cluster.sh start "$pgdir")"
pg="${url%/postgres}/bench"
# The database both imports write to; `postgres` only serves to create it.
psql "$url" -qc "CREATE DATABASE bench"
sqlite="$work/s.db"

echo "load before: $(uptime)"
seconds() {
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null
    e=$(date +%s.%N)
    echo "$e - $s" | bc
}
imp_sqlite=$(seconds "$bin" -q --db "$sqlite" import "$tree")
echo "import: SQLite $imp_sqlite s"
imp_pg=$(seconds "$bin" -q --db "$pg" import "$tree")
echo "import: PostgreSQL $imp_pg s"
reimp_sqlite=$(seconds "$bin" -q --db "$sqlite" import "$tree")
reimp_pg=$(seconds "$bin" -q --db "$pg" import "$tree")
echo "re-import: SQLite $reimp_sqlite s, PostgreSQL $reimp_pg s"
echo "load after the imports: $(uptime)"
# Statistics for the planner, as autovacuum would gather them after a large import.
psql "$pg" -qc "ANALYZE" >/dev/null

big=$(ls -S "$tree"/*/*.jsonl | head -n 1 || true)
big_id=$(basename "$big" .jsonl)
declare -A median
measure() {
    local name="$1"
    shift
    local json="$work/hf-$name.json"
    hyperfine -N -i -w 2 -r "$runs" --export-json "$json" \
        "$bin --db $sqlite $*" "$bin --db $pg $*" >/dev/null 2>&1
    read -r median["$name-sqlite"] median["$name-pg"] < <(python3 - "$json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(r[0]["median"], r[1]["median"])
PY
)
}
measure open sessions --limit 1
measure list sessions --json
measure resume resume "$big_id" --api
measure search search database migration --json
echo "load after: $(uptime)"

python3 - "$imp_sqlite" "$imp_pg" "$reimp_sqlite" "$reimp_pg" \
    "${median[open-sqlite]}" "${median[open-pg]}" \
    "${median[list-sqlite]}" "${median[list-pg]}" \
    "${median[resume-sqlite]}" "${median[resume-pg]}" \
    "${median[search-sqlite]}" "${median[search-pg]}" "$(du -sb "$tree" | cut -f1)" <<'PY'
import sys
v = list(map(float, sys.argv[1:]))
(imp_s, imp_p, re_s, re_p, open_s, open_p, list_s, list_p, res_s, res_p, se_s, se_p, size) = v
ms = lambda s: f"{s * 1000:.1f} ms"
def verdict(value, limit):
    return "met" if value <= limit else "**missed**"
print(f"| measure (whole process; hyperfine median) | SQLite | PostgreSQL | PG / SQLite | target |")
print("|---|---|---|---|---|")
print(f"| import {size / 1e6:.0f} MB | {imp_s:.1f} s | {imp_p:.1f} s | {imp_p / imp_s:.2f}x | "
      f"<= 3x: {verdict(imp_p / imp_s, 3)} |")
print(f"| re-import, nothing changed | {re_s:.2f} s | {re_p:.2f} s | {re_p / re_s:.2f}x | |")
print(f"| sessions --limit 1 (connect + one query) | {ms(open_s)} | {ms(open_p)} | "
      f"{open_p / open_s:.2f}x | |")
print(f"| sessions --json (all) | {ms(list_s)} | {ms(list_p)} | {list_p / list_s:.2f}x | "
      f"<= 100 ms: {verdict(list_p, 0.100)} |")
print(f"| resume --api, largest session | {ms(res_s)} | {ms(res_p)} | {res_p / res_s:.2f}x | "
      f"<= 30 ms: {verdict(res_p, 0.030)} |")
print(f"| search database migration --json | {ms(se_s)} | {ms(se_p)} | {se_p / se_s:.2f}x | "
      f"<= 50 ms: {verdict(se_p, 0.050)} |")
PY
