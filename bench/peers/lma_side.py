"""The ``langchain-mcp-adapters`` side (runs in its own venv: mcp<2, so legacy era only); prints one JSON line.

A ``bench.peers.Worker``: it runs these variants on request, so the main process interleaves them with its own
(same stdio demo server):

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
from importlib.metadata import version
from typing import Any

from langchain_core.messages import AIMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from worker_loop import serve

_ids = itertools.count()


def graph_with(tools: list[Any]) -> Any:
    async def agent(state: MessagesState) -> dict[str, Any]:
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


async def serve_variants(server_python: str, server_args: list[str]) -> None:
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
            "raw session": raw,
            "persistent client.session() tools in ToolNode": graph_runs(persistent_graph),
            "default get_tools() tools in ToolNode": graph_runs(default_graph),
        }
        hello = {"version": version("langchain-mcp-adapters"), "mcp": version("mcp")}
        await serve(variants, hello)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-python", required=True)
    parser.add_argument("--server-args", required=True, help="JSON list")
    args = parser.parse_args()
    asyncio.run(serve_variants(args.server_python, json.loads(args.server_args)))


if __name__ == "__main__":
    main()
