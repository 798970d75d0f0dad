"""Child of ``tests/approval/test_remembered_processes.py``: turns on threads in a fresh process, over the SQLite checkpoint
database and the SQLite store the test's own process wrote::

    python -m tests.support.memory_child WIRING DB STORE '[["thread", "user"], ...]'

``DB`` and ``STORE`` are SQLite files, or both the same ``postgresql://`` DSN (``AsyncPostgresSaver`` and
``AsyncPostgresStore``, their tables set up by the test).

Each job is one human turn on that thread as that user (configurable ``user_id``); it prints one JSON list: per
job, whether the run paused for a human and how often this process's demo server ran ``delete_file`` so far.
The approval key comes from ``LANGGRAPH_MCP_APPROVAL_KEY`` if the test set it.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from contextlib import closing
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.sqlite import SqliteStore

from tests.support.memory_support import cfg, deletes, turn, wired


async def main(wiring: str, db: str, store_path: str, jobs: list[list[str]]) -> None:
    from langgraph_mcp import McpServers
    from langgraph_mcp.examples.demo_server import build_server
    from tests.support.node_support import in_process

    srv = build_server()
    servers = McpServers({"demo": in_process(srv, "modern")})
    results: list[dict[str, Any]] = []

    async def run(store: Any, saver: Any) -> None:
        graph = await wired(servers, wiring, store=store, checkpointer=saver)
        for thread, user in jobs:
            out = await turn(graph, cfg(thread, user), "again")
            results.append({"interrupted": "__interrupt__" in out, "deletes": deletes(srv)})

    try:
        if db.startswith("postgresql://"):
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            from langgraph.store.postgres.aio import AsyncPostgresStore

            async with (
                AsyncPostgresStore.from_conn_string(store_path) as pg_store,
                AsyncPostgresSaver.from_conn_string(db) as pg_saver,
            ):
                await run(pg_store, pg_saver)
        else:
            with closing(sqlite3.connect(store_path, check_same_thread=False, isolation_level=None)) as conn:
                store = SqliteStore(conn)
                store.setup()
                async with AsyncSqliteSaver.from_conn_string(db) as saver:
                    await run(store, saver)
    finally:
        await servers.aclose()
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])))
