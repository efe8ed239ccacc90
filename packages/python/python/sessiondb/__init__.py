"""sessiondb inside a Python process: Claude Code sessions stored, searched and resumed
without a server, and a SessionStore for the Claude Agent SDK.

    import sessiondb

    db = sessiondb.Store("sessions.db")          # or "postgres://…" for a team store
    db.import_paths(["~/.claude/projects"])
    for s in db.sessions(limit=10):
        print(s["session_id"], s["summary"])

* `Store`: the library (`sessiondb::SessionDb`) in process; every method returns plain
  Python objects (dicts, lists, str, int) and releases the GIL while the database works.
* `SessionStore(path_or_url)`: a `claude_agent_sdk.SessionStore` over a `Store`, in process
  (needs the `claude-agent-sdk` package).
* `SessionDbStore(base_url, token=None)`: the same protocol over HTTP to `sessiondb serve`,
  for apps that share one server (standard library only besides the SDK).

Errors raise `SessionDbError` with the CLI's message (`SessionNotFoundError` for a session
no store entry matches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._native import SessionDbError, SessionNotFoundError, Store

if TYPE_CHECKING:
    from .http import SessionDbStore
    from .store import SessionStore

__all__ = ["Store", "SessionStore", "SessionDbStore", "SessionDbError", "SessionNotFoundError"]


def __getattr__(name: str) -> Any:
    # The adapters import claude_agent_sdk: only when asked for, so `Store` works without it.
    if name == "SessionStore":
        from .store import SessionStore

        return SessionStore
    if name == "SessionDbStore":
        from .http import SessionDbStore

        return SessionDbStore
    raise AttributeError(f"module 'sessiondb' has no attribute {name!r}")
