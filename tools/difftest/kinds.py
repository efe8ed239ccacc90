#!/usr/bin/env python3
"""List the attachment kinds the Claude Code CLI's resume path renders, from its JavaScript.

    python3 tools/difftest/kinds.py JS [--old OLD_JS]

JS is the CLI's main script, carved out of the binary (`carve.py`). Prints one line per
attachment type: `type<TAB>nothing|renders` (`nothing`: the CLI's renderer returns no
message). With --old, prints only the types added, removed or changed between OLD and JS.
The CLI's source is not copied anywhere: only type names and whether they render."""
from __future__ import annotations

import re
import sys


def skip_string(d, i):
    q = d[i]
    i += 1
    while i < len(d):
        c = d[i]
        if c == "\\":
            i += 2
            continue
        if q == "`" and c == "$" and d[i + 1] == "{":
            i = match(d, i + 1)
            continue
        if c == q:
            return i + 1
        i += 1
    return i


def match(d, i):
    """Index after the bracket that closes the one at d[i]."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[d[i]]]
    i += 1
    while stack and i < len(d):
        c = d[i]
        if c in "'\"`":
            i = skip_string(d, i)
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
        i += 1
    return i


def object_entries(d, i):
    """Top-level `key:value` entries of the object literal opening at d[i]."""
    end = match(d, i)
    i += 1
    out = []
    while i < end - 1:
        m = re.compile(r'"?([A-Za-z_$][\w$]*)"?:').match(d, i)
        if not m:
            break
        key, j = m.group(1), m.end()
        k = j
        while k < end - 1 and d[k] != ",":
            if d[k] in "{([":
                k = match(d, k)
                continue
            if d[k] in "'\"`":
                k = skip_string(d, k)
                continue
            k += 1
        out.append((key, d[j:k]))
        i = k + 1
    return out


def attachment_kinds(js):
    d = open(js, encoding="utf-8", errors="replace").read()
    kinds = {}
    # the renderer table: an object literal whose first key is poll_events
    m = re.search(r"=\{poll_events:\(e\)=>", d)
    for key, val in object_entries(d, m.start() + 1):
        kinds[key] = "nothing" if re.fullmatch(r"\(\)=>\[\]", val) else "renders"
    # the switch after the table lookup in the same function
    sw = re.compile(r'switch\((\w+)\.type\)\{case"file":').search(d, m.start())
    s = sw.start()
    body_end = match(d, d.index("{", s))
    body = d[s:body_end]
    # cases of switches nested inside the top-level cases (the file's content kinds)
    nested = set()
    for n in re.finditer(r"switch\((\w+)\.type\)\{", body[10:]):
        if n.group(1) != sw.group(1):
            at = 10 + n.start()
            inner = body[at:match(body, body.index("{", at))]
            nested |= set(re.findall(r'case"([a-z_]+)":', inner))
    for c in set(re.findall(r'case"([a-z_]+)":', body)) - nested:
        kinds.setdefault(c, "renders")
    # types handled before the table (team/agent features) by explicit comparisons
    head = d[d.rfind("function", 0, m.start()):m.start()]
    fn = d.find("if(Object.hasOwn(", m.start())
    for c in re.finditer(r'e\.type==="([a-z_]+)"', d[fn - 4000:fn]):
        kinds.setdefault(c.group(1), "renders")
    return kinds


def main():
    args = sys.argv[1:]
    new = attachment_kinds(args[0])
    if "--old" in args:
        old = attachment_kinds(args[args.index("--old") + 1])
        for k in sorted(set(old) | set(new)):
            if old.get(k) != new.get(k):
                print("%s\t%s -> %s" % (k, old.get(k, "absent"), new.get(k, "absent")))
        return
    for k in sorted(new):
        print("%s\t%s" % (k, new[k]))


if __name__ == "__main__":
    main()
