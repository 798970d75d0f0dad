"""The demo agent graph, shared by ``langgraph-mcp demo`` and LangGraph Studio.

::

    START → agent ──allowed calls, one Send each──────────────────────► tools ──(all answered)──► agent
              ├──calls the policy asks about or denies──► approval_gate ──► tools
              └──no tool calls──► END

* ``agent`` asks the chat model (the deterministic
  :class:`~langgraph_mcp.examples.scripted_model.ScriptedChatModel` unless you pass one) with the servers'
  tools bound.
* :func:`~langgraph_mcp.route_through_gate` sends each allowed call straight to ``tools`` and the rest
  through ``approval_gate`` in the same step, so a pending approval never holds up an allowed call, and an
  approval and a server's question can be answered with one ``Command``.
* ``approval_gate`` is the approval subgraph (:func:`langgraph_mcp.graph.gate.create_approval_gate`): it
  pauses on ``mcp_approval`` interrupts, and answers rejected and denied calls itself; then ``tools`` runs
  the approved calls.
* ``tools`` is :class:`~langgraph_mcp.McpToolNode` (``mcp_elicitation`` interrupts when a server asks the
  user); :class:`~langgraph_mcp.ToolCallsDone` goes back to ``agent`` once every call has its ToolMessage.

For Studio, compile without a checkpointer (the server brings its own) and open the servers in the run's own
event loop: :mod:`langgraph_mcp.examples.studio` is that factory.
"""

from __future__ import annotations

import sys
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from langgraph_mcp.graph.gate import create_approval_gate, route_through_gate
from langgraph_mcp.graph.node import McpToolNode, ToolCallsDone
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = ["DEMO_SERVER_CONFIG", "build_graph", "demo_server_config"]


def demo_server_config(name: str = "demo") -> dict[str, Any]:
    """Server config that starts the bundled demo server over stdio with this Python."""
    return {name: {"command": sys.executable, "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"]}}


DEMO_SERVER_CONFIG: dict[str, Any] = demo_server_config()
"""``{"demo": {"command": <python>, "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"]}}``."""


def build_graph(
    servers: McpServers,
    *,
    policy: ApprovalPolicy | None = None,
    model: BaseChatModel | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    agent_chat_ui: bool = False,
    store: BaseStore | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent → gate → router → :class:`~langgraph_mcp.McpToolNode` → agent graph over ``servers``.

        ``model`` defaults to :class:`~langgraph_mcp.examples.scripted_model.ScriptedChatModel` (no network); any
        chat model that supports ``bind_tools`` works. The tools are listed and bound on the agent's first turn,
        in the running event loop. ``policy`` defaults to ``ApprovalPolicy()`` (read-only and non-destructive
        calls run, destructive ones are asked about). Pass a ``checkpointer`` to pause and resume (elicitation and
        approvals need one); leave it out for Studio, which supplies its own. A ``store`` keeps decisions remembered for a
    principal (and OAuth sign-ins); without one only ``thread`` memory is offered. ``agent_chat_ui=True`` is
        Agent Chat UI mode on the gate, the router and the tool node (one interrupt pending at a time, HITL cards).
    """
    chat_ui = agent_chat_ui
    if model is None:
        from langgraph_mcp.examples.scripted_model import ScriptedChatModel

        model = ScriptedChatModel()
    chat_model = model
    bound: list[Runnable[LanguageModelInput, BaseMessage]] = []

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        if not bound:
            bound.append(chat_model.bind_tools(await servers.get_tools()))
        reply = await bound[0].ainvoke(state["messages"])
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=reply.content)
        return {"messages": [reply]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    policy = policy or ApprovalPolicy()
    builder.add_node("approval_gate", create_approval_gate(servers, policy=policy, agent_chat_ui=chat_ui))
    builder.add_node("tools", McpToolNode(servers, agent_chat_ui=chat_ui, policy=policy))
    builder.add_edge(START, "agent")
    # Allowed calls run at once (one task each); the others go through the gate in the same step, so an
    # approval and a question from an allowed call can be pending together and answered with one Command.
    builder.add_conditional_edges(
        "agent", route_through_gate(servers, policy, agent_chat_ui=chat_ui), ["approval_gate", "tools", END]
    )
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=checkpointer, store=store, name="langgraph-mcp-demo")
