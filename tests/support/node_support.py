"""Helpers for tool-node tests: demo servers in every era, a scripted one-turn graph, and answer builders."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Interrupt

from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, route_tool_calls
from langgraph_mcp.examples.demo_server import DemoServer


def in_process(server: DemoServer, mode: str, **options: Any) -> dict[str, Any]:
    return {"transport": "in_process", "server": server, "mode": mode, **options}


def call(name: str, call_id: str, **args: Any) -> ToolCall:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def one_turn_graph(
    servers: McpServers,
    calls: Sequence[ToolCall],
    checkpointer: BaseCheckpointSaver[Any] | None,
    *,
    fan_out: bool = True,
    policy: ApprovalPolicy | None = None,
    agent_chat_ui: bool = False,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START → agent (proposes ``calls``) → [one Send per call | the whole batch] → tools → END.

    ``policy`` is the tool node's (what it runs without a decision; the default policy asks about destructive and
    unannotated tools); ``agent_chat_ui`` its Agent Chat UI mode (interrupts carry cards)."""

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("", tool_calls=list(calls), id="ai-1")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", McpToolNode(servers, policy=policy, agent_chat_ui=agent_chat_ui))
    builder.add_edge(START, "agent")
    if fan_out:
        builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    else:
        builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=checkpointer)


def start(text: str = "go") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def by_call(interrupts: Sequence[Interrupt]) -> dict[str, Interrupt]:
    return {i.value["tool_call_id"]: i for i in interrupts}


TOMORROW = (datetime.date.today() + datetime.timedelta(days=1)).isoformat()


def fill(request: dict[str, Any]) -> dict[str, Any]:
    """An accept answer with a valid value for every field of a form request."""
    content: dict[str, Any] = {}
    for field, prop in request["requested_schema"].get("properties", {}).items():
        if "default" in prop:
            continue
        kind = prop.get("type")
        if prop.get("format") == "date":
            content[field] = TOMORROW
        elif "enum" in prop:
            content[field] = prop["enum"][0]
        elif kind == "integer":
            content[field] = max(prop.get("minimum", 2), 2)
        elif kind == "boolean":
            content[field] = True
        else:
            content[field] = "x" * max(prop.get("minLength", 1), 1)
    return {"action": "accept", "content": content}


def accept_all(interrupt: Interrupt) -> dict[str, Any]:
    return {
        key: fill(request) if request["mode"] == "form" else {"action": "accept"}
        for key, request in interrupt.value["requests"].items()
    }


def tool_messages(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def text_of(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
