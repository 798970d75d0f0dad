"""Graphs for the remembered-decision tests (``tests/test_remembered*.py``, ``memory_child``): the three wirings
(gate + router, ``route_through_gate``, ``create_agent`` + ``McpApprovalMiddleware``) over the demo server, with
a policy whose rules ask (one locked, one ``remember = "same_args"``, one ``remember = "off"``)."""

from __future__ import annotations

from typing import Any

import pydantic
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import tools_condition
from langgraph.store.base import BaseStore
from langgraph.types import Command

from langgraph_mcp import (
    ApprovalPolicy,
    McpApprovalMiddleware,
    McpServers,
    McpToolNode,
    ToolCallsDone,
    create_approval_gate,
    route_through_gate,
)
from langgraph_mcp.errors import AnswerRefusedError
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.examples.scripted_model import ScriptedChatModel
from langgraph_mcp.graph.node import ToolCallRouter
from tests.support.helpers import OpenServers
from tests.support.node_support import in_process

Graph = CompiledStateGraph[Any, Any, Any, Any]
WIRINGS = ("gate-router", "route-through-gate", "middleware")
DELETE = ("delete_file", {"path": "todo.txt"})


def policy() -> ApprovalPolicy:
    return ApprovalPolicy.load(
        {
            "rules": [
                {"id": "resets", "tool": "demo_reset_stats", "verdict": "ask", "locked": True},
                {"id": "writes", "tool": "demo_write_file", "verdict": "ask", "remember": "same_args"},
                {"id": "moves", "tool": "demo_move_file", "verdict": "ask", "remember": "off"},
                {"id": "deletes", "tool": "demo_delete_file", "verdict": "ask"},
            ]
        }
    )


def gate_graph(
    servers: McpServers,
    pol: ApprovalPolicy,
    calls: list[tuple[str, dict[str, Any]]],
    wiring: str,
    store: Any,
    checkpointer: Any,
    prefix: str = "demo_",
) -> Graph:
    """agent → gate → tools; the agent proposes ``calls`` after every human message (call ids per turn)."""

    def agent(state: MessagesState) -> dict[str, Any]:
        if not isinstance(state["messages"][-1], HumanMessage):
            return {"messages": [AIMessage("done")]}
        turn = sum(isinstance(m, HumanMessage) for m in state["messages"])
        tool_calls = [
            {"name": f"{prefix}{tool}", "args": dict(args), "id": f"{tool}-{turn}", "type": "tool_call"}
            for tool, args in calls
        ]
        return {"messages": [AIMessage("", id=f"ai-{turn}", tool_calls=tool_calls)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    ui = wiring == "gate-router-agent-chat-ui"  # Agent Chat UI mode: {"decisions": [decision]} answers
    builder.add_node("approval_gate", create_approval_gate(servers, pol, agent_chat_ui=ui))
    builder.add_node("tools", McpToolNode(servers, policy=pol, agent_chat_ui=ui))
    builder.add_edge(START, "agent")
    if wiring.startswith("gate-router"):
        builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
        builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
        builder.add_edge("tools", "agent")
    else:
        builder.add_conditional_edges(
            "agent", route_through_gate(servers, pol), ["approval_gate", "tools", END]
        )
        builder.add_edge("approval_gate", "tools")
        builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=checkpointer, store=store)


async def wired(
    servers: McpServers,
    wiring: str,
    calls: list[tuple[str, dict[str, Any]]] | None = None,
    *,
    store: BaseStore | None = None,
    pol: ApprovalPolicy | None = None,
    checkpointer: Any = None,
    prefix: str = "demo_",
) -> Graph:
    """The graph of ``wiring`` (``checkpointer``: an ``InMemorySaver`` unless given)."""
    checkpointer = checkpointer if checkpointer is not None else InMemorySaver()
    calls = calls if calls is not None else [DELETE]
    pol = pol if pol is not None else policy()
    if wiring == "middleware":
        return create_agent(
            ScriptedChatModel(tool_calls=calls, prefix=prefix),
            tools=await servers.get_tools(),
            middleware=[McpApprovalMiddleware(servers, pol)],
            checkpointer=checkpointer,
            store=store,
        )
    return gate_graph(servers, pol, calls, wiring, store, checkpointer, prefix)


def demo(open_servers: OpenServers) -> tuple[McpServers, DemoServer]:
    srv = build_server()
    return open_servers({"demo": in_process(srv, "modern")}), srv


def cfg(thread: str, user: str | None = None) -> Any:
    configurable = {"thread_id": thread}
    if user is not None:
        configurable["user_id"] = user
    return {"configurable": configurable}


CARD_ANSWERS = ("middleware", "gate-router-agent-chat-ui")
"""The wirings answered as Agent Chat UI answers: ``{"decisions": [...]}``."""


def answer(value: dict[str, Any], wiring: str) -> Any:
    return {"decisions": [value]} if wiring in CARD_ANSWERS else value


def refusal(wiring: str) -> type[Exception]:
    """What a refused answer raises: a card's answer is refused in words, a plain decision by pydantic."""
    return AnswerRefusedError if wiring in CARD_ANSWERS else pydantic.ValidationError


async def turn(graph: Graph, config: Any, text: str = "go") -> dict[str, Any]:
    return await graph.ainvoke({"messages": [HumanMessage(text)]}, config)


async def decide(
    graph: Graph, out: dict[str, Any], config: Any, wiring: str, decision: dict[str, Any]
) -> Any:
    [pending] = out["__interrupt__"]
    return await graph.ainvoke(Command(resume={pending.id: answer(decision, wiring)}), config)


def deletes(srv: DemoServer) -> int:
    return srv.events.counts["delete_file.enter"]
