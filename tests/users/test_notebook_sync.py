"""Synchronous use from a Jupyter cell, in a real ipykernel (nbclient): every cell runs in a thread whose event
loop is running, and ``graph.invoke`` without ``await`` is the everyday idiom there.

Work that runs on the package's own background loop can't deadlock by blocking the cell's thread, so it works:
``graph.invoke`` / ``graph.stream`` with one and with several MCP calls (one call runs in the cell's own thread,
several on LangGraph's worker threads), a pause and its resume, a ``get_tools()`` tool's ``invoke``, the approval
gate's synchronous owner lookup, ``servers.close()``; a closed ``McpServers`` used again raises to the cell. The one thing that would deadlock - ``close()`` while the
cell's own loop holds connections (they can only be closed by that loop, which the cell is blocking) - is a
clear ``EventLoopError`` naming ``await servers.aclose()``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

new_code_cell: Any = nbformat.v4.new_code_cell
new_notebook: Any = nbformat.v4.new_notebook

CELL_TIMEOUT = 120
"""Seconds per cell: generous for a loaded CI machine (a cell here takes well under a second normally)."""

SETUP = """
import asyncio
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_mcp import (ApprovalPolicy, EventLoopError, McpServers, McpToolNode, ToolCallsDone,
                           create_approval_gate, resume_command, route_through_gate, route_tool_calls)
from langgraph_mcp.examples.demo_server import build_server
from tests.graph.test_agent_loop_matrix import CountingModel, READ, ELICITATION, answers_for

asyncio.get_running_loop()  # the premise: this cell's thread is running an event loop
SERVER = build_server()

def new_servers():
    return McpServers({"mcpServers": {"demo": {"transport": "in_process", "server": SERVER, "mode": "modern"}}})

def graph_for(servers, calls, *, gate=False):
    model = CountingModel(tool_calls=calls)
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    if gate:
        policy = ApprovalPolicy()
        builder.add_node("approval_gate", create_approval_gate(servers, policy))
        builder.add_conditional_edges("agent", route_through_gate(servers, policy), ["approval_gate", "tools", END])
        builder.add_edge("approval_gate", "tools")
    else:
        builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=InMemorySaver()), model

def finished(out, model, n):
    assert model.runs == [0, 0], model.runs
    assert out["messages"][-1].content.startswith("Here is what happened:"), out["messages"][-1]
    assert "(error)" not in out["messages"][-1].content, out["messages"][-1].content
    assert sum(m.type == "tool" for m in out["messages"]) == n
"""

CELLS = {
    "invoke, one call": """
servers = new_servers()
graph, model = graph_for(servers, [READ])
finished(graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "one"}}), model, 1)
""",
    "invoke, two calls": """
graph, model = graph_for(servers, [READ, READ])
finished(graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "two"}}), model, 2)
""",
    "stream, one and two calls": """
for n in (1, 2):
    graph, model = graph_for(servers, [READ] * n)
    chunks = list(graph.stream({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": f"s{n}"}},
                               stream_mode="values"))
    finished(chunks[-1], model, n)
""",
    "invoke, a pause and its resume": """
graph, model = graph_for(servers, [ELICITATION])
config = {"configurable": {"thread_id": "pause"}}
out = graph.invoke({"messages": [HumanMessage("go")]}, config)
assert out["__interrupt__"][0].value["type"] == "mcp_elicitation"
finished(graph.invoke(answers_for(out["__interrupt__"]), config), model, 1)
""",
    "a get_tools() tool's invoke": """
tools = {t.name: t for t in servers.run_sync(servers.get_tools)}
assert tools["demo_add"].invoke({"a": 20, "b": 22}) is not None
assert "42" in str(tools["demo_add"].invoke({"a": 20, "b": 22}))
""",
    "the gate's synchronous owner lookup": """
fresh = new_servers()  # nothing listed yet: the gate's owner lookup has to ask the server (synchronously)
graph, model = graph_for(fresh, [READ, READ], gate=True)
finished(graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "gate"}}), model, 2)
fresh.close()  # the cell's own loop holds none of its connections: closing from here is fine
assert fresh.closed
""",
    "a closed McpServers used again raises": """
from langgraph_mcp.errors import ServersClosedError
closed = new_servers()
graph, model = graph_for(closed, [READ, READ])
closed.close()
try:
    graph.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "closed"}})
except ServersClosedError:
    pass
else:
    raise AssertionError("a closed McpServers was used without an error to the caller")
assert model.runs == [0], model.runs  # the model was not told about the program's mistake
""",
    "close() while this loop holds connections": """
await servers.list_tools(cache_mode="bypass")  # a connection owned by the kernel's own loop
try:
    servers.close()
except EventLoopError as exc:
    assert "await servers.aclose()" in str(exc), exc
else:
    raise AssertionError("close() blocked the loop that owns the connections it must close")
assert not servers.closed
await servers.aclose()
assert servers.closed
""",
}


@pytest.mark.slow
def test_sync_use_from_a_notebook_cell(tmp_path: Path) -> None:
    nb = new_notebook()
    nb.cells = [new_code_cell(f"import sys; sys.path.insert(0, {str(Path(__file__).parents[2])!r})")]
    nb.cells += [new_code_cell(SETUP)] + [new_code_cell(f"# {name}\n{code}") for name, code in CELLS.items()]
    client = NotebookClient(
        nb, kernel_name="python3", timeout=CELL_TIMEOUT, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell and its traceback
    errors = [o for cell in nb.cells for o in cell.get("outputs", []) if o.output_type == "error"]
    assert not errors
