"""Types of the native module (`sessiondb._native`); use them through `sessiondb`."""

import os
from typing import Any, List, Optional, Sequence, Tuple, TypedDict, Union

class SessionDbError(Exception):
    """A sessiondb error; the message is what the CLI prints after `sessiondb: `."""

class SessionNotFoundError(SessionDbError):
    """No stored session matches the query."""

class SessionInfo(TypedDict, total=False):
    """One session, as `sessiondb sessions --json` lists it (the SDK's `SDKSessionInfo`
    fields first)."""

    session_id: str
    summary: Optional[str]
    last_modified: int
    file_size: int
    custom_title: Optional[str]
    first_prompt: Optional[str]
    git_branch: Optional[str]
    cwd: Optional[str]
    tag: Optional[str]
    created_at: Optional[int]
    project: str
    listed: bool
    ai_title: Optional[str]
    message_count: int
    has_subagents: bool
    subagent_count: int
    source_state: str
    first_timestamp: Optional[str]
    last_timestamp: Optional[str]
    origin_host: str
    origin_user: str

class SessionRef(TypedDict):
    project: str
    session_id: str

class SessionMessage(TypedDict):
    """The Agent SDK's `SessionMessage`."""

    type: str
    uuid: str
    session_id: Any
    message: Any
    parent_tool_use_id: Optional[str]
    parent_agent_id: Optional[str]

class Hit(TypedDict):
    session_id: str
    project: str
    agent_id: Optional[str]
    uuid: Optional[str]
    timestamp: Optional[str]
    role: str
    title: Optional[str]
    snippet: str
    rank: float

class Forked(TypedDict):
    session_id: str
    project: str
    source_session_id: str
    leaf_uuid: Optional[str]
    messages: int
    lines: int

class AppendReport(TypedDict):
    session_id: str
    project: str
    written: int
    messages: int
    duplicates: int
    dropped_progress: int
    leaf_uuid: Optional[str]

class ImportReport(TypedDict, total=False):
    """`sessiondb import --json`'s report."""

    files: int
    files_imported: int
    files_unchanged: int
    files_rewritten: int
    files_failed: int
    sessions: int
    rows: int
    new_rows: int
    malformed_lines: int
    malformed: List[dict]
    suspicious_files: List[dict]
    unknown_types: int
    unknown_fields: int
    vanished_files: int
    bytes_read: int
    seconds: float
    mb_per_s: float
    errors: List[str]
    bad_names: int
    files_too_big: int
    symlinks_skipped: int
    local_rows_kept: int
    named_by_records: List[dict]

class Resumed(TypedDict, total=False):
    """`sessiondb resume --json`: the state a client needs to continue the session."""

    project: str
    session_id: str
    write_target: dict
    leaf_uuid: Optional[str]
    model: Optional[str]
    interruption: Any
    messages: List[dict]
    repairs: List[dict]
    metadata: dict
    file_history: List[dict]
    content_replacements: List[dict]
    subagents: List[dict]

_Path = Union[str, "os.PathLike[str]"]

class Store:
    """An open sessiondb store: a SQLite file (created when missing) or a `postgres://`
    team store. Safe to share between threads; every call releases the GIL."""

    def __init__(self, target: _Path) -> None: ...
    def import_paths(self, paths: Sequence[_Path]) -> ImportReport:
        """Imports Claude Code transcripts under the paths (a projects folder, a project
        folder, files). Importing twice adds nothing."""
    def sessions(
        self,
        *,
        project: Optional[str] = None,
        project_contains: Optional[str] = None,
        directory: Optional[str] = None,
        tag: Optional[str] = None,
        name: Optional[str] = None,
        branch: Optional[str] = None,
        since: Optional[int] = None,
        until: Optional[int] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        include_hidden: bool = False,
    ) -> List[SessionInfo]:
        """The stored sessions, newest first (`sessiondb sessions --json`)."""
    def session(self, query: str) -> SessionRef:
        """The session a query names: an id, a unique prefix, `PROJECT/SESSION` or a title."""
    def messages(self, session: str) -> List[SessionMessage]:
        """The conversation as the SDK's `get_session_messages` gives it."""
    def resume(self, session: str, model: Optional[str] = None, *, api: bool = False) -> Any:
        """What `--resume` rebuilds: a `Resumed` dict, or with `api=True` the messages array
        sent to the model (`sessiondb resume --api`)."""
    def search(
        self,
        text: str,
        *,
        project: Optional[str] = None,
        tag: Optional[str] = None,
        role: Optional[str] = None,
        tools: bool = False,
        limit: Optional[int] = None,
    ) -> List[Hit]:
        """Full-text search over every stored line, best hits first."""
    def fork(
        self,
        session: str,
        *,
        up_to: Optional[str] = None,
        title: Optional[str] = None,
        session_id: Optional[str] = None,
    ) -> Forked:
        """Forks a session as `--fork-session` does."""
    def append(self, session: str, entries: Sequence[dict]) -> AppendReport:
        """Appends transcript records with Claude Code's write rules."""
    def export(self, session: str) -> bytes:
        """The main transcript as imported (and appended to), checked line by line."""
    # The SessionStore protocol, for `sessiondb.SessionStore`.
    def stream_append(
        self, project_key: str, session_id: str, subpath: Optional[str], entries: bytes
    ) -> Tuple[int, int]: ...
    def stream_load(
        self, project_key: str, session_id: str, subpath: Optional[str]
    ) -> Optional[List[dict]]: ...
    def stream_list_sessions(self, project_key: str) -> List[dict]: ...
    def stream_list_session_summaries(self, project_key: str) -> List[dict]: ...
    def stream_delete(self, project_key: str, session_id: str, subpath: Optional[str]) -> int: ...
    def stream_list_subkeys(self, project_key: str, session_id: str) -> List[str]: ...
    def stream_summary_pending(self, project_key: str, session_id: str) -> Optional[dict]: ...
    def stream_summary_put(self, project_key: str, session_id: str, put: bytes) -> bool: ...

def dumps_compact(value: Any) -> Optional[bytes]:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` as
    UTF-8 bytes, written natively; `None` for what only `json.dumps` writes (other types, a
    lone surrogate, a non-finite float, deep nesting)."""
