"""``langgraph-mcp approvals list|revoke`` and ``langgraph-mcp audit --thread ID`` as subprocesses over a SQLite
store a real graph wrote (exit codes and what they print), and the Python API behind them."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from langgraph.types import Command

from langgraph_mcp.approval.audit import AUDIT_LOGGER, StoreAuditSink, audit_records
from langgraph_mcp.approval.memory import list_approvals, revoke_approvals
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import OpenServers
from tests.support.memory_support import answer, cfg, deletes, demo, wired
from tests.support.node_support import in_process

pytestmark = pytest.mark.anyio
HANG_GUARD = 120


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    env.pop("LANGGRAPH_MCP_STORE", None)
    return subprocess.run(
        [sys.executable, "-m", "langgraph_mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env=env,
        check=False,
    )


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[tuple[Path, SqliteStore]]:
    path = tmp_path / "store.sqlite"
    with closing(sqlite3.connect(path, check_same_thread=False, isolation_level=None)) as conn:
        store = SqliteStore(conn)
        store.setup()
        yield path, store


async def approve(graph: Any, config: Any, wiring: str, scope: str) -> Any:
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, config)
    [pending] = out["__interrupt__"]
    decision = answer({"type": "approve", "remember": scope}, wiring)
    return await graph.ainvoke(Command(resume={pending.id: decision}), config)


async def test_approvals_list_and_revoke(
    open_servers: OpenServers, sqlite_store: tuple[Path, SqliteStore]
) -> None:
    path, store = sqlite_store
    servers, srv = demo(open_servers)
    graph = await wired(servers, "middleware", store=store)  # a sync-only store under an async agent
    await approve(graph, cfg("t1", "ann"), "middleware", "principal")
    await approve(graph, cfg("t2", "bob"), "middleware", "thread")
    assert deletes(srv) == 2

    listed = run_cli("approvals", "list", "--store", str(path))
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == 2
    assert any(line.startswith("principal ann  demo/delete_file  approve") for line in lines), lines
    assert any(line.startswith("thread t2  demo/delete_file  approve") for line in lines), lines

    as_json = run_cli("approvals", "list", "--principal", "ann", "--json", "--store", f"sqlite:///{path}")
    assert as_json.returncode == 0
    [entry] = json.loads(as_json.stdout)
    assert entry["owner"] == "ann" and entry["tool"] == "delete_file" and "signature" not in entry

    assert run_cli("approvals", "list", "--principal", "carol", "--store", str(path)).returncode == 1
    no_who = run_cli("approvals", "revoke", "--store", str(path))
    assert no_who.returncode == 2 and "--principal ID, --thread ID, or --all" in no_who.stderr

    revoked = run_cli("approvals", "revoke", "--principal", "ann", "--store", str(path))
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout.startswith("revoked: principal ann  demo/delete_file")
    assert [a.owner for a in list_approvals(store)] == ["t2"]
    assert run_cli("approvals", "revoke", "--principal", "ann", "--store", str(path)).returncode == 1

    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg("t3", "ann"))
    assert "__interrupt__" in out and deletes(srv) == 2  # revoked: asked again

    missing = run_cli("approvals", "list", "--store", str(path.parent / "nope.sqlite"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


async def test_audit_prints_a_threads_records_from_the_store_sink(
    open_servers: OpenServers, sqlite_store: tuple[Path, SqliteStore]
) -> None:
    path, store = sqlite_store
    servers, srv = demo(open_servers)
    graph = await wired(servers, "gate-router", store=store)
    sink = StoreAuditSink.install()  # into the running graph's own store
    level = AUDIT_LOGGER.level
    try:
        await approve(graph, cfg("t1", "ann"), "gate-router", "principal")
        await graph.ainvoke({"messages": [HumanMessage("again")]}, cfg("t1", "ann"))
    finally:
        AUDIT_LOGGER.removeHandler(sink)
        AUDIT_LOGGER.setLevel(level)
    assert deletes(srv) == 2
    records = audit_records(store, "t1")
    assert [(r["tool_call_id"], r["decided_by"], r["outcome"]) for r in records] == [
        ("delete_file-1", "human", "ran"),
        ("delete_file-2", "remembered", "failed"),  # sent on: todo.txt was already deleted
    ]

    done = run_cli("audit", "--thread", "t1", "--store", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    assert (
        "delete_file-1  demo/delete_file  ask by human (approve)  -> ran  rule deletes; principal ann"
        in lines[0]
    )
    assert "delete_file-2  demo/delete_file  ask by remembered" in lines[1]
    as_json = run_cli("audit", "--thread", "t1", "--json", "--store", str(path))
    assert json.loads(as_json.stdout) == records
    nothing = run_cli("audit", "--thread", "t9", "--store", str(path))
    assert nothing.returncode == 1 and "No decisions recorded for thread 't9'" in nothing.stdout


def test_the_python_api_lists_and_revokes_by_filter() -> None:
    store = InMemoryStore()
    for scope, owner, key, server, tool in [
        ("principal", "ann", "demo/delete_file", "demo", "delete_file"),
        ("principal", "ann", "fs/rm", "fs", "rm"),
        ("thread", "t.1", "demo/delete_file", "demo", "delete_file"),
    ]:
        store.put(
            ("langgraph_mcp", "approvals", scope, owner.replace(".", "%2E")),
            key,
            {"server": server, "tool": tool, "decision": "approve"},
        )
    store.put(("langgraph_mcp", "other"), "x", {})
    assert [(a.scope, a.owner) for a in list_approvals(store, scope="thread")] == [("thread", "t.1")]
    assert len(list_approvals(store)) == 3
    gone = revoke_approvals(store, scope="principal", owner="ann", server="fs")
    assert [a.key for a in gone] == ["fs/rm"]
    assert {a.key for a in list_approvals(store, scope="principal", owner="ann")} == {"demo/delete_file"}
    assert len(revoke_approvals(store)) == 2 and list_approvals(store) == []
    with pytest.raises(ValueError, match="scope"):
        list_approvals(store, owner="ann")


async def test_approvals_list_flags_an_entry_signed_with_another_key(
    open_servers: OpenServers, sqlite_store: tuple[Path, SqliteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, store = sqlite_store
    srv = build_server()
    servers = open_servers({"mcpServers": {"demo": in_process(srv, "modern")}, "approval_key": "key-of-a"})
    graph = await wired(servers, "gate-router", store=store)
    await approve(graph, cfg("t1", "ann"), "gate-router", "principal")
    assert deletes(srv) == 1

    monkeypatch.setenv("LANGGRAPH_MCP_APPROVAL_KEY", "key-of-a")  # the key that signed it: no flag
    [line] = run_cli("approvals", "list", "--store", str(path)).stdout.splitlines()
    assert line.startswith("principal ann  demo/delete_file  approve") and "NOT VERIFIABLE" not in line
    [entry] = json.loads(run_cli("approvals", "list", "--json", "--store", str(path)).stdout)
    assert entry["verifiable"] is True

    monkeypatch.setenv("LANGGRAPH_MCP_APPROVAL_KEY", "key-of-b")  # another key: ignored here, and said so
    listed = run_cli("approvals", "list", "--store", str(path))
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    assert "NOT VERIFIABLE HERE" in line and "LANGGRAPH_MCP_APPROVAL_KEY" in line
    [entry] = json.loads(run_cli("approvals", "list", "--json", "--store", str(path)).stdout)
    assert entry["verifiable"] is False
