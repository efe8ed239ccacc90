"""A small builder for synthetic transcripts in the shape CLI 2.1.x writes them."""
from __future__ import annotations

import json
import os


class Transcript:
    def __init__(self, sid, cwd, version="2.1.200", tag="t"):
        self.sid, self.cwd, self.version, self.tag = sid, cwd, version, tag
        self.records, self.n = [], 0

    @property
    def pdir(self):
        return "".join(c if c.isalnum() else "-" for c in self.cwd)

    def rec(self, typ, parent, **kw):
        self.n += 1
        u = "%08x-0000-4000-8000-%012d" % (int.from_bytes(self.tag.encode()[:4].ljust(4, b"_"), "big"), self.n)
        r = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
             "sessionId": self.sid, "version": self.version, "gitBranch": "main", "type": typ,
             "uuid": u, "timestamp": "2026-06-01T10:%02d:%02d.000Z" % (self.n // 60, self.n % 60)}
        r.update(kw)
        self.records.append(r)
        return u

    def user(self, parent, content, **kw):
        return self.rec("user", parent, message={"role": "user", "content": content}, **kw)

    def assistant(self, parent, mid, content, model="claude-sonnet-4-5-20250929"):
        return self.rec("assistant", parent, message={
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})

    def attachment(self, parent, a):
        return self.rec("attachment", parent, attachment=a)

    def write(self, projects):
        """Writes projects/<pdir>/<sid>.jsonl with compact separators (the CLI finds a
        session by scanning for `"sessionId":"…"`)."""
        d = os.path.join(projects, self.pdir)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, self.sid + ".jsonl"), "w") as f:
            for r in self.records:
                f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
