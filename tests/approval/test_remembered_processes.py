"""Remembered decisions across processes: a SQLite checkpoint database and a SQLite store (langgraph's
``SqliteStore``) that both processes open, both wirings of the gate and ``create_agent`` + the middleware. A
principal's decision answers that principal's calls on a new thread in another process, a thread's decision answers
that thread continued in another process; another principal, or a process without the same approval key, is
asked (what ran is counted by each process's own server)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.sqlite import SqliteStore

from langgraph_mcp.policy.binding import APPROVAL_KEY_ENV
from tests.cli.test_cli_approvals import run_cli
from tests.scale.test_multiworker import pg_dsn, pg_server  # noqa: F401  (the PostgreSQL tier's fixtures)
from tests.support.helpers import OpenServers
from tests.support.memory_support import WIRINGS, cfg, decide, deletes, demo, turn, wired

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 120


def child(
    wiring: str, db: Path, store: Path, jobs: list[list[str]], *, key: str | None
) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != APPROVAL_KEY_ENV}
    if key is not None:
        env[APPROVAL_KEY_ENV] = key
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.memory_child", wiring, str(db), str(store), json.dumps(jobs)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize("wiring", WIRINGS)
async def test_remembered_decisions_reach_another_process(
    open_servers: OpenServers, tmp_path: Path, wiring: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "one secret on every worker (test)"
    monkeypatch.setenv(APPROVAL_KEY_ENV, key)
    db, store_path = tmp_path / "checkpoints.sqlite", tmp_path / "store.sqlite"
    servers, srv = demo(open_servers)
    with closing(sqlite3.connect(store_path, check_same_thread=False, isolation_level=None)) as conn:
        store = SqliteStore(conn)
        store.setup()
        async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
            graph = await wired(servers, wiring, store=store, checkpointer=saver)
            out = await turn(graph, cfg("t1", "ann"))
            await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "principal"})
            out = await turn(graph, cfg("t2", "bob"))
            await decide(graph, out, cfg("t2", "bob"), wiring, {"type": "approve", "remember": "thread"})
    assert deletes(srv) == 2

    jobs = [["t3", "ann"], ["t2", "bob"], ["t4", "bob"]]
    ann_new_thread, bob_same_thread, bob_new_thread = child(wiring, db, store_path, jobs, key=key)
    assert ann_new_thread == {
        "interrupted": False,
        "deletes": 1,
    }  # ann's decision, another thread and process
    assert bob_same_thread == {"interrupted": False, "deletes": 2}  # bob's thread, continued elsewhere
    assert bob_new_thread == {"interrupted": True, "deletes": 2}  # bob remembered for that thread only

    # a process with another approval key cannot verify the entries: it asks (fail closed)
    [other_key] = child(wiring, db, store_path, [["t5", "ann"]], key=None)
    assert other_key == {"interrupted": True, "deletes": 0}


@pytest.mark.parametrize("wiring", ["route-through-gate", "middleware"])
async def test_remembered_decisions_on_postgresql(
    open_servers: OpenServers,
    pg_dsn: str,  # noqa: F811  (the fixture imported above)
    wiring: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The PostgreSQL tier: ``AsyncPostgresSaver`` + ``AsyncPostgresStore`` shared by two processes; the CLI lists
    and revokes over the same database (``--store postgresql://...``)."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore

    key = "one secret on every worker (test)"
    monkeypatch.setenv(APPROVAL_KEY_ENV, key)
    servers, srv = demo(open_servers)
    async with (
        AsyncPostgresStore.from_conn_string(pg_dsn) as store,
        AsyncPostgresSaver.from_conn_string(pg_dsn) as saver,
    ):
        await store.setup()
        graph = await wired(servers, wiring, store=store, checkpointer=saver)
        out = await turn(graph, cfg("t1", "ann"))
        await decide(graph, out, cfg("t1", "ann"), wiring, {"type": "approve", "remember": "principal"})
    assert deletes(srv) == 1

    ann, bob = child(wiring, pg_dsn, pg_dsn, [["t2", "ann"], ["t3", "bob"]], key=key)
    assert ann == {"interrupted": False, "deletes": 1}  # ann's decision, in another process
    assert bob == {"interrupted": True, "deletes": 1}  # bob: asked (nothing more ran)

    listed = run_cli("approvals", "list", "--store", pg_dsn)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("principal ann  demo/delete_file  approve")
    assert run_cli("approvals", "revoke", "--principal", "ann", "--store", pg_dsn).returncode == 0
    [again] = child(wiring, pg_dsn, pg_dsn, [["t4", "ann"]], key=key)
    assert again == {"interrupted": True, "deletes": 0}
