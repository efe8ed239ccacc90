"""How long `sessiondb pick` takes to show each key typed (as a person sees it: tmux
send-keys, then capture-pane until the line shows it), over a store of many sessions.

    python3 tools/pick/typing.py BIN DB
"""
import os, subprocess, sys, tempfile, time
S = os.path.join(tempfile.mkdtemp(), "sock")
binary, db = sys.argv[1], sys.argv[2]
subprocess.run(["tmux", "-u", "-S", S, "new-session", "-d", "-x", "150", "-y", "40", f"{binary} --db {db} pick"])
def cap(): return subprocess.run(["tmux", "-u", "-S", S, "capture-pane", "-p"], capture_output=True, text=True).stdout
time.sleep(3)
print(cap().splitlines()[0][-30:])
typed = ""; lat = []
for ch in "refactor test":
    typed += ch
    t = time.time()
    subprocess.run(["tmux", "-u", "-S", S, "send-keys", "-l", ch])
    while not cap().splitlines()[0].startswith("> " + typed):
        time.sleep(0.002)
    lat.append((time.time() - t) * 1000)
print("echo latency ms:", " ".join("%.0f" % x for x in lat))
time.sleep(2)
print(cap().splitlines()[0][-40:])
subprocess.run(["tmux", "-u", "-S", S, "kill-server"])
