"""SessionDbStore against Anthropic's SessionStore conformance suite and the SDK's own readers.

    SESSIONDB_BIN=target/debug/sessiondb python -m pytest tools/python

* The conformance suite (`claude_agent_sdk.testing.run_session_store_conformance`) with
  nothing skipped: every contract gets a fresh `sessiondb serve` on a new temporary database,
  once on SQLite and once on PostgreSQL (a new database on the server `SESSIONDB_TEST_PG`
  names, made with `psql`; skipped without it, a failure under CI).
* Every public corpus session imported with the SDK's `import_session_to_store`: the SDK's
  store readers answer as its disk readers do, and the summary sidecar equals the SDK's fold
  of the whole session (the recorded goldens).

`SESSIONDB_BIN` is the binary (default: target/debug/sessiondb of this checkout);
`SESSIONDB_URL` (+ `SESSIONDB_TOKEN`) names a running server for the corpus tests, else they
start their own. `../shared` (the corpus and goldens) must sit beside the checkout; without
it those tests are skipped, except under CI where that is a failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_agent_sdk import (  # noqa: E402
    fold_session_summary,
    get_session_messages,
    get_session_messages_from_store,
    get_subagent_messages,
    get_subagent_messages_from_store,
    import_session_to_store,
    list_subagents,
    list_subagents_from_store,
)
from claude_agent_sdk.testing import run_session_store_conformance  # noqa: E402

from sessiondb_store import SessionDbError, SessionDbStore  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def binary() -> str:
    path = os.environ.get("SESSIONDB_BIN") or str(REPO / "target" / "debug" / "sessiondb")
    if not Path(path).is_file():
        pytest.fail(f"no sessiondb binary at {path}: run `cargo build` or set SESSIONDB_BIN")
    return path


class Server:
    """`sessiondb serve` on a free loopback port with its own database."""

    def __init__(self, db: Path | str, token: str | None = None) -> None:
        args = [binary(), "--db", str(db), "serve", "--addr", "127.0.0.1:0"]
        # The token goes in the environment (the documented way): `--token` shows in `ps`.
        env = {k: v for k, v in os.environ.items() if k != "SESSIONDB_TOKEN"}
        if token:
            env["SESSIONDB_TOKEN"] = token
        self.proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env
        )
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"sessiondb serve did not start: {line!r}")
        self.url = line.split()[-1]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        finally:
            self.proc.stdout.close()


class PgDatabases:
    """Fresh databases on the PostgreSQL server `SESSIONDB_TEST_PG` names (with `psql`),
    dropped at the end."""

    def __init__(self, admin: str) -> None:
        self.admin = admin
        self.made: list[str] = []

    def psql(self, sql: str) -> None:
        subprocess.run(
            ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", self.admin, "-c", sql],
            check=True, stdin=subprocess.DEVNULL,
        )

    def new(self) -> str:
        name = f"sessiondb_py_{os.getpid()}_{len(self.made)}_{threading.get_ident() % 10**6}"
        self.psql(f"CREATE DATABASE {name}")
        self.made.append(name)
        base, _, query = self.admin.partition("?")
        scheme, _, rest = base.partition("://")
        authority = rest.split("/", 1)[0]
        return f"{scheme}://{authority}/{name}" + (f"?{query}" if query else "")

    def drop_all(self) -> None:
        for name in self.made:
            self.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request):
    """Where each test's servers keep their data: a SQLite file, or a fresh PostgreSQL
    database (skipped without SESSIONDB_TEST_PG, except under CI where that fails)."""
    if request.param == "sqlite":
        yield None
        return
    admin = os.environ.get("SESSIONDB_TEST_PG")
    if not admin:
        if os.environ.get("CI"):
            pytest.fail("SESSIONDB_TEST_PG is not set, so the team-store tests cannot run (CI is set)")
        pytest.skip("SESSIONDB_TEST_PG is not set")
    databases = PgDatabases(admin)
    yield databases
    databases.drop_all()


@pytest.fixture
def servers(tmp_path, backend):
    started: list[Server] = []

    def start(token: str | None = None) -> Server:
        db = tmp_path / f"s{len(started)}.db" if backend is None else backend.new()
        server = Server(db, token)
        started.append(server)
        return server

    yield start
    for server in started:
        assert server.stop() == 0, "sessiondb serve exited with an error"


@pytest.mark.anyio
async def test_conformance_nothing_skipped(servers):
    made: list[SessionDbStore] = []

    def make_store() -> SessionDbStore:
        store = SessionDbStore(servers().url)
        made.append(store)
        return store

    await run_session_store_conformance(make_store, skip_optional=frozenset())
    # The probe plus one fresh store per contract: 14 contracts, none skipped.
    assert len(made) == 15


@pytest.mark.anyio
async def test_dedup_no_uuid_mtime_and_fold(servers):
    store = SessionDbStore(servers().url)
    key = {"project_key": "p", "session_id": "s"}
    a = {"type": "user", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "first prompt"}, "cwd": "/w"}
    meta = {"type": "custom-title", "customTitle": "T", "n": [1, 2.5, None, True]}
    await store.append(key, [a, meta])
    await store.append(key, [a, meta, {"type": "last-prompt", "lastPrompt": "x"}])
    loaded = await store.load(key)
    assert loaded == [a, meta, meta, {"type": "last-prompt", "lastPrompt": "x"}]
    [listed] = await store.list_sessions("p")
    [summary] = await store.list_session_summaries("p")
    assert summary["mtime"] >= listed["mtime"] > 1e12
    expected = fold_session_summary(None, key, loaded)["data"]
    assert summary["data"] == expected
    # Unicode, big integers and a lone surrogate survive the trip.
    odd = {"type": "x", "s": "caf\u00e9 \U0001f600 \ud800", "big": 2**70, "f": 1e-7}
    await store.append({**key, "subpath": "subagents/agent-1"}, [odd])
    assert await store.load({**key, "subpath": "subagents/agent-1"}) == [odd]


@pytest.mark.anyio
async def test_rejected_requests(servers):
    store = SessionDbStore(servers().url)
    key = {"project_key": "p", "session_id": "s"}
    await store.append(key, [{"type": "user", "uuid": "a"}])
    for bad in ["../x", "/abs", "a\x00b", "a/../b", ""]:
        with pytest.raises(SessionDbError) as e:
            await store.append({**key, "subpath": bad}, [{"type": "x"}])
        assert e.value.status == 400, bad
    with pytest.raises(SessionDbError) as e:
        await store.append(key, [{"type": "x"}, {"no": "type"}])
    assert e.value.status == 400 and "type" in e.value.message
    assert await store.load(key) == [{"type": "user", "uuid": "a"}]


@pytest.mark.anyio
async def test_token(servers):
    server = servers(token="s3cret-token-0123456789")
    key = {"project_key": "p", "session_id": "s"}
    with pytest.raises(SessionDbError) as e:
        await SessionDbStore(server.url).load(key)
    assert e.value.status == 401
    with pytest.raises(SessionDbError) as e:
        await SessionDbStore(server.url, token="s3cret-token-012345678").load(key)
    assert e.value.status == 401
    assert await SessionDbStore(server.url, token="s3cret-token-0123456789").load(key) is None


def test_concurrent_writers_fold_every_line_once(servers):
    """Writers racing on one session: the sidecar is the fold of exactly what was stored."""
    url = servers().url
    key = {"project_key": "p", "session_id": "race"}
    import anyio

    def writer(n: int) -> None:
        store = SessionDbStore(url)
        for i in range(20):
            entries = [
                {"type": "user", "uuid": f"{n}-{i}", "message": {"role": "user", "content": f"w{n} {i}"}},
                {"type": "last-prompt", "lastPrompt": f"w{n} {i}"},
            ]
            anyio.run(store.append, key, entries)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store = SessionDbStore(url)
    loaded = anyio.run(store.load, key)
    assert len(loaded) == 4 * 20 * 2
    [summary] = anyio.run(store.list_session_summaries, "p")
    assert summary["data"] == fold_session_summary(None, key, loaded)["data"]
    [listed] = anyio.run(store.list_sessions, "p")
    assert summary["mtime"] == listed["mtime"]


# --- the corpus -----------------------------------------------------------------------


def shared_or_skip() -> Path:
    if (SHARED / "oracle" / "sdk" / "manifest.json").is_file():
        return SHARED
    if os.environ.get("CI"):
        pytest.fail(f"{SHARED} is missing (CI is set)")
    pytest.skip(f"{SHARED} is missing")


@pytest.fixture(scope="module")
def corpus_tree():
    shared = shared_or_skip()
    with tempfile.TemporaryDirectory() as root:
        subprocess.run(
            [sys.executable, str(shared / "oracle" / "sdk" / "rebuild_tree.py"), root],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        manifest = json.loads((shared / "oracle" / "sdk" / "manifest.json").read_text())
        yield Path(root), manifest


@pytest.fixture
def shared_server(tmp_path):
    url = os.environ.get("SESSIONDB_URL")
    if url:
        yield url, os.environ.get("SESSIONDB_TOKEN") or None
        return
    server = Server(tmp_path / "corpus.db")
    yield server.url, None
    assert server.stop() == 0


def message_dicts(messages) -> list:
    return [
        {
            "type": m.type,
            "uuid": m.uuid,
            "session_id": m.session_id,
            "message": m.message,
            "parent_tool_use_id": m.parent_tool_use_id,
        }
        for m in messages
    ]


@pytest.mark.anyio
async def test_imported_corpus_reads_like_disk(corpus_tree, shared_server, monkeypatch):
    root, manifest = corpus_tree
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    url, token = shared_server
    store = SessionDbStore(url, token=token)
    goldens = SHARED / "oracle" / "sdk" / "store"
    compared = 0
    for project in manifest["projects"]:
        golden = json.loads((goldens / f"{project['project_dir']}.json").read_text())
        directory = project["directory"]
        for session in project["sessions"]:
            sid = session["session_id"]
            expected = golden["sessions"][sid]
            if expected["import_error"] is not None:
                # The SDK's import raises on these (a malformed line, a missing file) after
                # storing the batches before the error: the same exception as recorded.
                with pytest.raises(Exception) as raised:
                    await import_session_to_store(sid, store, directory=directory)
                assert expected["import_error"].startswith(type(raised.value).__name__), sid
                continue
            await import_session_to_store(sid, store, directory=directory)
            disk = get_session_messages(sid, directory=directory)
            mine = await get_session_messages_from_store(store, sid, directory=directory)
            assert message_dicts(mine) == message_dicts(disk), sid
            key = {"project_key": project["project_dir"], "session_id": sid}
            assert await store.list_subkeys(key) == expected["list_subkeys"], sid
            agents = list_subagents(sid, directory=directory)
            mine_agents = await list_subagents_from_store(store, sid, directory=directory)
            assert sorted(mine_agents) == sorted(
                a for a in agents if f"agent-{a}" in "".join(expected["list_subkeys"])
            ), sid
            for agent in mine_agents:
                assert message_dicts(
                    await get_subagent_messages_from_store(store, sid, agent, directory=directory)
                ) == message_dicts(get_subagent_messages(sid, agent, directory=directory)), (
                    sid,
                    agent,
                )
            entries = await store.load(key)
            assert len(entries) == expected["store_entry_count"], sid
            compared += 1
        summaries = {
            s["session_id"]: s for s in await store.list_session_summaries(project["project_dir"])
        }
        listed = {s["session_id"]: s["mtime"] for s in await store.list_sessions(project["project_dir"])}
        for session in project["sessions"]:
            sid = session["session_id"]
            want = golden["sessions"][sid]["fold_session_summary"]
            if want is None:
                assert sid not in summaries, sid
                continue
            assert summaries[sid]["data"] == want["data"], sid
            assert summaries[sid]["mtime"] >= listed[sid], sid
    assert compared >= 40
