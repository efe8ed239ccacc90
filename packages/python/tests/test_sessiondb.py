"""The Python package: `sessiondb.Store` against the CLI, `sessiondb.SessionStore` against
Anthropic's conformance suite (SQLite and a PostgreSQL team store), the GIL and the loop.

    SESSIONDB_BIN=target/debug/sessiondb python -m pytest packages/python/tests

Needs the package installed (`pip install ./packages/python`, or the wheel CI builds), the
`claude-agent-sdk` it is tested with (0.2.189), `SESSIONDB_BIN` (the CLI, whose answers
`Store` must equal; default target/debug/sessiondb of this checkout), `../shared` beside
the checkout (the corpus) and `SESSIONDB_TEST_PG` for the team store. Missing `../shared`
or PostgreSQL skips those tests with a message; under CI that is a failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

import sessiondb
from claude_agent_sdk.testing import run_session_store_conformance

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
# A few corpus sessions of different shapes (tool calls, a summary, sub-agent files, the
# largest file).
SAMPLE = [
    "happycli__1-continue-run-ls-tool.jsonl",
    "ccbackup__3e89eb15-32e7-43f8-8734-8d47310263ea.jsonl",
    "swordintel__1b2c0332-e2dc-459f-88b9-1aad6e941e18.jsonl",
]


def missing(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (required under CI)")
    pytest.skip(why)


@pytest.fixture
def anyio_backend():
    return "asyncio"


def binary() -> str:
    path = os.environ.get("SESSIONDB_BIN") or str(REPO / "target" / "debug" / "sessiondb")
    if not Path(path).is_file():
        pytest.fail(f"no sessiondb binary at {path}: run `cargo build` or set SESSIONDB_BIN")
    return path


def cli(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [binary(), "--db", str(db), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


def cli_json(db: Path, *args: str):
    done = cli(db, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory):
    """The sample sessions imported by `Store.import_paths`, as a project folder: a file
    named on its own whose name is not a session id would be stored under the id its
    records carry, and these tests find each session's file by its id."""
    if not CORPUS.is_dir():
        missing(f"{CORPUS} is missing (../shared beside the checkout)")
    db = tmp_path_factory.mktemp("corpus") / "s.db"
    folder = tmp_path_factory.mktemp("tree") / "claude-code"
    folder.mkdir()
    for name in SAMPLE:
        shutil.copyfile(CORPUS / name, folder / name)
    store = sessiondb.Store(db)
    report = store.import_paths([folder])
    assert report["sessions"] == len(SAMPLE) and not report["errors"], report
    return db, store


# --- Store: the same answers as the CLI ------------------------------------------------


def test_sessions_search_messages_resume_equal_the_cli(corpus_db):
    db, store = corpus_db
    assert store.sessions() == cli_json(db, "sessions", "--json")
    assert store.sessions(limit=1, name="root") == cli_json(
        db, "sessions", "--json", "--limit", "1", "--name", "root"
    )
    for word in ["lol", "AVD", "emulator", "error"]:
        assert store.search(word) == cli_json(db, "search", word, "--json"), word
    for session in [s["session_id"] for s in store.sessions(include_hidden=True)]:
        assert store.messages(session) == cli_json(db, "messages", session, "--json")
        assert store.resume(session, api=True) == cli_json(db, "resume", session, "--api")
        assert store.resume(session) == cli_json(db, "resume", session, "--json")
        assert store.resume(session, "claude-opus-4-1", api=True) == cli_json(
            db, "resume", session, "--api", "--model", "claude-opus-4-1"
        )
        assert store.export(session) == (CORPUS / f"{session}.jsonl").read_bytes()
    assert store.session("happycli__1") == {
        "project": "claude-code",
        "session_id": "happycli__1-continue-run-ls-tool",
    }


