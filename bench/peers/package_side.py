"""One checkout's side of ``bench/versions.py``: the package found first on ``sys.path`` (the runner puts the
checkout there), measured on its public API only, so two versions of the package can be timed side by side.

Variants (both eras, the bundled demo server over stdio, no checkpointer):

* ``P1 McpToolNode via Send`` — ``agent → route_tool_calls → McpToolNode``, one fast ``demo_add`` call per run.
* ``P1 README wiring`` — the README's wiring: ``add_mcp_tools`` (the approval gate, the node, their routing) with
  the default policy, one ``demo_add`` call per run (read-only: the gate lets it through without a person).
* ``P3 Send fan-out ×32 (add)`` — one turn with 32 ``demo_add`` calls, one ``Send`` each.
* ``P3 Send fan-out ×32 (100 ms)`` — the same with ``demo_sleep(0.1)``: what bench/p3_fanout.py measures.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from worker_loop import serve  # type: ignore[import-not-found]

import langgraph_mcp
from langgraph_mcp import McpServers, McpToolNode, route_tool_calls

FAN = 32
_ids = itertools.count()


def turn(name: str, args: dict[str, Any], count: int) -> Any:
    async def agent(state: MessagesState) -> dict[str, Any]:  # async: a sync node would run in a thread
        if state["messages"]:  # the tools answered: the model's turn ends the run
            return {"messages": [AIMessage("done")]}
        calls = [
            {"name": name, "args": args, "id": f"c{next(_ids)}", "type": "tool_call"} for _ in range(count)
        ]
        return {"messages": [AIMessage("", tool_calls=calls)]}

    return agent


def send_graph(servers: McpServers, name: str, args: dict[str, Any], count: int) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", turn(name, args, count))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile()


def readme_graph(servers: McpServers) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", turn("demo_add", {"a": 1, "b": 2}, 1))
    builder.add_edge(START, "agent")
    langgraph_mcp.add_mcp_tools(builder, servers)
    return builder.compile()


def runs(graph: Any, count: int) -> Any:
    async def go(n: int) -> None:
        for _ in range(n):
            out = await graph.ainvoke({"messages": []})
            replies = [m for m in out["messages"] if m.type == "tool"]
            assert len(replies) == count and all(m.status == "success" for m in replies), replies[:1]

    return go


async def main() -> None:
    era = sys.argv[1]
    servers = McpServers(
        {
            "demo": {
                "command": sys.executable,
                "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
                "mode": era,
            }
        }
    )
    await servers.list_tools()
    add = {"a": 1, "b": 2}
    variants = {
        "P1 McpToolNode via Send": runs(send_graph(servers, "demo_add", add, 1), 1),
        "P1 README wiring": runs(readme_graph(servers), 1),
        f"P3 Send fan-out ×{FAN} (add)": runs(send_graph(servers, "demo_add", add, FAN), FAN),
        f"P3 Send fan-out ×{FAN} (100 ms)": runs(
            send_graph(servers, "demo_sleep", {"seconds": 0.1}, FAN), FAN
        ),
    }
    try:
        await serve(variants, {"package": str(Path(langgraph_mcp.__file__).parent)})
    finally:
        await servers.aclose()


if __name__ == "__main__":
    asyncio.run(main())
