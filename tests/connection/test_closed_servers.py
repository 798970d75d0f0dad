"""A closed ``McpServers`` used again raises ``ServersClosedError`` to the caller: it is the program's mistake, so
it never becomes an error ToolMessage the model reads (and the run "finishes"), nor an approval question."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_mcp import EventLoopError, McpServers
from langgraph_mcp.errors import ServersClosedError
from tests.graph.test_agent_loop_matrix import READ, SERVER, WIRINGS, CountingModel, calls_for, new_servers
from tests.support.helpers import ERAS

pytestmark = pytest.mark.anyio

ASKED = ("delete_file", {"path": "todo.txt"})
"""A call the gate asks about (destructive): with a failed owner lookup it would be asked about too."""


@pytest.mark.parametrize("used_before", [True, False], ids=["used-before", "never-used"])
@pytest.mark.parametrize("wiring", list(WIRINGS))
async def test_a_graph_over_closed_servers_raises_to_the_caller(
    wiring: str, used_before: bool, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    servers = new_servers("modern")
    model = CountingModel(
        tool_calls=[READ, READ, ASKED] if not wiring.startswith("create_agent") else [READ, READ]
    )
    if used_before:  # listings cached: the name resolves without a connection, the call itself must refuse
        await servers.list_tools()
    graph = WIRINGS[wiring](servers, model, checkpointer)
    if wiring.startswith("create_agent"):
        graph = await graph
    await servers.aclose()
    with pytest.raises(ServersClosedError, match="McpServers was closed; create a new one"):
        await graph.ainvoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t"}})
    assert len(model.runs) <= 1, "the model ran again after the calls: it was told about the mistake"


def test_sync_invoke_over_closed_servers_raises(
    open_servers_sync: Any, sync_checkpointer: BaseCheckpointSaver[Any]
) -> None:
    from tests.graph.test_agent_loop_matrix import SYNC_WIRINGS

    servers = McpServers({"mcpServers": {"demo": {"transport": "in_process", "server": SERVER}}})
    model = CountingModel(tool_calls=calls_for(2, "none", gated=True))
    graph = SYNC_WIRINGS["readme"](servers, model, sync_checkpointer)
    assert graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t1"}})
    servers.close()
    with pytest.raises(ServersClosedError):
        graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t2"}})


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_of_closed_servers_raises(era: str) -> None:
    servers = new_servers(era)
    (tool,) = [t for t in await servers.get_tools() if t.name == "demo_add"]
    assert await tool.ainvoke({"a": 1, "b": 2})
    await servers.aclose()
    with pytest.raises(ServersClosedError) as caught:
        await tool.ainvoke({"a": 1, "b": 2})
    assert isinstance(caught.value, EventLoopError)  # what code catching the old error still catches
    with pytest.raises(ServersClosedError):
        await servers.call_tool("demo_add", {"a": 1, "b": 2})
    with pytest.raises(ServersClosedError):
        await servers.list_tools()
