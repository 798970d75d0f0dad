"""Side-by-side measurements, reported as ratios from one run (never as timed test assertions).

1. Session reuse: N calls over stdio through ``McpServers`` (one persistent session) vs a fresh ``mcp.Client``
   per call (what a session-per-call bridge does).
2. Resume paths for a three-round tool: the same-process fast path vs the durable path (a new ``McpServers``
   before every resume, as after a restart), counting ``tools/call`` requests server-side and wall time.

Run: ``python bench/bench_paths.py [--calls 30]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command
from mcp import Client, StdioServerParameters

from langgraph_mcp import McpServers, McpToolNode, route_tool_calls
from langgraph_mcp.examples.demo_server import build_server

STDIO = {"command": sys.executable, "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"]}


async def persistent(calls: int) -> float:
    servers = McpServers({"demo": STDIO})
    await servers.list_tools()
    began = time.perf_counter()
    for i in range(calls):
        await servers.call_tool("demo_add", {"a": i, "b": 1})
    elapsed = time.perf_counter() - began
    await servers.aclose()
    return elapsed


async def per_call(calls: int) -> float:
    params = StdioServerParameters(command=STDIO["command"], args=STDIO["args"])
    began = time.perf_counter()
    for i in range(calls):
        async with Client(params) as client:
            await client.call_tool("add", {"a": i, "b": 1})
    return time.perf_counter() - began


def graph_for(servers: McpServers, saver: InMemorySaver) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        call = {
            "name": "demo_book_three_rounds",
            "args": {"destination": "Lima"},
            "id": "c1",
            "type": "tool_call",
        }
        return {"messages": [AIMessage("", tool_calls=[call], id="ai")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=saver)


def answer(interrupt: Any) -> dict[str, Any]:
    values = {"date": "2027-01-01", "seats": 2, "meal": "veg"}
    out = {}
    for key, request in interrupt.value["requests"].items():
        props = request["requested_schema"]["properties"]
        out[key] = {"action": "accept", "content": {k: values[k] for k in props if k in values}}
    return out


async def resume_path(durable: bool) -> tuple[int, float]:
    server = build_server()
    saver = InMemorySaver()
    cfg: Any = {"configurable": {"thread_id": "bench"}}
    servers = McpServers({"demo": {"transport": "in_process", "server": server, "mode": "modern"}})
    began = time.perf_counter()
    out = await graph_for(servers, saver).ainvoke({"messages": [HumanMessage("go")]}, cfg)
    while "__interrupt__" in out:
        (pending,) = out["__interrupt__"]
        if durable:  # a restart: the in-memory round state is gone
            await servers.aclose()
            servers = McpServers({"demo": {"transport": "in_process", "server": server, "mode": "modern"}})
        out = await graph_for(servers, saver).ainvoke(Command(resume={pending.id: answer(pending)}), cfg)
    elapsed = time.perf_counter() - began
    await servers.aclose()
    return server.events.counts["book_three_rounds.request"], elapsed


async def main(calls: int) -> None:
    kept = await persistent(calls)
    fresh = await per_call(calls)
    fast_calls, fast_time = await resume_path(durable=False)
    slow_calls, slow_time = await resume_path(durable=True)
    print(f"{'measure':<52}{'value':>12}")
    print(f"{f'{calls} stdio calls, persistent session (s)':<52}{kept:>12.3f}")
    print(f"{f'{calls} stdio calls, a session per call (s)':<52}{fresh:>12.3f}")
    print(f"{'ratio per-call / persistent':<52}{fresh / kept:>12.1f}x")
    print(f"{'3-round tool, fast path: tools/call requests':<52}{fast_calls:>12}")
    print(f"{'3-round tool, durable path: tools/call requests':<52}{slow_calls:>12}")
    print(f"{'ratio durable / fast (requests)':<52}{slow_calls / fast_calls:>12.2f}x")
    print(f"{'ratio durable / fast (wall time)':<52}{slow_time / fast_time:>12.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    asyncio.run(main(parser.parse_args().calls))
