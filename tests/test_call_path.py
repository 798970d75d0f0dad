"""How many of the package's modules one modern stdio tool call through ``McpToolNode`` enters (issue 18).

A graph START → McpToolNode (allow-all policy) → END over the demo server as a 2026-07-28 stdio subprocess; after
one warm-up call, a profiler hook (``sys.setprofile``, every "call" event of this thread: the graph task, the
connection's tasks and the stdio reader) collects the ``__name__`` of every ``langgraph_mcp`` module whose code runs
during a second call. Run this file with ``-s`` to see the list.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode

pytestmark = pytest.mark.anyio

MAX_MODULES = 14
"""Issue 18's target for one modern call (a ratchet: lower it as modules leave the path)."""
MAX_LEGACY_MODULES = 20
"""What one legacy call enters today: its own call task, events, router and request jobs besides the modern path."""


def _turn(call_id: str) -> dict[str, Any]:
    call = {"name": "demo_add", "args": {"a": 1, "b": 2}, "id": call_id, "type": "tool_call"}
    return {"messages": [AIMessage("", tool_calls=[call])]}


async def modules_one_call_enters(mode: str = "modern") -> list[str]:
    """The package modules the second of two calls enters (sorted)."""
    spec = {
        "command": sys.executable,
        "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
        "mode": mode,
    }
    async with McpServers({"servers": {"demo": spec}}) as servers:
        builder = StateGraph(MessagesState)
        builder.add_node("tools", McpToolNode(servers, policy=ApprovalPolicy(tools={"*": "allow"})))
        builder.add_edge(START, "tools")
        builder.add_edge("tools", END)
        graph = builder.compile()
        await graph.ainvoke(_turn("warm-up"))
        entered: set[str] = set()

        def hook(frame: FrameType, event: str, arg: object) -> None:
            if event == "call":
                name = frame.f_globals.get("__name__", "")
                if name == "langgraph_mcp" or name.startswith("langgraph_mcp."):
                    entered.add(name)

        sys.setprofile(hook)
        try:
            out = await graph.ainvoke(_turn("measured"))
        finally:
            sys.setprofile(None)
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage) and message.status != "error", message
    return sorted(entered)


async def test_one_modern_call_enters_few_modules() -> None:
    entered = await modules_one_call_enters()
    print(f"\n{len(entered)} modules:", *entered, sep="\n  ")
    assert len(entered) <= MAX_MODULES, entered
    # What a call that asks nothing does not need: the asker, the policy, paused rounds, credentials, logs.
    assert not {
        "langgraph_mcp.calls.asker",
        "langgraph_mcp.humans.policy",
        "langgraph_mcp.calls.paused",
    } & set(entered)


async def test_one_legacy_call_enters_few_modules() -> None:
    entered = await modules_one_call_enters("legacy")
    print(f"\n{len(entered)} modules:", *entered, sep="\n  ")
    assert len(entered) <= MAX_LEGACY_MODULES, entered
    assert "langgraph_mcp.calls.asker" not in entered


if __name__ == "__main__":
    import asyncio

    found = asyncio.run(modules_one_call_enters())
    print(len(found), *found, sep="\n")
