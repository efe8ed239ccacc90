#!/usr/bin/env bash
# Issue 28 item 8: the memory of `serve` under a burst of heavy pages. One generated session
# of 5,141 user and assistant text records (about 30 MB) is imported, `serve` started, and
# COUNT requests of VIEW sent together (curl); printed: when all were answered, the peak
# RSS (VmHWM) and the RSS 5 s after the last answer (VmRSS, and of it the heap and other
# anonymous memory, RssAnon), from /proc/PID/status.
#
#   bash tools/bench/heavy_burst.sh BINARY VIEW [COUNT] [WORKDIR]
#
# VIEW: transcript (the session page), resume (its resume view) or download. Linux only
# (/proc); needs python3 and curl. Never give a WORKDIR inside the repository.
set -euo pipefail
bin="$1"
view="$2"
count="${3:-16}"
work="${4:-$(mktemp -d)}"
session=55555555-5555-4555-8555-555555555555
mkdir -p "$work/tree/-bench"
if [ ! -f "$work/tree/-bench/$session.jsonl" ]; then
    python3 - "$work/tree/-bench/$session.jsonl" "$session" <<'PY'
import json, random, sys
path, session = sys.argv[1], sys.argv[2]
rng = random.Random(8)
words = "the a store session page render chunk memory burst place answer line".split()
parent = None
with open(path, "w") as out:
    for n in range(5141):
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        text = " ".join(rng.choice(words) for _ in range(1000))
        kind = "user" if n % 2 == 0 else "assistant"
        message = {"role": kind, "content": text} if kind == "user" else {
            "id": f"msg-{n}", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 1, "output_tokens": 1}}
        out.write(json.dumps({"parentUuid": parent, "isSidechain": False, "type": kind,
                              "uuid": uuid, "sessionId": session, "cwd": "/w",
                              "timestamp": "2026-12-01T10:00:00.000Z",
                              "message": message}) + "\n")
        parent = uuid
PY
fi
rm -f "$work/db" "$work/db-wal" "$work/db-shm"
"$bin" --db "$work/db" import -q "$work/tree" >/dev/null
port=$((20000 + RANDOM % 20000))
"$bin" --db "$work/db" serve -q --addr "127.0.0.1:$port" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.2; done
case "$view" in
    transcript) path="/session/-bench/$session" ;;
    resume) path="/session/-bench/$session?view=resume" ;;
    download) path="/session/-bench/$session/download" ;;
    *) echo "heavy_burst: VIEW is transcript, resume or download" >&2; exit 2 ;;
esac
start=$(date +%s.%N)
for _ in $(seq "$count"); do
    curl -sf -o /dev/null "http://127.0.0.1:$port$path" &
done
wait $(jobs -p | grep -v "^$pid$")
end=$(date +%s.%N)
sleep 5
peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
rest=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
anon=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status")
printf '%s x%s: all answered in %.1f s, peak RSS %d MB, RSS 5 s after %d MB (anonymous %d MB)\n' \
    "$view" "$count" "$(echo "$end - $start" | bc)" $((peak / 1024)) $((rest / 1024)) $((anon / 1024))
