"""Child process for the MCP Tasks durability tests: start or continue a one-call graph, print JSON lines.

Usage: ``python tests/support/tasks_child.py CHECKPOINT URL start|start-die-on-task|continue TOOL ARGS_JSON``

``CHECKPOINT`` is ``sqlite:<path>`` or ``postgres:<dsn>``. ``start`` runs the call on thread ``durable``;
``continue`` runs the same thread on from its checkpoint (``ainvoke(None, config)``). ``start-die-on-task`` is
``start`` with a test-only hook injected into the driver: the process ends (``os._exit(9)``) the moment the
server answers ``tools/call`` with a task, inside the leg, before that answer can reach the checkpoint. Every ``mcp_task_status``
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


def die_on_task() -> None:
    """The test-only hook: end the process between a task's ``tools/call`` and its handle's checkpoint write."""
    import os

    from langgraph_mcp.calls import driver
    from langgraph_mcp.connection.tasks import TaskCreated

    original = driver.send_leg

    async def send_leg(send: Any, base: Any, **options: Any) -> Any:
        async def send_then_die() -> Any:
            outcome = await send()
            if isinstance(outcome, TaskCreated):
                print(json.dumps({"died_after": outcome.task_id}), flush=True)
                os._exit(9)
            return outcome

        return await original(send_then_die, base, **options)

    driver.send_leg = send_leg  # type: ignore[assignment]


async def main(where: str, url: str, mode: str, tool: str, args: str) -> None:
    if mode == "start-die-on-task":
        die_on_task()
    spec = {"transport": "http", "url": url, "mode": "modern", "tool_timeout": 60}
    async with aclosing(McpServers({"jobs": spec})) as servers, checkpointer(where) as saver:
        graph = one_turn_graph(servers, [call(tool, "c1", **json.loads(args))], saver, policy=NO_APPROVALS)
        config = {"configurable": {"thread_id": "durable"}}
        out: dict[str, Any] = {}
        async for stream, chunk in graph.astream(
            None if mode == "continue" else start(), config, stream_mode=["custom", "values"]
        ):
            if stream == "custom" and chunk.get("type") == "mcp_task_status":
                print(json.dumps({"status": chunk["status"], "task_id": chunk["task_id"]}), flush=True)
            elif stream == "values":
                out = chunk
    messages = {k: {"status": m.status, "text": text_of(m)} for k, m in tool_messages(out).items()}
    print(json.dumps({"messages": messages}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
