"""Fixtures for the MCP tests: a store imported from the corpus (../shared/corpus/claude-code),
the `sessiondb` binary, a `sessiondb serve` on that store, and an MCP client over either
transport (the official Python SDK, `mcp` on PyPI)."""

import contextlib
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
TOKEN = "mcp-test-token-0123456789abcdef"

#: Days are cut in the server's zone (`usage`) as in the CLI's (`stats`): UTC for every
#: process the tests start, the CLI's (through this environment), serve's and the stdio
#: server's (the MCP client passes a server only a few variables of its own).
os.environ["TZ"] = "UTC"


def binary():
    path = os.environ.get("SESSIONDB_BIN") or str(REPO / "target" / "debug" / "sessiondb")
    if not Path(path).is_file():
        pytest.fail(f"no sessiondb binary at {path}: run `cargo build` or set SESSIONDB_BIN")
    return path


def need_corpus():
    if not CORPUS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{CORPUS} is missing (CI needs ../shared beside the checkout)")
        pytest.skip(f"{CORPUS} is missing: put ../shared beside the checkout")


def cli(db, *args):
    """The CLI's own answer (`--json` output parsed)."""
    out = subprocess.run([binary(), "--db", db, *args], check=False, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise AssertionError(f"sessiondb {' '.join(args)}: {out.stderr}")
    return json.loads(out.stdout) if out.stdout.strip() else []


@pytest.fixture(scope="session")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
def sqlite_store():
    """A database holding the corpus, in a temporary folder."""
    need_corpus()
    tmp = tempfile.mkdtemp(prefix="sessiondb-mcp-")
    db = os.path.join(tmp, "corpus.db")
    subprocess.run([binary(), "--db", db, "-q", "import", str(CORPUS)], check=True, capture_output=True)
    yield db
    shutil.rmtree(tmp, ignore_errors=True)


def psql(admin, sql):
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", admin, "-c", sql],
                   check=True, stdin=subprocess.DEVNULL, capture_output=True)


def pg_admin():
    """The PostgreSQL server `SESSIONDB_TEST_PG` names (tools/pg/cluster.sh starts one).
    Without it the team-store tests are skipped, loudly, and under CI they fail."""
    admin = os.environ.get("SESSIONDB_TEST_PG")
    if not admin:
        if os.environ.get("CI"):
            pytest.fail("SESSIONDB_TEST_PG is not set, so the team-store MCP tests cannot run (CI is set)")
        pytest.skip("SESSIONDB_TEST_PG is not set: the MCP tests on a team store are SKIPPED "
                    "(start one with `bash tools/pg/cluster.sh start DIR`)")
    return admin


@contextlib.contextmanager
def pg_database(source):
    """A fresh database on the `pg_admin()` server holding the transcripts under `source`
    (imported with the CLI), dropped at the end: its URL."""
    admin = pg_admin()
    name = f"sessiondb_mcp_{os.getpid()}_{next(_PG_NAMES)}"
    psql(admin, f"CREATE DATABASE {name}")
    base, _, query = admin.partition("?")
    scheme, _, rest = base.partition("://")
    url = f"{scheme}://{rest.split('/', 1)[0]}/{name}" + (f"?{query}" if query else "")
    try:
        subprocess.run([binary(), "--db", url, "-q", "import", str(source)], check=True, capture_output=True)
        yield url
    finally:
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


_PG_NAMES = itertools.count()


@pytest.fixture(scope="session")
def pg_store():
    """A PostgreSQL team store holding the corpus."""
    need_corpus()
    with pg_database(CORPUS) as url:
        yield url


@pytest.fixture
def store(request):
    """The store a test runs on: the team store when its `transport` is "pg" (stdio to a
    server on PostgreSQL), else the SQLite one."""
    callspec = getattr(request.node, "callspec", None)
    transport = callspec.params.get("transport") if callspec else None
    return request.getfixturevalue("pg_store" if transport == "pg" else "sqlite_store")


@pytest.fixture(scope="session")
def served(sqlite_store):
    """`sessiondb serve` on the store, with a token: (url, process)."""
    out = tempfile.NamedTemporaryFile("w+", suffix=".out")
    env = dict(os.environ, SESSIONDB_TOKEN=TOKEN)
    proc = subprocess.Popen(
        [binary(), "--db", sqlite_store, "serve", "--addr", "127.0.0.1:0"],
        stdout=out,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = None
    for _ in range(300):
        out.seek(0)
        for line in out.read().splitlines():
            if line.startswith("listening on "):
                url = line[len("listening on "):].rstrip("/")
        if url or proc.poll() is not None:
            break
        time.sleep(0.05)
    if not url:
        proc.kill()
        out.seek(0)
        pytest.fail(f"sessiondb serve did not start: {out.read()}")
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@contextlib.asynccontextmanager
async def connect(transport, store, served_url=None, extra_args=(), env=None):
    """An initialized MCP client session over `transport`: "stdio", "http" (serve's `/mcp`),
    or "pg" (stdio, the store being a team store)."""
    if transport in ("stdio", "pg"):
        params = StdioServerParameters(
            command=binary(), args=["--db", store, "mcp", *extra_args], env={"TZ": "UTC", **(env or {})}
        )
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s
    else:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        headers.update(env or {})
        async with httpx.AsyncClient(headers=headers, timeout=60) as client:
            async with streamable_http_client(served_url + "/mcp", http_client=client) as (r, w, *_):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    yield s
