"""Child process for the MCP Tasks durability tests: start or continue a one-call graph, print JSON lines.

Usage: ``python tests/support/tasks_child.py CHECKPOINT URL start|continue TOOL ARGS_JSON``

``CHECKPOINT`` is ``sqlite:<path>`` or ``postgres:<dsn>``. ``start`` runs the call on thread ``durable``;
``continue`` runs the same thread on from its checkpoint (``ainvoke(None, config)``). Every ``mcp_task_status``
event is printed as it arrives (``{"status": ...}``), then ``{"messages": {...}}`` at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langgraph_mcp import ApprovalPolicy, McpServers
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""These tests are about tasks and sampling, not approvals: the tool node runs every call unasked (the tasks
server's tools carry no annotations, which the default policy asks about)."""


@contextlib.asynccontextmanager
async def checkpointer(where: str) -> AsyncIterator[Any]:
    kind, _, target = where.partition(":")
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(target) as saver:
            yield saver
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(target) as saver:
            yield saver


async def main(where: str, url: str, mode: str, tool: str, args: str) -> None:
    spec = {"transport": "http", "url": url, "mode": "modern", "tool_timeout": 60}
    async with aclosing(McpServers({"jobs": spec})) as servers, checkpointer(where) as saver:
        graph = one_turn_graph(servers, [call(tool, "c1", **json.loads(args))], saver, policy=NO_APPROVALS)
        config = {"configurable": {"thread_id": "durable"}}
        out: dict[str, Any] = {}
        async for stream, chunk in graph.astream(
            start() if mode == "start" else None, config, stream_mode=["custom", "values"]
        ):
            if stream == "custom" and chunk.get("type") == "mcp_task_status":
                print(json.dumps({"status": chunk["status"], "task_id": chunk["task_id"]}), flush=True)
            elif stream == "values":
                out = chunk
    messages = {k: {"status": m.status, "text": text_of(m)} for k, m in tool_messages(out).items()}
    print(json.dumps({"messages": messages}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
