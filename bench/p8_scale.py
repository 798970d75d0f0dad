"""P8 scale: 1,000 concurrent graph threads per era against one streamable-HTTP server, in one process.

Each thread calls ``book_trip(destination=City<i>)``, which asks for a date; all threads are started together and
each pauses on its question (an ``mcp_elicitation`` interrupt), then all are resumed together, thread ``i`` with its
own date. Every reply is checked to carry that thread's city and date (no answer crosses threads). Reported: wall
time of both phases, RSS per paused thread (target ≤ 50 KB, measured with the checkpoints in an ``InMemorySaver``
in the same process, so they count), open fds and the server's ``tools/call`` count.
"""

from __future__ import annotations

import asyncio
import datetime
import gc
import itertools
import time
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from bench.common import ERAS, Section, http_demo_server, http_spec, main, open_fds, rss_bytes
from langgraph_mcp import McpServers, McpToolNode, route_tool_calls

TARGET_KB = 50
PHASE_TIMEOUT = 240.0
_ids = itertools.count()


class State(MessagesState):
    city: str


def graph_for(servers: McpServers, saver: Any) -> Any:
    def agent(state: State) -> dict[str, Any]:
        if state["messages"]:
            return {}
        call = {
            "name": "demo_book_trip",
            "args": {"destination": state["city"]},
            "id": f"c{next(_ids)}",
            "type": "tool_call",
        }
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=saver)


def date_for(i: int) -> str:
    return (datetime.date(2027, 1, 1) + datetime.timedelta(days=i)).isoformat()


async def pause_all(graph: Any, tag: str, n: int) -> list[Any]:
    async def one(i: int) -> Any:
        cfg = {"configurable": {"thread_id": f"{tag}-{i}"}}
        out = await graph.ainvoke({"messages": [], "city": f"City{i}"}, cfg)
        if "__interrupt__" not in out:
            raise AssertionError(f"thread {i} did not pause: {str(out['messages'][-1].content)[:300]}")
        (pending,) = out["__interrupt__"]
        assert pending.value["arguments"]["destination"] == f"City{i}"
        return pending

    return list(await asyncio.gather(*(one(i) for i in range(n))))


async def resume_all(graph: Any, tag: str, pending: list[Any]) -> int:
    async def one(i: int, interrupt: Any) -> bool:
        cfg = {"configurable": {"thread_id": f"{tag}-{i}"}}
        answers = {
            key: {"action": "accept", "content": {"date": date_for(i)}} for key in interrupt.value["requests"]
        }
        out = await graph.ainvoke(Command(resume={interrupt.id: answers}), cfg)
        text = str(out["messages"][-1].content)
        return f"City{i}" in text and date_for(i) in text

    return sum(await asyncio.gather(*(one(i, p) for i, p in enumerate(pending))))


async def one_era(era: str, url: str, n: int) -> dict[str, Any]:
    servers = McpServers({"demo": http_spec(url, era)})
    saver = InMemorySaver()
    graph = graph_for(servers, saver)
    try:
        await servers.list_tools()
        warm = await pause_all(graph, f"{era}-warm", 20)
        assert await resume_all(graph, f"{era}-warm", warm) == 20
        gc.collect()
        rss0, fds0 = rss_bytes(), open_fds()
        began = time.perf_counter()
        pending = await asyncio.wait_for(pause_all(graph, era, n), PHASE_TIMEOUT)
        pause_s = time.perf_counter() - began
        gc.collect()
        rss1, fds1 = rss_bytes(), open_fds()
        began = time.perf_counter()
        right = await asyncio.wait_for(resume_all(graph, era, pending), PHASE_TIMEOUT)
        resume_s = time.perf_counter() - began
        gc.collect()
        rss2, fds2 = rss_bytes(), open_fds()
        stats = await servers.call_tool("demo_stats", {})
    finally:
        await servers.aclose()
    counts = (stats.structured_content or {}).get("counts", stats.structured_content or {})
    return {
        "threads": n,
        "pause_seconds": pause_s,
        "resume_seconds": resume_s,
        "rss_per_paused_thread_kb": (rss1 - rss0) / n / 1024,
        "rss_after_resume_kb": (rss2 - rss0) / 1024,
        "fds": [fds0, fds1, fds2],
        "own_answer": right,
        "server_counts": counts,
    }


async def measure(quick: bool) -> Section:
    n = 200 if quick else 1000
    section = Section(
        "p8",
        f"P8 scale: {n:,} concurrent paused graph threads per era, one HTTP server, one process",
        [
            "era",
            "pause all",
            "resume all",
            "RSS per paused thread",
            "RSS kept after resume",
            "fds before / paused / after",
            "own answer",
        ],
    )
    with http_demo_server() as url:
        for era in ERAS:
            try:
                r = await one_era(era, url, n)
            except (
                TimeoutError,
                AssertionError,
                Exception,
            ) as exc:  # report, don't hang or hide the other era
                section.rows.append([era, f"failed: {type(exc).__name__}: {exc!s:.200}", "", "", "", "", ""])
                section.data[era] = {"error": repr(exc)}
                continue
            section.rows.append(
                [
                    era,
                    f"{r['pause_seconds']:.1f} s",
                    f"{r['resume_seconds']:.1f} s",
                    f"{r['rss_per_paused_thread_kb']:.1f} KiB",
                    f"{r['rss_after_resume_kb']:+.0f} KiB",
                    " / ".join(map(str, r["fds"])),
                    f"{r['own_answer']}/{n}",
                ]
            )
            section.data[era] = r
    section.notes.append(
        f"Target ≤ {TARGET_KB} KB per paused thread (checkpoints included: InMemorySaver). Each phase is bounded "
        f"by {PHASE_TIMEOUT:g} s. Warm-up: 20 threads paused and resumed first."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