def test_messages_of_unusual_json_equal_the_cli(tmp_path):
    """`Store.messages()` builds each message straight from its stored text: numbers of
    every kind, repeated keys, escapes, and what only the lenient reading takes (a lone
    surrogate, nesting deeper than serde_json's limit) come out as the CLI's."""
    sid = "3c1d9a2e-7b4f-4e8a-9d6c-2f5e8a1b7c30"
    deep = {"type": "text", "text": "deep"}
    for _ in range(140):
        deep = {"nested": [deep]}
    contents = [
        '"plain"',
        '[{"type":"text","text":"esc \\" \\\\ \\n \\u00e9 \\ud83e\\udd84 caf\u00e9"}]',
        '[{"type":"text","text":"lone \\ud800 surrogate"}]',
        '{"n":[0,-1,9223372036854775807,-9223372036854775808,18446744073709551615,'
        "123456789012345678901234567890,1.5,-0.0,1e20,2.5e-8,0.07513349999999999,"
        "true,false,null]}",
        '{"k":1,"other":2,"k":3}',
        json.dumps([deep]),
    ]
    lines, parent = [], None
    for i, content in enumerate(contents):
        role = "user" if i % 2 == 0 else "assistant"
        uuid = f"00000000-0000-4000-8000-{i:012d}"
        lines.append(
            f'{{"type":"{role}","uuid":"{uuid}","parentUuid":{json.dumps(parent)},'
            f'"sessionId":"{sid}","timestamp":"2026-12-01T10:00:0{i}.000Z",'
            f'"message":{{"role":"{role}","content":{content}}}}}\n'
        )
        parent = uuid
    project = tmp_path / "projects" / "-home-me-odd"
    project.mkdir(parents=True)
    (project / f"{sid}.jsonl").write_text("".join(lines), encoding="utf-8")
    store = sessiondb.Store(tmp_path / "s.db")
    assert store.import_paths([tmp_path / "projects"])["sessions"] == 1
    ours = store.messages(sid)
    assert len(ours) == len(contents)
    # Types matter (1 == 1.0 in Python): compare the JSON texts.
    assert json.dumps(ours) == json.dumps(cli_json(tmp_path / "s.db", "messages", sid, "--json"))
    assert ours[4]["message"]["content"] == {"k": 3, "other": 2}
    assert "\ud800" not in json.dumps(ours[2], ensure_ascii=False)  # read as the CLI reads it


def test_errors_carry_the_cli_message(corpus_db):
    db, store = corpus_db
    for call, args in [
        (lambda: store.messages("no-such-session"), ["messages", "no-such-session"]),
        (lambda: store.resume("no-such-session"), ["resume", "no-such-session"]),
    ]:
        with pytest.raises(sessiondb.SessionNotFoundError) as raised:
            call()
        done = cli(db, *args)
        assert done.returncode != 0
        assert done.stderr.strip() == f"sessiondb: {raised.value}"
    with pytest.raises(sessiondb.SessionDbError) as raised:
        store.fork("happycli__1", up_to="not-a-message-of-it")
    done = cli(db, "fork", "happycli__1", "--up-to", "not-a-message-of-it")
    assert done.stderr.strip() == f"sessiondb: {raised.value}"
    with pytest.raises(TypeError):
        store.sessions("positional-project")  # keyword-only filters


