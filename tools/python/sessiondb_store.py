"""A SessionStore for Anthropic's Claude Agent SDK backed by a `sessiondb serve` server.

    from claude_agent_sdk import ClaudeAgentOptions
    from sessiondb_store import SessionDbStore

    store = SessionDbStore("http://127.0.0.1:7878", token=None)
    options = ClaudeAgentOptions(session_store=store, ...)

Standard library only (besides the SDK). All six protocol methods are implemented:
append, load, list_sessions, list_session_summaries, delete, list_subkeys. The server
stores entries as transcript rows (a mirrored session lists, searches and resumes in
sessiondb like an imported one), ignores an entry whose uuid the stream already holds, and
stamps mtimes itself (epoch ms, strictly increasing per stream).

Summaries: after appending to a main stream, `append` folds the lines stored since the
last fold (the append's answer carries them) with the SDK's own `fold_session_summary` and
puts the result back; the server accepts the put only if nobody folded in between
(otherwise this asks again and re-folds), so each stored line is folded exactly once and in
commit order even with several writers.

Requests are what `serve` requires of every client: `Content-Type: application/json` on
each POST, no `Origin`, and the URL's host as `Host`, so use the address the server printed
(or `localhost` on loopback, or a name it was started with `--allow-host`). Pass the token
from the environment or a file, not a command line.

Blocking HTTP runs in a worker thread under asyncio (`asyncio.to_thread`), so the event
loop is never blocked; under another event loop it runs inline.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import urllib.parse
from typing import Any

from claude_agent_sdk import SessionStore, fold_session_summary

__all__ = ["SessionDbStore", "SessionDbError"]


_ASK = object()


class SessionDbError(RuntimeError):
    """The server answered with an error (``status`` is the HTTP status)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"sessiondb server: {status}: {message}")
        self.status = status
        self.message = message


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate cannot be UTF-8: let JSON escape it instead.
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


def _key(key: Any) -> dict[str, Any]:
    out = {"project_key": key["project_key"], "session_id": key["session_id"]}
    subpath = key.get("subpath")
    if subpath is not None:
        out["subpath"] = subpath
    return out


class SessionDbStore(SessionStore):
    """`SessionStore` over HTTP to `sessiondb serve` at ``base_url``."""

    #: How often `append` re-folds when other writers keep folding first.
    FOLD_ATTEMPTS = 100

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 120.0) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", ""):
            raise ValueError(f"only http:// URLs are supported, not {base_url!r}")
        self._host = parsed.hostname or "127.0.0.1"
        self._port = parsed.port or 80
        self._prefix = parsed.path.rstrip("/")
        self._timeout = timeout
        self._headers = {"Content-Type": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._local = threading.local()

    # --- transport -------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def _post(self, path: str, body: Any) -> Any:
        payload = _dumps(body)
        for attempt in (0, 1):
            reused = getattr(self._local, "conn", None) is not None
            conn = self._connection()
            try:
                conn.request("POST", self._prefix + path, body=payload, headers=self._headers)
                response = conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self._drop_connection()
                # A kept-alive connection the server closed while idle: the request never
                # reached it, so sending it again on a new connection is safe.
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                self._drop_connection()
                raise
            if response.getheader("Connection", "").lower() == "close":
                self._drop_connection()
            try:
                answer = json.loads(data) if data else None
            except ValueError:
                answer = None
            if response.status >= 400:
                message = answer.get("error") if isinstance(answer, dict) else None
                raise SessionDbError(response.status, message or data.decode("utf-8", "replace"))
            return answer
        raise AssertionError("unreachable")

    async def _run(self, fn: Any, *args: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return fn(*args)
        return await asyncio.to_thread(fn, *args)

    # --- protocol --------------------------------------------------------------------

    async def append(self, key: Any, entries: list[Any]) -> None:
        if not entries:
            return  # the protocol's recommended no-op: no stream, no mtime, no sidecar
        await self._run(self._append, key, entries)

    def _append(self, key: Any, entries: list[Any]) -> None:
        main = key.get("subpath") is None
        answer = self._post(
            "/v1/store/append", {"key": _key(key), "entries": entries, "fold": main}
        )
        if main:
            # The append answers the pending fold itself (None: ask for it).
            self._fold(key, answer["pending"] if "pending" in answer else _ASK)

    def _fold(self, key: Any, pending: Any) -> None:
        """Folds the stored lines the sidecar has not seen (``pending``: what the append
        answered; asked again after a conflict) and puts the result back."""
        session = {"project_key": key["project_key"], "session_id": key["session_id"]}
        for attempt in range(self.FOLD_ATTEMPTS):
            if attempt > 0 or pending is _ASK:
                pending = self._post("/v1/store/summary/pending", {"key": session})["pending"]
            if pending is None:
                return  # the session was deleted meanwhile
            prev = pending["summary"]
            if prev is not None and not pending["entries"] and prev["mtime"] >= pending["mtime"]:
                return
            folded = fold_session_summary(prev, session, pending["entries"])
            try:
                self._post(
                    "/v1/store/summary/put",
                    {
                        "key": session,
                        "expect": pending["watermark"],
                        "through": pending["through"],
                        "mtime": pending["mtime"],
                        "data": folded["data"],
                    },
                )
                return
            except SessionDbError as e:
                if e.status != 409:
                    raise
        raise SessionDbError(409, "gave up folding the summary: too many concurrent writers")

    async def load(self, key: Any) -> list[Any] | None:
        answer = await self._run(self._post, "/v1/store/load", {"key": _key(key)})
        return answer["entries"]

    async def list_sessions(self, project_key: str) -> list[Any]:
        answer = await self._run(
            self._post, "/v1/store/list_sessions", {"project_key": project_key}
        )
        return answer["sessions"]

    async def list_session_summaries(self, project_key: str) -> list[Any]:
        answer = await self._run(
            self._post, "/v1/store/list_session_summaries", {"project_key": project_key}
        )
        return answer["summaries"]

    async def delete(self, key: Any) -> None:
        await self._run(self._post, "/v1/store/delete", {"key": _key(key)})

    async def list_subkeys(self, key: Any) -> list[str]:
        session = {"project_key": key["project_key"], "session_id": key["session_id"]}
        answer = await self._run(self._post, "/v1/store/list_subkeys", {"key": session})
        return answer["subkeys"]

    def close(self) -> None:
        """Closes this thread's kept-alive connection (others close when collected)."""
        self._drop_connection()
