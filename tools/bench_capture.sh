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
# Needs hyperfine and a release build (cargo build --release). Nothing is written to the
# repository; the temporary folder is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
sessions="${1:-500}"
size="${2:-200M}"
bin="${SESSIONDB_BIN:-target/release/sessiondb}"
command -v hyperfine >/dev/null || { echo "bench: hyperfine is required" >&2; exit 1; }
[ -x "$bin" ] || { echo "bench: $bin missing (cargo build --release)" >&2; exit 1; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

python3 tools/gen_sessions.py "$tmp/claude/projects" "$sessions" "$size" >/dev/null
"$bin" --db "$tmp/s.db" import "$tmp/claude/projects" >/dev/null
main="$(find "$tmp/claude/projects" -maxdepth 2 -name '*.jsonl' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)"
sid="$(basename "$main" .jsonl)"
# One turn: the first user line and the first assistant line of the session.
grep -m1 '"type":"user"' "$main" >"$tmp/turn.jsonl"
grep -m1 '"type":"assistant"' "$main" >>"$tmp/turn.jsonl"
printf '{"session_id":"%s","transcript_path":"%s","cwd":"/tmp","hook_event_name":"Stop"}' \
    "$sid" "$main" >"$tmp/payload.json"
echo "session $sid: $(wc -c <"$main") bytes, $(wc -l <"$main") lines; turn $(wc -c <"$tmp/turn.jsonl") bytes" >&2
echo "database: $(du -h "$tmp/s.db" | cut -f1) ($sessions sessions)" >&2
export XDG_STATE_HOME="$tmp/state"
# hyperfine runs the command through a shell (for the redirection) and subtracts the
# shell's own start-up time, which it measures first.
hyperfine --warmup 3 --runs "${RUNS:-50}" \
    --prepare "cat $tmp/turn.jsonl >> $main" \
    "$bin --db $tmp/s.db capture < $tmp/payload.json"
rows="$("$bin" --db "$tmp/s.db" info "$sid" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("message_count"))')"
echo "after the runs: message_count $rows; capture log: $(cat "$tmp/state/sessiondb/capture.log" 2>/dev/null | wc -l) failures" >&2
