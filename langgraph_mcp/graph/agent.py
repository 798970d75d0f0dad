"""``add_mcp_tools``: one call wires a graph's MCP part (the gate, the tool node and the routing) from one set of
options (:class:`~langgraph_mcp.approval.oversight.Oversight`)::

    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_edge(START, "agent")
    add_mcp_tools(builder, servers, Oversight(policy="policy.toml"))
    graph = builder.compile(checkpointer=InMemorySaver())

It is the README's wiring, written once: after ``agent`` (the model's node, which you add), ``route_through_gate``
sends the calls the policy allows straight to ``tools`` (one task per call) and the rest through ``approval_gate``;
``ToolCallsDone`` goes back to ``agent`` once every call of the turn has its ToolMessage. The gate, the router and
the node share the one ``Oversight``, so no part of the graph judges a call more loosely than another. The hand
wiring (``create_approval_gate``, ``route_through_gate``, ``McpToolNode``, ``ToolCallsDone``) stays available for
graphs that need another shape.
"""

from __future__ import annotations

from typing import Any

from langgraph.constants import END
from langgraph.graph import StateGraph

from langgraph_mcp.approval.oversight import Oversight
from langgraph_mcp.errors import ConfigError
from langgraph_mcp.graph.gate import create_approval_gate, route_through_gate
from langgraph_mcp.graph.node import McpToolNode
from langgraph_mcp.graph.routing import ToolCallsDone
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = ["add_mcp_tools"]


def add_mcp_tools(
    builder: StateGraph[Any, Any, Any, Any],
    servers: McpServers,
    oversight: Oversight | None = None,
    *,
    agent: str = "agent",
    tools: str = "tools",
    gate: str = "approval_gate",
    messages_key: str = "messages",
) -> None:
    """Add the approval gate ``gate`` and the tool node ``tools`` to ``builder`` and route the node ``agent``'s
    tool calls through them (see the module docstring). ``oversight`` gives the policy, the approval key, the
    store and Agent Chat UI mode, once for all three (``None``: the defaults)."""
    if agent not in builder.nodes:
        raise ConfigError(
            f"add the model's node {agent!r} to the graph before add_mcp_tools (or name it: agent=...)"
        )
    oversight = oversight if oversight is not None else Oversight()
    builder.add_node(
        gate, create_approval_gate(servers, name=gate, messages_key=messages_key, oversight=oversight)
    )
    builder.add_node(tools, McpToolNode(servers, name=tools, messages_key=messages_key, oversight=oversight))
    router = route_through_gate(
        servers, gate=gate, tools=tools, otherwise=END, messages_key=messages_key, oversight=oversight
    )
    builder.add_conditional_edges(agent, router, [gate, tools, END])
    builder.add_edge(gate, tools)
    builder.add_conditional_edges(tools, ToolCallsDone(agent, messages_key=messages_key), [agent])
