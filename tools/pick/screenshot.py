#!/usr/bin/env python3
"""The picker's screenshot (docs/screenshots/pick.png): `sessiondb pick` in a tmux terminal
over a store of corpus sessions, the screen captured with its colours (`capture-pane -e`),
written as an HTML <pre> and photographed by headless Chromium.

    python3 tools/pick/screenshot.py BIN DB QUERY OUT.png

BIN is a sessiondb binary, DB a store (e.g. the corpus tree of
../shared/oracle/sdk/rebuild_tree.py, imported), QUERY what is typed.
"""
import html
import os
import re
import subprocess
import sys
import tempfile
import time

COLS, ROWS = 132, 34
PALETTE = {30: "#1e1e1e", 31: "#d9534f", 32: "#5cb85c", 33: "#e0a800", 34: "#4a90d9",
           35: "#b06ad9", 36: "#3fb6c7", 37: "#d0d0d0"}
XTERM16 = ["#1e1e1e", "#d9534f", "#5cb85c", "#e0a800", "#4a90d9", "#b06ad9", "#3fb6c7",
           "#d0d0d0", "#808080", "#ff6b6b", "#7ee07e", "#ffd54f", "#6fb3ff", "#d08cff",
           "#6fe3f0", "#ffffff"]
FG, BG = "#d0d0d0", "#1e1e1e"


def to_html(ansi: str) -> str:
    """The captured screen as HTML spans: SGR bold, dim, reverse and colours."""
    out, state = [], {"bold": False, "dim": False, "rev": False, "fg": None}
    for part in re.split(r"(\x1b\[[0-9;]*m)", ansi):
        m = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
        if m:
            codes = [int(c) if c else 0 for c in m.group(1).split(";")]
            i = 0
            while i < len(codes):
                c = codes[i]
                if c == 0:
                    state = {"bold": False, "dim": False, "rev": False, "fg": None}
                elif c == 1:
                    state["bold"] = True
                elif c == 2:
                    state["dim"] = True
                elif c == 22:
                    state["bold"] = state["dim"] = False
                elif c == 7:
                    state["rev"] = True
                elif c == 27:
                    state["rev"] = False
                elif c in PALETTE:
                    state["fg"] = PALETTE[c]
                elif c == 39:
                    state["fg"] = None
                elif c == 38 and i + 2 < len(codes) and codes[i + 1] == 5:
                    n = codes[i + 2]
                    state["fg"] = XTERM16[n] if n < 16 else None
                    i += 2
                i += 1
            continue
        if not part:
            continue
        fg, bg = state["fg"] or FG, BG
        if state["rev"]:
            fg, bg = bg, fg
        style = f"color:{fg};background:{bg};"
        if state["bold"]:
            style += "font-weight:bold;"
        if state["dim"]:
            style += "opacity:0.6;"
        out.append(f'<span style="{style}">{html.escape(part)}</span>')
    return "".join(out)


def main() -> None:
    binary, db, query, png = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "sock")
        tmux = ["tmux", "-u", "-S", sock]
        subprocess.run(tmux + ["new-session", "-d", "-x", str(COLS), "-y", str(ROWS),
                               "-e", "TZ=UTC", f"{binary} --db {db} pick; sleep 60"],
                       check=True)
        try:
            time.sleep(1.0)
            subprocess.run(tmux + ["send-keys", "-l", query], check=True)
            time.sleep(2.0)
            screen = subprocess.run(tmux + ["capture-pane", "-e", "-p"], check=True,
                                    capture_output=True, text=True).stdout
        finally:
            subprocess.run(tmux + ["kill-server"], check=False)
        page = os.path.join(tmp, "pick.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write("<!doctype html><meta charset=utf-8><body style='margin:0;background:"
                    f"{BG}'><pre style='margin:12px;font:14px/1.25 \"DejaVu Sans Mono\","
                    f"monospace;color:{FG}'>{to_html(screen)}</pre>")
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--screenshot={os.path.abspath(png)}",
                        "--window-size=1160,640", f"file://{page}"],
                       check=True, capture_output=True)


if __name__ == "__main__":
    main()
