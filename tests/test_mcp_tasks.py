"""MCP Tasks (SEP-2663) against a real ``fastmcp-tasks`` server on 127.0.0.1: a call answered with a task is
polled to its end, its questions are interrupts, and its handle is kept in the checkpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_mcp import McpServers, pending_interrupts, resume_command
from tests.node_support import call, one_turn_graph, start, text_of, tool_messages
from tests.tasks_support import TasksServer, tasks_server, wait_listening

pytestmark = pytest.mark.anyio


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[TasksServer]:
    with tasks_server(tmp_path) as running:
        await wait_listening(running)
        yield running


def servers_for(server: TasksServer, **options: Any) -> McpServers:
    return McpServers({"mcpServers": {"jobs": server.spec(**options)}})


async def test_a_task_that_completes_becomes_its_tool_message(server: TasksServer) -> None:
    server.release()
    servers = servers_for(server)
    try:
        graph = one_turn_graph(servers, [call("jobs_crunch", "c1", label="a")], InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        statuses: list[dict[str, Any]] = []
        out: dict[str, Any] = {}
        async for mode, chunk in graph.astream(start(), config, stream_mode=["custom", "values"]):
            if mode == "custom" and chunk.get("type") == "mcp_task_status":
                statuses.append(chunk)
            elif mode == "values":
                out = chunk
        message = tool_messages(out)["c1"]
        assert text_of(message) == "crunched a" and message.status == "success"
        assert len(server.recorded("crunch", "start")) == 1
        assert statuses and statuses[-1]["status"] == "completed"
        assert {s["task_id"] for s in statuses} == {statuses[0]["task_id"]} and statuses[0]["tool_call_id"] == "c1"
    finally:
        await servers.aclose()