def test_fork_and_append_write_sessions_the_cli_reads(tmp_path):
    store = sessiondb.Store(tmp_path / "s.db")
    project = tmp_path / "projects" / "-home-me-app"
    project.mkdir(parents=True)
    sid = "5f0c6e36-2a4c-4f59-9f5b-3d0f1b0e9a11"
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid, "cwd": "/home/me/app",
         "timestamp": "2026-12-01T10:00:00.000Z", "message": {"role": "user", "content": "hello there"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": sid,
         "timestamp": "2026-12-01T10:00:01.000Z",
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "hi"}]}},
    ]
    (project / f"{sid}.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    assert store.import_paths([tmp_path / "projects"])["sessions"] == 1
    more = [{"type": "user", "uuid": "u2", "sessionId": sid, "timestamp": "2026-12-01T10:01:00.000Z",
             "message": {"role": "user", "content": "and a unicorn 🦄"}}]
    report = store.append(sid, more)
    assert (report["written"], report["duplicates"]) == (1, 0)
    assert store.append(sid, more)["duplicates"] == 1
    texts = [m["message"]["content"] for m in store.messages(sid) if m["type"] == "user"]
    assert texts == ["hello there", "and a unicorn 🦄"]
    forked = store.fork(sid, title="a fork")
    assert forked["source_session_id"] == sid and forked["session_id"] != sid
    assert cli_json(tmp_path / "s.db", "messages", forked["session_id"], "--json") == store.messages(
        forked["session_id"]
    )
    assert sorted(h["session_id"] for h in store.search("unicorn")) == sorted(
        [sid, forked["session_id"]]
    )
    with pytest.raises(sessiondb.SessionDbError, match='entry 1: no string "type"'):
        store.append(sid, [{"no": "type"}])


def spin_rate(until) -> tuple[int, float]:
    """How often this thread gets through a trivial loop until `until()` holds."""
    spins = 0
    started = time.perf_counter()
    while not until():
        spins += 1
    return spins, time.perf_counter() - started


def test_the_gil_is_released_during_database_work(corpus_db, tmp_path):
    """While another thread imports (a long call returning a small report), this thread
    keeps running Python at a good part of its speed alone; a call holding the GIL would
    stop it for the whole import."""
    deadline = time.perf_counter() + 0.2
    alone, alone_took = spin_rate(lambda: time.perf_counter() > deadline)
    stores = [sessiondb.Store(tmp_path / f"gil-{i}.db") for i in range(3)]
    done = threading.Event()

    def work():
        for store in stores:
            store.import_paths([CORPUS / name for name in SAMPLE])
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    during, took = spin_rate(done.is_set)
    worker.join()
    # Held, this thread would only start spinning once the imports were over.
    assert took > 0.05, f"this thread was stopped during the imports ({took:.3f} s)"
    assert during / took > 0.25 * alone / alone_took, (during, took, alone, alone_took)


# --- SessionStore: Anthropic's conformance suite, in process ---------------------------


@pytest.mark.anyio
async def test_conformance_on_sqlite(tmp_path_factory):
    await run_session_store_conformance(
        lambda: sessiondb.SessionStore(tmp_path_factory.mktemp("conf") / "s.db")
    )


@pytest.fixture
def pg_admin():
    url = os.environ.get("SESSIONDB_TEST_PG")
    if not url:
        missing("SESSIONDB_TEST_PG is not set (a PostgreSQL server for the team store)")
    made: list[str] = []

    def psql(sql: str) -> None:
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                       check=True, stdin=subprocess.DEVNULL)

    def new() -> str:
        name = f"sessiondb_pkg_{os.getpid()}_{len(made)}"
        psql(f"CREATE DATABASE {name}")
        made.append(name)
        base, _, query = url.partition("?")
        scheme, _, rest = base.partition("://")
        return f"{scheme}://{rest.split('/', 1)[0]}/{name}" + (f"?{query}" if query else "")

    yield new
    for name in made:
        psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.mark.anyio
async def test_conformance_on_a_team_store(pg_admin):
    stores: list[sessiondb.SessionStore] = []

    def make():
        stores.append(sessiondb.SessionStore(pg_admin()))
        return stores[-1]

    await run_session_store_conformance(make)
    del stores[:]  # close the connections before the databases are dropped


@pytest.mark.anyio
async def test_load_reads_entries_as_json_loads(tmp_path):
    """`load` builds the entries from the stored text itself, not with `json.loads`; they
    must still be exactly what `json.loads` makes of that text (types included: 1 == 1.0
    in Python, so the reprs are compared), on what it reads the plain way and on what it
    leaves to `json.loads` (a lone surrogate, deep nesting, integers past 128 bits)."""
    adapter = sessiondb.SessionStore(tmp_path / "s.db")
    deep: object = "bottom"
    for _ in range(110):
        deep = [deep]
    plain = [
        0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**64) - 1, 2**126, -0.0, 1.5,
        0.30000000000000004, 1e300, 5e-324, 0.07513349999999999, 1.2345678901234567e-7,
        True, False, None, "", "plain", "esc \" \\ \n \t \u00e9 caf\u00e9 \U0001f984 \x00 \x1f",
        {"k": {"k": []}, "": [{}]}, [[[]]],
        # Keys alike in length and first and last bytes (shared keys are looked up by
        # those), escaped and not ASCII.
        [{"tx": 1, "ax": 2, "t\u00e9x": 3, "tex": 4, "t\\x": 5, "t\"x": 6, "": 7}, {"tx": 8}],
        # Each character that ends a run of plain bytes, at every place in a word of 8.
        *("x" * k + c + "y" * (17 - k) for k in range(18)
          for c in ('"', "\\", "\x01", "\x1f", "\x7f", " ", "\u00e9", "\U0001f984")),
    ]
    # Each of these makes the whole stream go to json.loads.
    unusual = ["lone \ud800 surrogate", deep, 2**130]
    # One stream each, so that a value the parser gives up on cannot hide another's error.
    for n, value in enumerate([*plain, *unusual]):
        key = {"project_key": "-odd", "session_id": f"6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f{n:04d}"}
        entries = [{"type": "x", "uuid": "u1", "value": value}, {"type": "x", "uuid": "u2"}]
        await adapter.append(key, entries)
        loaded = await adapter.load(key)
        assert repr(loaded) == repr(json.loads(json.dumps(entries))), (n, value)
    # Number forms json.dumps never writes, as an imported file may hold them.
    sid = "1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d"
    project = tmp_path / "projects" / "-imported"
    project.mkdir(parents=True)
    numbers = "[-0, 1E5, 1e+2, -2.5E-3, 123456789012345678901234567890, 10.0, 1e400, -1e-400]"
    (project / f"{sid}.jsonl").write_text(
        f'{{"type":"user","uuid":"u1","sessionId":"{sid}","message":{{"role":"user",'
        f'"content":"hi"}},"n":{numbers}}}\n'
    )
    assert adapter.store.import_paths([tmp_path / "projects"])["sessions"] == 1
    loaded = await adapter.load({"project_key": "-imported", "session_id": sid})
    assert repr(loaded[0]["n"]) == repr(json.loads(numbers))


