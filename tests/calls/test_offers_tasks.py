"""Whether a server offers MCP Tasks is a fact of its session: read from the session's capabilities once, not on
every call, and read again for a new session. Real servers: the ``fastmcp-tasks`` server on 127.0.0.1 (offers the
extension) and the demo server in-process (doesn't)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

import langgraph_mcp.connection.connection as connection_module
from langgraph_mcp import ApprovalPolicy, McpServers
from langgraph_mcp.errors import ServerConnectionError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.node_support import call, one_turn_graph, start, text_of, tool_messages
from tests.support.tasks_support import TasksServer, tasks_server, wait_listening

pytestmark = pytest.mark.anyio

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""Not about approvals: the node runs every call unasked."""


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[TasksServer]:
    with tasks_server(tmp_path) as running:
        await wait_listening(running)
        running.release()
        yield running


@pytest.fixture
def capability_reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every read of a session's capabilities for the tasks extension (the capabilities read)."""
    reads: list[Any] = []
    real = connection_module.offers_tasks

    def counted(capabilities: Any) -> bool:
        reads.append(capabilities)
        return real(capabilities)

    monkeypatch.setattr(connection_module, "offers_tasks", counted)
    return reads


async def run_turn(
    servers: McpServers, saver: BaseCheckpointSaver[Any], name: str, call_id: str, **args: Any
) -> str:
    """One tool node turn (the node asks whether the server offers tasks before every leg)."""
    graph = one_turn_graph(servers, [call(name, call_id, **args)], saver, policy=NO_APPROVALS)
    out = await graph.ainvoke(start(), {"configurable": {"thread_id": call_id}})
    return text_of(tool_messages(out)[call_id])


async def test_a_tasks_server_is_asked_about_once_per_session(
    server: TasksServer, capability_reads: list[Any], checkpointer: BaseCheckpointSaver[Any]
) -> None:
    async with McpServers({"mcpServers": {"jobs": server.spec()}}) as servers:
        for label in ("a", "b", "c"):
            assert (
                await run_turn(servers, checkpointer, "jobs_quick", f"c-{label}", label=label)
                == f"quick {label}"
            )
        conn = server_access(servers).connections.connection("jobs")
        assert len(capability_reads) == 1 and conn.offers_tasks

        conn.owner.mark_dead(ServerConnectionError("jobs", "a new session for this test"))
        assert await run_turn(servers, checkpointer, "jobs_quick", "c-d", label="d") == "quick d"
        assert conn.owner.starts == 2 and len(capability_reads) == 2 and conn.offers_tasks
    # Every call went out as a task, the one on the new session too.
    assert [e["background"] for e in server.recorded("quick", "start")] == [True] * 4


async def test_a_server_without_tasks_is_asked_about_once(
    capability_reads: list[Any], checkpointer: BaseCheckpointSaver[Any]
) -> None:
    spec = {"transport": "in_process", "server": build_server(), "mode": "modern"}
    async with McpServers({"demo": spec}) as servers:
        for i in range(3):
            assert await run_turn(servers, checkpointer, "demo_add", f"c{i}", a=1, b=2) == "3"
        assert server_access(servers).connections.connection("demo").offers_tasks is False
        assert len(capability_reads) == 1
