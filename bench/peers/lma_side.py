"""The ``langchain-mcp-adapters`` side (runs in its own venv: mcp<2, so legacy era only); prints one JSON line.

Per-call times, interleaved blocks, on the demo server over stdio:

* ``raw session`` — an mcp 1.x ``ClientSession`` (this venv's floor).
* ``persistent client.session() tools in ToolNode`` — ``load_mcp_tools(session)`` inside ``client.session(...)``.
* ``default get_tools() tools in ToolNode`` — ``MultiServerMCPClient.get_tools()``: a new session (and a new stdio
  process) per call; measured with fewer calls per block.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from importlib.metadata import version
from typing import Any

from langchain_core.messages import AIMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

_ids = itertools.count()


def graph_with(tools: list[Any]) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        call = {"name": "add", "args": {"a": 1, "b": 2}, "id": f"c{next(_ids)}", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder.compile()


def graph_runs(graph: Any) -> Any:
    async def go(n: int) -> None:
        for _ in range(n):
            out = await graph.ainvoke({"messages": []})
            assert out["messages"][-1].status == "success", out["messages"][-1]

    return go


async def percall(server_python: str, server_args: list[str], blocks: int, per_block: int, slow: int) -> Any:
    params = StdioServerParameters(command=server_python, args=server_args)
    connection: Any = {"command": server_python, "args": server_args, "transport": "stdio"}
    client = MultiServerMCPClient({"demo": connection})
    default_graph = graph_with(await client.get_tools())
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
        client.session("demo") as kept,
    ):
        await session.initialize()
        persistent_graph = graph_with(await load_mcp_tools(kept))

        async def raw(n: int) -> None:
            for _ in range(n):
                await session.call_tool("add", {"a": 1, "b": 2})

        variants = {
            "raw session": (raw, per_block),
            "langchain-mcp-adapters persistent client.session() tools in ToolNode": (
                graph_runs(persistent_graph),
                per_block,
            ),
            "langchain-mcp-adapters default get_tools() tools in ToolNode": (graph_runs(default_graph), slow),
        }
        for f, n in variants.values():
            await f(min(n, 2))
        times: dict[str, list[float]] = {name: [] for name in variants}
        names = list(variants)
        for block in range(blocks):
            for name in names[block % len(names) :] + names[: block % len(names)]:
                f, n = variants[name]
                began = time.perf_counter()
                await f(n)
                times[name].append((time.perf_counter() - began) / n)
    return {"version": version("langchain-mcp-adapters"), "mcp": version("mcp"), "times": times}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-python", required=True)
    parser.add_argument("--server-args", required=True, help="JSON list")
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--per-block", type=int, default=10)
    parser.add_argument("--slow", type=int, default=2, help="calls per block for the session-per-call tools")
    args = parser.parse_args()
    out = asyncio.run(
        percall(args.server_python, json.loads(args.server_args), args.blocks, args.per_block, args.slow)
    )
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