def test_native_dumps_writes_what_json_dumps_writes():
    """The in-process append serializes a batch natively: the bytes must be `json.dumps`'s
    (compact, not ASCII-only), and what it does not write goes to `json.dumps`."""
    from enum import IntEnum
    from sessiondb._native import dumps_compact

    class Kind(IntEnum):
        USER = 1

    class Text(str):
        pass

    deep: object = 0
    for _ in range(150):
        deep = [deep]
    cyclic: list = []
    cyclic.append(cyclic)
    written = [
        None, True, False, 0, -1, 2**63, -(2**200), 1.5, -0.0, 1e16, 1e-7, 0.1 + 0.2, 5e-324,
        "", "caf\u00e9 \U0001f984 \u2028 \x7f", "\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1f \" \\ /",
        *("x" * k + c + "y" * (17 - k) for k in range(18) for c in ('"', "\\", "\x01", "\n")),
        [], {}, (1, "two", [3.0]), {"b": 1, "a": [None, {"": ""}]},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    ]
    for value in written:
        expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        assert dumps_compact(value) == expected.encode("utf-8"), value
    left = [
        "lone \ud800", float("nan"), float("inf"), {1: "int key"}, Kind.USER, Text("s"),
        object(), deep, cyclic, [1, {"x": float("-inf")}],
    ]
    for value in left:
        assert dumps_compact(value) is None, value


@pytest.mark.anyio
async def test_mirrored_session_is_a_sessiondb_session(tmp_path):
    """What the SDK mirrors lists, searches and resumes like an imported session, and the
    sidecar is the SDK's fold."""
    from claude_agent_sdk import list_sessions_from_store

    adapter = sessiondb.SessionStore(tmp_path / "s.db")
    sid = "9a7b6c5d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
    key = {"project_key": "-home-me-app", "session_id": sid}
    await adapter.append(key, [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid, "cwd": "/home/me/app",
         "timestamp": "2026-12-01T10:00:00.000Z", "message": {"role": "user", "content": "find the zebra"}},
    ])
    await adapter.append(key, [
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": sid,
         "timestamp": "2026-12-01T10:00:01.000Z",
         "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "a zebra"}]}},
        {"type": "custom-title", "customTitle": "Zebra hunt", "sessionId": sid},
    ])
    store = adapter.store
    assert [s["session_id"] for s in store.sessions()] == [sid]
    assert store.sessions()[0]["custom_title"] == "Zebra hunt"
    hits = store.search("zebra")
    # Titles are searchable too (issue 31): the custom title is a hit of role "title".
    assert {h["uuid"] for h in hits if h.get("role") != "title"} == {"u1", "a1"}
    assert [h["snippet"] for h in hits if h.get("role") == "title"] != []
    assert [m["role"] for m in store.resume(sid, api=True)] == ["user", "assistant"]
    listed = await list_sessions_from_store(adapter, directory="/home/me/app")
    assert [(s.session_id, s.custom_title, s.first_prompt) for s in listed] == [
        (sid, "Zebra hunt", "find the zebra")
    ]


