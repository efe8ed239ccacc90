#!/usr/bin/env python3
"""Carve the JavaScript chunks out of a Claude Code binary (Bun standalone): every
`// @bun @bytecode` blob up to its NUL byte, concatenated.  carve.py BINARY OUT.JS"""
import sys
data = open(sys.argv[1], 'rb').read()
out = open(sys.argv[2], 'wb')
pos = 0; n = 0; tot = 0
marker = b'// @bun @bytecode'
while True:
    i = data.find(marker, pos)
    if i < 0: break
    e = data.find(b'\x00', i)
    out.write(b'\n//==== CHUNK %d\n' % n); out.write(data[i:e]); n += 1; tot += e - i
    pos = e
print(n, tot, file=sys.stderr)
