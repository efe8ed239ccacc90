#!/usr/bin/env bash
# Benchmark of hook capture: the whole `sessiondb capture` process (start, open, import of
# the one session the payload names, exit) for a transcript that grew by one turn.
# Goal (issue 14): at most 30 ms.
#
#   tools/bench_capture.sh [SESSIONS] [TREE_SIZE]
#
# Builds a projects tree from the corpus (tools/gen_sessions.py, default 500 sessions,
# 200M) in a temporary folder, imports it, then times with hyperfine: before each run one
# turn (a user line and an assistant line taken from the largest session) is appended to
# the largest session's transcript; the run is `sessiondb --db DB capture < payload`.
# With BASELINE_BIN=PATH (another sessiondb build, e.g. main's), that binary is measured
# too, on a database of its own imported by it, in the same hyperfine run; and when `perf`
# is there, the two are then run alternately RUNS times each under `perf stat` (CPU time,
# page faults, context switches: what a loaded machine does not blur).
# With TEAM_DB=postgres://… (an empty database) the store is that team store instead of a
# SQLite file (BASELINE_BIN is then not supported).
# Needs hyperfine and a release build (cargo build --release). Nothing is written to the
# repository; the temporary folder is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
sessions="${1:-500}"
size="${2:-200M}"
runs="${RUNS:-50}"
bin="${SESSIONDB_BIN:-target/release/sessiondb}"
command -v hyperfine >/dev/null || { echo "bench: hyperfine is required" >&2; exit 1; }
[ -x "$bin" ] || { echo "bench: $bin missing (cargo build --release)" >&2; exit 1; }
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
bin="$(absolute "$bin")"
base="${BASELINE_BIN:-}"
if [ -n "$base" ]; then
    [ -x "$base" ] || { echo "bench: $base missing" >&2; exit 1; }
    base="$(absolute "$base")"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
db="${TEAM_DB:-$tmp/s.db}"
[ -z "${TEAM_DB:-}" ] || [ -z "$base" ] || { echo "bench: TEAM_DB with BASELINE_BIN is not supported" >&2; exit 2; }

python3 tools/gen_sessions.py "$tmp/claude/projects" "$sessions" "$size" >/dev/null
"$bin" --db "$db" import "$tmp/claude/projects" >/dev/null
[ -n "$base" ] && "$base" --db "$tmp/base.db" import "$tmp/claude/projects" >/dev/null
main="$(find "$tmp/claude/projects" -maxdepth 2 -name '*.jsonl' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
sid="$(basename "$main" .jsonl)"
# One turn: the first user line and the first assistant line of the session.
grep -m1 '"type":"user"' "$main" >"$tmp/turn.jsonl"
grep -m1 '"type":"assistant"' "$main" >>"$tmp/turn.jsonl"
printf '{"session_id":"%s","transcript_path":"%s","cwd":"/tmp","hook_event_name":"Stop"}' \
    "$sid" "$main" >"$tmp/payload.json"
echo "session $sid: $(wc -c <"$main") bytes, $(wc -l <"$main") lines; turn $(wc -c <"$tmp/turn.jsonl") bytes" >&2
echo "database: $([ -f "$db" ] && du -h "$db" | cut -f1 || echo "a team store") ($sessions sessions); load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
export XDG_STATE_HOME="$tmp/state"
# hyperfine runs the command through a shell (for the redirection) and subtracts the
# shell's own start-up time, which it measures first.
commands=("$bin --db '$db' capture < $tmp/payload.json")
[ -n "$base" ] && commands+=("$base --db $tmp/base.db capture < $tmp/payload.json")
hyperfine --warmup 3 --runs "$runs" \
    --prepare "cat $tmp/turn.jsonl >> $main" "${commands[@]}"
if [ -n "$base" ] && command -v perf >/dev/null; then
    for ((i = 0; i < runs; i++)); do
        for pair in "$bin:s" "$base:base"; do
            cat "$tmp/turn.jsonl" >>"$main"
            perf stat -x, -e task-clock,page-faults,context-switches -o "$tmp/stat" \
                "${pair%:*}" --db "$tmp/${pair##*:}.db" capture <"$tmp/payload.json"
            awk -F, '/task-clock/ {t = $1} /page-faults/ {p = $1} /context-switches/ {c = $1}
                END {print t, p, c}' "$tmp/stat" >>"$tmp/perf.${pair##*:}"
        done
    done
    for name in s base; do
        label="$bin"
        [ "$name" = base ] && label="$base"
        sort -n "$tmp/perf.$name" | awk -v label="$label" '{t += $1; p += $2; c += $3; a[NR] = $1}
            END {printf "perf stat, %d runs alternating: %s\n  CPU (task-clock) mean %.1f ms, median %.1f ms, min %.1f ms; %.0f page faults, %.1f context switches\n",
                NR, label, t / NR, a[int((NR + 1) / 2)], a[1], p / NR, c / NR}'
    done
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
rows="$("$bin" --db "$db" info "$sid" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("message_count"))')"
echo "after the runs: message_count $rows; capture log: $(cat "$tmp/state/sessiondb/capture.log" 2>/dev/null | wc -l) lines" >&2