@pytest.mark.anyio
async def test_the_event_loop_runs_while_the_store_works(corpus_db):
    _, store = corpus_db
    adapter = sessiondb.SessionStore(store=store)
    ticks = 0
    stop = asyncio.Event()

    async def ticker():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    key = {"project_key": "claude-code", "session_id": "swordintel__1b2c0332-e2dc-459f-88b9-1aad6e941e18"}
    for _ in range(3):
        entries = await adapter.load(key)
    stop.set()
    await task
    assert entries and len(entries) > 500
    assert ticks > 100, ticks


def test_the_http_adapter_is_kept():
    from sessiondb import SessionDbStore
    from claude_agent_sdk import SessionStore

    assert SessionStore in SessionDbStore.__mro__
    assert SessionStore in sessiondb.SessionStore.__mro__


def test_the_type_stubs_are_the_module(corpus_db, tmp_path):
    """`_native.pyi` declares the module's functions with their parameters (names, kinds,
    defaults), and its TypedDicts the keys of the answers: all of them where the stub is
    total, no others where it is not."""
    import ast
    import inspect

    from sessiondb import _native

    tree = ast.parse(Path(_native.__file__).with_name("_native.pyi").read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def declared(fn: ast.FunctionDef) -> list:
        a = fn.args
        positional = [p.arg for p in a.posonlyargs + a.args]
        defaults = [None] * (len(positional) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
        out = [(name, "positional", default) for name, default in zip(positional, defaults)]
        kw = [ast.literal_eval(d) if d is not None else None for d in a.kw_defaults]
        out += [(p.arg, "keyword", default) for p, default in zip(a.kwonlyargs, kw)]
        return [p for p in out if p[0] != "self"]

    def actual(f) -> list:
        out = []
        for p in inspect.signature(f).parameters.values():
            kind = "keyword" if p.kind is p.KEYWORD_ONLY else "positional"
            default = None if p.default is p.empty else p.default
            out.append((p.name, kind, default))
        return [p for p in out if p[0] != "self"]

    stub_methods = {f.name: f for f in classes["Store"].body if isinstance(f, ast.FunctionDef)}
    runtime = {n for n in dir(_native.Store) if not n.startswith("_")}
    assert set(stub_methods) - {"__init__"} == runtime
    for name in runtime:
        assert declared(stub_methods[name]) == actual(getattr(_native.Store, name)), name
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert set(functions) == {"dumps_compact"}
    assert declared(functions["dumps_compact"]) == actual(_native.dumps_compact)

    def keys(name: str) -> tuple[set, bool]:
        node = classes[name]
        total = not any(k.arg == "total" and k.value.value is False for k in node.keywords)
        return {t.target.id for t in node.body if isinstance(t, ast.AnnAssign)}, total

    db, store = corpus_db
    sid = json.loads(cli(db, "sessions", "--json").stdout)[0]["session_id"]
    # The writes on a store of their own.
    folder = tmp_path / "claude-code"
    folder.mkdir()
    shutil.copyfile(CORPUS / SAMPLE[0], folder / SAMPLE[0])
    copy = sessiondb.Store(tmp_path / "s.db")
    imported = copy.import_paths([folder])
    forked = copy.fork(copy.sessions()[0]["session_id"])
    entry = {"type": "user", "uuid": "9d7c6b5a-4e3f-4a1b-8c2d-0e1f2a3b4c5d",
             "message": {"role": "user", "content": "one more"}}
    answers = {
        "SessionInfo": store.sessions(),
        "SessionRef": [store.session(sid)],
        "SessionMessage": store.messages(sid),
        "Hit": store.search("the", limit=5),
        "Forked": [forked],
        "AppendReport": [copy.append(forked["session_id"], [entry])],
        "ImportReport": [imported],
        "Resumed": [store.resume(sid)],
    }
    for name, found in answers.items():
        stub, total = keys(name)
        assert found, name
        for answer in found:
            assert set(answer) == stub if total else set(answer) <= stub, (name, set(answer) ^ stub)


def test_imported_from_an_installation():
    """The tests run against the installed package (the wheel), not the source tree."""
    assert "site-packages" in sessiondb.__file__, sessiondb.__file__
    assert Path(sessiondb.__file__).with_name("py.typed").is_file()
    assert Path(sessiondb.__file__).with_name("_native.pyi").is_file()
