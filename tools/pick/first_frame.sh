#!/usr/bin/env bash
# Time from exec to the first screens of `sessiondb pick` in a tmux terminal, from strace's
# timestamps of its writes to the terminal: the empty screen, then the first one with
# sessions. Usage: tools/pick/first_frame.sh BIN DB [RUNS]  (needs tmux and strace)
set -u
BIN=$1; DB=$2; RUNS=${3:-5}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
for i in $(seq "$RUNS"); do
  rm -f $W/st.txt
  tmux -u -S $W/sock new-session -d -x 150 -y 40 "strace -f -ttt -e trace=execve,write -o $W/st.txt $BIN --db $DB pick"
  sleep 1.5; tmux -u -S $W/sock send-keys Escape; sleep 0.3
  tmux -u -S $W/sock kill-server 2>/dev/null
  python3 - "$W/st.txt" <<'PY'
import sys
lines=open(sys.argv[1]).read().splitlines()
t0=float(lines[0].split()[1]); first=None; rows=None; full=None
for l in lines:
    if ' write(1,' not in l or '=' not in l: continue
    t=(float(l.split()[1])-t0)*1000
    if first is None: first=t
    # The first screen with sessions is the first long write after the empty one.
    if rows is None and t > first and int(l.rsplit('=',1)[1]) > 1000: rows=t
print("empty screen %.1f ms, first sessions %.1f ms" % (first, rows or -1))
PY
done
