"""The MCP Apps demo: the demo agent over the bundled demo server with ``apps: true``, for Agent Chat UI.

Its own config (``langgraph.apps.json`` at the repository root), so the shared ``langgraph.json`` never starts the UI
bundler::

    cd langgraph_mcp/examples/apps_ui && npm install       # once: the host component's dependencies
    langgraph dev --config langgraph.apps.json             # API, UI bundle and sandbox proxy on :2024

then open Agent Chat UI on ``http://localhost:2024`` with assistant ``mcp_apps``. The scripted model calls
``demo_show_files``; its app (``ui://demo/files.html``) renders under the answer, in a sandboxed iframe behind the
sandbox proxy (:mod:`langgraph_mcp.examples.apps_sandbox`). The app's Refresh button calls the app-only
``files_snapshot`` (read-only: it runs), its Delete buttons call ``delete_file`` (destructive: the approval card).

::

    START ──an app's call (unanswered calls in the input)──► route_through_gate ──► tools / approval_gate
      └──anything else──► agent ──► route_through_gate ──► tools / approval_gate ──► tools
    tools ──(all answered)──► agent, or END when the turn was an app's (AppTurnDone)
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph_sdk.runtime import ServerRuntime

from langgraph_mcp.examples.scripted_model import ScriptedChatModel
from langgraph_mcp.graph.apps import AppTurnDone, McpAppsState
from langgraph_mcp.graph.gate import create_approval_gate, route_through_gate
from langgraph_mcp.graph.node import McpToolNode
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = ["APPS_GRAPH_ID", "APPS_TOOL_CALLS", "apps_server_config", "build_apps_graph", "make_apps_graph"]

APPS_GRAPH_ID = "mcp_apps"
"""The graph's id in ``langgraph.apps.json`` (also the ``ui`` namespace its components are served under)."""

APPS_TOOL_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (("show_files", {}),)
"""What the scripted model proposes on a human turn: the demo's tool with an app."""


def apps_server_config(name: str = "demo") -> dict[str, Any]:
    """The bundled demo server over stdio with MCP Apps on."""
    return {
        name: {
            "command": sys.executable,
            "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
            "apps": True,
        }
    }


def build_apps_graph(
    servers: McpServers,
    *,
    policy: ApprovalPolicy | None = None,
    model: BaseChatModel | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    agent_chat_ui: bool = True,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The apps demo graph over ``servers`` (state: :class:`~langgraph_mcp.graph.apps.McpAppsState`).

    An app's call enters at ``START`` through the same ``route_through_gate`` edge as the model's calls, with the
    same ``policy`` on the same gate and tool node: it is judged as the model's calls are."""
    policy = policy or ApprovalPolicy()
    chat_model = model or ScriptedChatModel(tool_calls=list(APPS_TOOL_CALLS))
    bound: list[Any] = []

    async def agent(state: McpAppsState) -> dict[str, list[BaseMessage]]:
        if not bound:
            bound.append(chat_model.bind_tools(await servers.get_tools()))
        reply = await bound[0].ainvoke(state["messages"])
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=reply.content)
        return {"messages": [reply]}

    builder = StateGraph(McpAppsState)
    builder.add_node("agent", agent)
    builder.add_node(
        "approval_gate", create_approval_gate(servers, policy=policy, agent_chat_ui=agent_chat_ui)
    )
    builder.add_node("tools", McpToolNode(servers, agent_chat_ui=agent_chat_ui, policy=policy))
    builder.add_conditional_edges(
        START,
        route_through_gate(servers, policy, otherwise="agent", agent_chat_ui=agent_chat_ui),
        ["agent", "approval_gate", "tools"],
    )
    builder.add_conditional_edges(
        "agent",
        route_through_gate(servers, policy, agent_chat_ui=agent_chat_ui),
        ["approval_gate", "tools", END],
    )
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", AppTurnDone("agent"), ["agent", END])
    return builder.compile(checkpointer=checkpointer, name="langgraph-mcp-apps")


_READ_GRAPH: list[CompiledStateGraph[Any, Any, Any, Any]] = []


@asynccontextmanager
async def make_apps_graph(
    runtime: ServerRuntime[Any],
) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    """The ``langgraph dev`` factory (as :func:`langgraph_mcp.examples.studio.make_graph`: no checkpointer, the
    server starts inside the run and stops with it; reads share one graph that never starts a server)."""
    if runtime.execution_runtime is None:
        if not _READ_GRAPH:
            _READ_GRAPH.append(build_apps_graph(McpServers(apps_server_config())))
        yield _READ_GRAPH[0]
        return
    servers = McpServers(apps_server_config())
    try:
        yield build_apps_graph(servers)
    finally:
        await servers.aclose()
