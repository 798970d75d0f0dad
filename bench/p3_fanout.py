"""P3 fan-out: 32 parallel 100 ms calls, as a ratio to one such call; both eras, stdio and streamable HTTP.

Variants (each repetition runs all of them, rotating the order):

* ``one call`` — a single ``sleep(0.1)`` through ``servers.call_tool`` (the baseline: 1.0×).
* ``raw session ×32`` — ``asyncio.gather`` of 32 calls on one raw ``mcp.Client`` session (what the SDK allows).
* ``servers.call_tool ×32`` — ``asyncio.gather`` of 32 ``servers.call_tool``.
* ``graph: Send fan-out ×32`` — one AIMessage with 32 tool calls, ``route_tool_calls`` → one task per call.
* ``graph: one-task fan-out ×32`` — the same message to ``McpToolNode`` by a plain edge (one ``@task`` per call).
* ``graph: hand-written Send fan-out ×32`` — the same graph shape with no langgraph-mcp in it: a router returning
  one ``Send`` per call to a hand-written node that awaits the raw SDK session and builds a ToolMessage
  (LangGraph's own Send fan-out: the floor ``route_tool_calls`` + ``McpToolNode`` is held to).

Ideal is ~1.0× one call (all 32 overlap); 32× means the calls ran one at a time. The graph rows are also given as a
ratio to the hand-written Send fan-out of the same repetition (issue 25's target: ≤ 1.03×).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from bench.common import (
    DEMO_ARGS,
    ERAS,
    PY,
    FullCollections,
    Section,
    Summary,
    demo_stdio,
    era_mode,
    http_demo_server,
    http_spec,
    main,
)
from langgraph_mcp import McpServers, McpToolNode, route_tool_calls

FAN = 32
SECONDS = 0.1
SLOW_SECONDS = 1.0
SLOW_REPS = 2
HAND = f"graph: hand-written Send fan-out ×{FAN}"
_ids = itertools.count()


async def agent(state: MessagesState) -> dict[str, Any]:
    calls = [
        {"name": "demo_sleep", "args": {"seconds": SECONDS}, "id": f"s{next(_ids)}", "type": "tool_call"}
        for _ in range(FAN)
    ]
    return {"messages": [AIMessage("", tool_calls=calls)]}


def fan_graph(servers: McpServers, *, send: bool) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    if send:
        builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    else:
        builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder.compile()


def hand_written_send_graph(client: Client) -> Any:
    """The Send fan-out with nothing of ours in it: one ``Send`` per call to a node on the raw session."""

    def router(state: MessagesState) -> list[Send] | str:
        last = state["messages"][-1]
        calls = getattr(last, "tool_calls", None) or []
        return [Send("tools", {"tool_call": call}) for call in calls] or END

    async def tools(arg: dict[str, Any]) -> dict[str, Any]:
        call = arg["tool_call"]
        result = await client.call_tool("sleep", call["args"])
        text = "".join(getattr(block, "text", "") for block in result.content)
        status = "error" if result.is_error else "success"
        return {"messages": [ToolMessage(text, tool_call_id=call["id"], name=call["name"], status=status)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", router, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile()


async def variants_for(stack: AsyncExitStack, era: str, transport: str, url: str | None) -> dict[str, Any]:
    if transport == "stdio":
        spec = demo_stdio(era)
        raw_transport: Any = stdio_client(StdioServerParameters(command=PY, args=[*DEMO_ARGS, "stdio"]))
    else:
        assert url is not None
        spec = http_spec(url, era)
        raw_transport = streamable_http_client(url)
    client = await stack.enter_async_context(Client(raw_transport, mode=era_mode(era)))
    servers = McpServers({"demo": spec})
    stack.push_async_callback(servers.aclose)
    await servers.list_tools()
    send_graph = fan_graph(servers, send=True)
    task_graph = fan_graph(servers, send=False)
    hand_graph = hand_written_send_graph(client)
    args = {"seconds": SECONDS}

    async def one() -> None:
        await servers.call_tool("demo_sleep", args)

    async def raw() -> None:
        await asyncio.gather(*(client.call_tool("sleep", args) for _ in range(FAN)))

    async def ours() -> None:
        await asyncio.gather(*(servers.call_tool("demo_sleep", args) for _ in range(FAN)))

    def graph(g: Any) -> Callable[[], Awaitable[None]]:
        async def go() -> None:
            out = await g.ainvoke({"messages": []})
            replies = [m for m in out["messages"] if m.type == "tool"]
            assert len(replies) == FAN and all(m.status == "success" for m in replies), replies[:1]

        return go

    return {
        "one call": one,
        f"raw session ×{FAN}": raw,
        f"servers.call_tool ×{FAN}": ours,
        f"graph: Send fan-out ×{FAN}": graph(send_graph),
        f"graph: one-task fan-out ×{FAN}": graph(task_graph),
        HAND: graph(hand_graph),
    }


async def measure(quick: bool) -> Section:
    reps = 2 if quick else 15
    section = Section(
        "p3",
        f"P3 fan-out: {FAN} parallel {SECONDS * 1000:.0f} ms calls",
        [
            "era",
            "transport",
            "variant",
            "wall: median [p25–p75]",
            "× one call",
            "× hand-written Send fan-out",
            "client CPU × hand-written",
            "runs with a full GC",
        ],
    )
    with http_demo_server() as url:
        for era in ERAS:
            for transport in ("stdio", "http"):
                async with AsyncExitStack() as stack:
                    variants = await variants_for(stack, era, transport, url)
                    names = list(variants)
                    times: dict[str, list[float]] = {name: [] for name in names}
                    cpu: dict[str, list[float]] = {name: [] for name in names}
                    for name in names:  # warm-up: a burst opens its HTTP connections, kept for the timed ones
                        await variants[name]()
                    base: dict[str, list[float]] = {name: [] for name in names}
                    hand: dict[str, list[float]] = {name: [] for name in names}
                    hand_cpu: dict[str, list[float]] = {name: [] for name in names}
                    full_gcs = dict.fromkeys(names, 0)
                    for rep in range(reps):
                        for name in names[rep % len(names) :] + names[: rep % len(names)]:
                            if len(times[name]) >= SLOW_REPS and min(times[name]) > SLOW_SECONDS:
                                continue  # serialised calls: two runs say it, more only cost minutes
                            with FullCollections() as collections:
                                began, began_cpu = time.perf_counter(), time.process_time()
                                await variants[name]()
                                times[name].append(time.perf_counter() - began)
                                cpu[name].append(time.process_time() - began_cpu)
                            full_gcs[name] += collections.count > 0
                            base[name].append(times["one call"][-1] if times["one call"] else 0.0)
                            hand[name].append(times[HAND][-1] if times[HAND] else 0.0)
                            hand_cpu[name].append(cpu[HAND][-1] if cpu[HAND] else 0.0)
                cell: dict[str, Any] = {}
                for name in names:
                    wall = Summary.of(times[name])
                    pairs = zip(times[name], base[name] if name != "one call" else times[name], strict=True)
                    ratio = Summary.of([t / b for t, b in pairs if b > 0])
                    gc_runs = f"{full_gcs[name]}/{len(times[name])}"
                    # vs the hand-written Send fan-out: the latest one before this run (the first rep's variants
                    # before it in the rotation have none, and are left out of this ratio)
                    own = times[name] if name == HAND else None
                    hand_pairs = zip(times[name], own or hand[name], strict=True)
                    vs_hand = [t / b for t, b in hand_pairs if b > 0]
                    hand_cell = Summary.of(vs_hand) if vs_hand and name.startswith("graph") else None
                    cpu_pairs = zip(cpu[name], cpu[name] if name == HAND else hand_cpu[name], strict=True)
                    cpu_vs_hand = [t / b for t, b in cpu_pairs if b > 0]
                    cpu_cell = Summary.of(cpu_vs_hand) if cpu_vs_hand and name.startswith("graph") else None
                    section.rows.append(
                        [
                            era,
                            transport,
                            name,
                            wall.ms(),
                            ratio.ratio(),
                            hand_cell.ratio() if hand_cell else "",
                            cpu_cell.ratio() if cpu_cell else "",
                            gc_runs,
                        ]
                    )
                    cell[name] = {
                        "seconds": wall.as_dict(),
                        "ratio": ratio.as_dict(),
                        "runs_with_full_gc": full_gcs[name],
                        **({"vs_hand_written_send": hand_cell.as_dict()} if hand_cell else {}),
                        **({"cpu_vs_hand_written_send": cpu_cell.as_dict()} if cpu_cell else {}),
                    }
                section.data[f"{era}/{transport}"] = cell
    section.notes.append(
        f"{reps} repetitions per variant, interleaved (a variant slower than {SLOW_SECONDS:g} s: {SLOW_REPS}); "
        "each ratio is to the latest `one call` before it. Every variant runs once untimed first (a first burst "
        "over HTTP opens its 32 connections). A run a full garbage collection landed in (~100 ms: the whole heap "
        "of a process that imported langgraph) is that much slower; the last column counts them. `client CPU "
        "× hand-written`: this process's CPU time for the run (the servers' is not in it) ÷ the latest "
        "hand-written Send fan-out's: on a loaded machine it shows the client's own overhead with less noise "
        "than wall time, which also waits for the server's share of the 2 cores."
    )
    section.notes.append(
        "Over HTTP the raw session (and the hand-written Send fan-out on it) uses the SDK's default HTTP client, which closes each POST's event stream just "
        "before its end, so every call opens a TCP connection; `McpServers` reads it to the end and reuses the "
        "connection (`http_keepalive`). `bench/legacy_parallel_ratio.py` compares the legacy HTTP burst with the "
        "raw session on the same connection, bare httpx2 and raw sockets."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
