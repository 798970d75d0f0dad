"""One worker process of the OAuth many-workers test: the OAuth test graph on PostgreSQL (checkpointer and store).

Usage: ``python tests/support/oauth_worker_child.py DSN RS_URL start THREAD PRINCIPAL`` or
``... resume THREAD PRINCIPAL CALLBACK_URL``. It builds its own ``McpServers``, runs the thread (``start``: a
new turn; ``resume``: answers the pending sign-in with the callback URL, read from the database) and prints one
JSON line: ``{"pid", "pending": [payload, ...], "tool_message": [status, text] | null}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres.aio import AsyncPostgresStore

from langgraph_mcp import McpServers, pending_interrupts, resume_command
from tests.connection.test_oauth import build_graph, server_config
from tests.support.oauth_support import OAuthServers


async def main(dsn: str, rs_url: str, op: str, thread: str, principal: str, *rest: str) -> None:
    config = {"configurable": {"thread_id": thread, "user_id": principal}}
    async with (
        AsyncPostgresSaver.from_conn_string(dsn) as saver,
        AsyncPostgresStore.from_conn_string(dsn) as store,
    ):
        await saver.setup()
        await store.setup()
        servers = McpServers(server_config_for(rs_url))
        try:
            graph = build_graph(servers, saver, store)
            if op == "start":
                value: Any = {"messages": [HumanMessage("what time is it?")]}
            else:
                pending = pending_interrupts(await graph.aget_state(config))
                value = resume_command(pending, sign_ins={"call_1": {"callback_url": rest[0]}})
            out = await graph.ainvoke(value, config)
        finally:
            await servers.aclose()
    last = out["messages"][-1]
    print(
        json.dumps(
            {
                "pid": os.getpid(),
                "pending": [p.payload for p in pending_interrupts(out)],
                "tool_message": [last.status, str(last.content)] if isinstance(last, ToolMessage) else None,
            }
        ),
        flush=True,
    )


def server_config_for(rs_url: str) -> dict[str, Any]:
    return server_config(OAuthServers(as_url="", rs_url=rs_url), "auto")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
