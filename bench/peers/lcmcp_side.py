"""The ``langchain.mcp`` side (runs in its own venv: langchain[mcp] on FastMCP + mcp 2.x); prints one JSON line.

``serve``: a ``bench.peers.Worker`` running, on request, a raw ``mcp.Client`` session and a graph
``agent → ToolNode(MCPAdapter tools)`` on the demo server over stdio (modern era), so the main process interleaves
them with its own.
``resume``: one ``book_trip`` elicitation round trip through ``ToolNode`` with ``AsyncSqliteSaver``, same process
and after a restart, counting the server's ``tools/call`` requests.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")

from fastmcp.client.transports import StdioTransport  # noqa: E402
from langchain.mcp import MCPAdapter  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode  # noqa: E402
from langgraph.types import Command  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from worker_loop import serve  # noqa: E402

_ids = itertools.count()
ANSWER_DATE = "2027-01-15"


def graph_with(tools: list[Any], tool: str, args: dict[str, Any], saver: Any = None) -> Any:
    async def agent(state: MessagesState) -> dict[str, Any]:
        if state["messages"]:
            return {}
        call = {"name": tool, "args": args, "id": f"c{next(_ids)}", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=saver)


async def serve_variants(server_python: str, server_args: list[str]) -> None:
    params = StdioServerParameters(command=server_python, args=server_args)
    async with (
        Client(stdio_client(params), mode="auto") as client,
        MCPAdapter(StdioTransport(server_python, server_args)) as adapter,
    ):
        tools = await adapter.list_tools()
        graph = graph_with(tools, "add", {"a": 1, "b": 2})

        async def raw(n: int) -> None:
            for _ in range(n):
                await client.call_tool("add", {"a": 1, "b": 2})

        async def tool_node(n: int) -> None:
            for _ in range(n):
                out = await graph.ainvoke({"messages": []})
                assert out["messages"][-1].status == "success", out["messages"][-1]

        await serve(
            {"raw session": raw, "MCPAdapter tools in ToolNode": tool_node}, {"version": version("langchain")}
        )


async def round_trip(
    server_python: str, server_args: list[str], workdir: Path, *, restart: bool
) -> dict[str, float]:
    events = workdir / f"lc-events-{time.monotonic_ns()}.jsonl"
    env = {"DEMO_EVENTS_FILE": str(events)}
    db = str(workdir / "lc-checkpoints.sqlite")

    async def open_all() -> tuple[Any, Any, Any, list[Any]]:
        adapter = MCPAdapter(StdioTransport(server_python, server_args, env=env))
        await adapter.__aenter__()
        saver_cm = AsyncSqliteSaver.from_conn_string(db)
        saver = await saver_cm.__aenter__()
        return adapter, saver_cm, saver, await adapter.list_tools()

    adapter, saver_cm, saver, tools = await open_all()
    try:
        plain_graph = graph_with(tools, "echo", {"text": "hi"}, saver)
        plains = []
        for _ in range(4):  # the first one warms up
            began = time.perf_counter()
            await plain_graph.ainvoke({"messages": []}, {"configurable": {"thread_id": f"p{next(_ids)}"}})
            plains.append(time.perf_counter() - began)
        plain = statistics.median(plains[1:])

        cfg: Any = {"configurable": {"thread_id": f"a{next(_ids)}"}}
        graph = graph_with(tools, "book_trip", {"destination": "Lima"}, saver)
        began = time.perf_counter()
        out = await graph.ainvoke({"messages": []}, cfg)
        pause = time.perf_counter() - began
        (pending,) = out["__interrupt__"]
        if restart:
            await adapter.__aexit__(None, None, None)
            await saver_cm.__aexit__(None, None, None)
            adapter, saver_cm, saver, tools = await open_all()
            graph = graph_with(tools, "book_trip", {"destination": "Lima"}, saver)
        responses = {
            request["key"]: {"action": "accept", "content": {"date": ANSWER_DATE}}
            for request in pending.value["requests"]
        }
        began = time.perf_counter()
        out = await graph.ainvoke(Command(resume={"responses": responses}), cfg)
        resume = time.perf_counter() - began
        reply = out["messages"][-1]
        assert ANSWER_DATE in str(reply.content), reply
    finally:
        await adapter.__aexit__(None, None, None)
        await saver_cm.__aexit__(None, None, None)
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    requests = sum(1 for e in lines if e["tool"] == "book_trip" and e["event"] == "request")
    return {
        "plain": plain,
        "pause": pause,
        "resume": resume,
        "added": pause + resume - plain,
        "requests": requests,
    }


async def resume(server_python: str, server_args: list[str], workdir: Path, reps: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {}
    for restart in (False, True):
        path = "after restart" if restart else "same process"
        runs[path] = [
            await round_trip(server_python, server_args, workdir, restart=restart) for _ in range(reps)
        ]
    return {"version": version("langchain"), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["serve", "resume"])
    parser.add_argument("--server-python", required=True)
    parser.add_argument("--server-args", required=True, help="JSON list")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("."))
    args = parser.parse_args()
    server_args = json.loads(args.server_args)
    if args.mode == "serve":
        asyncio.run(serve_variants(args.server_python, server_args))
    else:
        out = asyncio.run(resume(args.server_python, server_args, args.workdir, args.reps))
        sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
