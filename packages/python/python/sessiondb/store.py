"""`SessionStore`: the Agent SDK's SessionStore protocol on a sessiondb store, in process.

    from claude_agent_sdk import ClaudeAgentOptions
    import sessiondb

    options = ClaudeAgentOptions(session_store=sessiondb.SessionStore("sessions.db"))

The rules are the server's (`sessiondb serve` runs the same library code): entries become
transcript rows (a mirrored session lists, searches and resumes like an imported one), an
entry whose uuid the stream holds is skipped, an empty batch does nothing, mtimes are
storage write times (epoch ms, strictly increasing per stream), deleting a main key removes
the session with everything under it.

Summaries: after a main-stream append the stored lines the sidecar has not seen are folded
with the SDK's own `fold_session_summary` and stored back only if nobody folded in between
(a compare-and-swap in the database), so several processes on one store fold each line once.

Each method runs in a worker thread (`anyio.to_thread`, under asyncio or trio) and the
database work releases the GIL, so the event loop is never blocked.
"""

from __future__ import annotations

import json
import os
from typing import Any, Union

import anyio.to_thread
from claude_agent_sdk import SessionStore as _Protocol
from claude_agent_sdk import fold_session_summary

from ._native import SessionDbError, Store, dumps_compact

__all__ = ["SessionStore"]

#: How often `append` re-folds when other writers keep folding first.
FOLD_ATTEMPTS = 100


def _dumps(value: Any) -> bytes:
    """`value` as compact JSON, UTF-8: written by the native module when it can (the same
    bytes as `json.dumps` here, faster), else by `json.dumps`."""
    fast = dumps_compact(value)
    if fast is not None:
        return fast
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate cannot be UTF-8: let JSON escape it instead.
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


class SessionStore(_Protocol):
    """A `claude_agent_sdk.SessionStore` on a sessiondb store (a SQLite path or a
    `postgres://` URL), or on an open `Store` (``store=``)."""

    def __init__(
        self, target: Union[str, "os.PathLike[str]", None] = None, *, store: Store | None = None
    ) -> None:
        if (target is None) == (store is None):
            raise TypeError("give either a path or URL, or store=")
        self.store = store if store is not None else Store(target)

    async def append(self, key: Any, entries: list[Any]) -> None:
        if not entries:
            return  # the protocol's recommended no-op: no stream, no mtime, no sidecar
        await anyio.to_thread.run_sync(self._append, key, _dumps(entries))

    def _append(self, key: Any, payload: bytes) -> None:
        subpath = key.get("subpath")
        self.store.stream_append(key["project_key"], key["session_id"], subpath, payload)
        if subpath is None:
            self._fold(key["project_key"], key["session_id"])

    def _fold(self, project_key: str, session_id: str) -> None:
        """Folds the stored lines the sidecar has not seen and stores the result, again
        when another writer folded in between."""
        session = {"project_key": project_key, "session_id": session_id}
        for _ in range(FOLD_ATTEMPTS):
            pending = self.store.stream_summary_pending(project_key, session_id)
            if pending is None:
                return  # deleted meanwhile
            prev = pending["summary"]
            if prev is not None and not pending["entries"] and prev["mtime"] >= pending["mtime"]:
                return
            folded = fold_session_summary(prev, session, pending["entries"])
            put = {
                "expect": pending["watermark"],
                "through": pending["through"],
                "mtime": pending["mtime"],
                "data": folded["data"],
            }
            if self.store.stream_summary_put(project_key, session_id, _dumps(put)):
                return
        raise SessionDbError("gave up folding the summary: too many concurrent writers")

    async def load(self, key: Any) -> list[Any] | None:
        return await anyio.to_thread.run_sync(
            self.store.stream_load, key["project_key"], key["session_id"], key.get("subpath")
        )

    async def list_sessions(self, project_key: str) -> list[Any]:
        return await anyio.to_thread.run_sync(self.store.stream_list_sessions, project_key)

    async def list_session_summaries(self, project_key: str) -> list[Any]:
        return await anyio.to_thread.run_sync(
            self.store.stream_list_session_summaries, project_key
        )

    async def delete(self, key: Any) -> None:
        await anyio.to_thread.run_sync(
            self.store.stream_delete, key["project_key"], key["session_id"], key.get("subpath")
        )

    async def list_subkeys(self, key: Any) -> list[str]:
        return await anyio.to_thread.run_sync(
            self.store.stream_list_subkeys, key["project_key"], key["session_id"]
        )
