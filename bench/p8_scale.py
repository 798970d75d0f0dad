"""P8 scale: 1,000 concurrent graph threads per era against one streamable-HTTP server, in one process.

Each thread calls ``book_trip_idempotent(destination=City<i>)`` (``bench/servers/idempotent_trip_server.py``: the
demo's ``book_trip``, hinted idempotent), which asks for a date; the threads pause on their questions
(``mcp_elicitation`` interrupts), then all are resumed together, thread ``i`` with its own date. Every reply is
checked to carry that thread's city and date (no answer crosses threads). Each (era, arrival) runs in a fresh
process against the same server:

* ``burst`` — all threads started at the same instant: wall time of both phases, fds, RSS growth. The RSS includes
  what the allocator keeps after the peak of 1,000 runs in flight at once.
* ``waves`` — threads arrive 100 at a time until all are paused: RSS growth is then the memory a paused thread
  holds (target ≤ 50 KB; checkpoints included: they live in an ``InMemorySaver`` in the same process).

Legacy runs twice: with the package's defaults — ``max_parked_calls`` 200, so at most 200 calls stay open (parked) inside
their questions and the pauses past the cap are cancelled on the server and re-issued on resume (the durable path:
``tools/call`` counts the replays; only a read-only or idempotent tool takes it — since issue 23 a non-idempotent
pause past the cap ends with ``TooManyParkedCallsError``, hence the idempotent tool) — and with every call parked (``max_parked_calls`` above the thread count), where
each paused thread also holds an open HTTP response and the SDK's in-flight request.

The benchmark keeps only each interrupt's id and request keys (a real server reads pending interrupts back from
the checkpointer), so its own bookkeeping is not counted.
"""

from __future__ import annotations

import asyncio
import datetime
import gc
import itertools
import json
import subprocess
import sys
import time
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from bench.common import (
    ERAS,
    REPO,
    SERVERS_DIR,
    Section,
    http_server_process,
    http_spec,
    main,
    open_fds,
    rss_bytes,
)
from langgraph_mcp import McpServers, McpToolNode, route_tool_calls
from langgraph_mcp.config import HttpServer

TARGET_KB = 50
PHASE_TIMEOUT = 240.0
WAVE = 100
DEFAULT_CAP = HttpServer.model_fields["max_parked_calls"].default
PARKED = {"modern": ["defaults"], "legacy": ["defaults", "all"]}
"""Legacy: the default cap on parked calls, and every call parked."""
TOOL = "book_trip_idempotent"
SERVER = str(SERVERS_DIR / "idempotent_trip_server.py")
_ids = itertools.count()


class State(MessagesState):
    city: str


def graph_for(servers: McpServers, saver: Any) -> Any:
    async def agent(state: State) -> dict[str, Any]:
        if state["messages"]:
            return {}
        call = {
            "name": f"demo_{TOOL}",
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


async def pause_all(graph: Any, tag: str, start: int, n: int) -> list[tuple[int, str, list[str]]]:
    """Start threads ``start..start+n`` together; each must pause on its own question."""

    async def one(i: int) -> tuple[int, str, list[str]]:
        cfg = {"configurable": {"thread_id": f"{tag}-{i}"}}
        out = await graph.ainvoke({"messages": [], "city": f"City{i}"}, cfg)
        if "__interrupt__" not in out:
            raise AssertionError(f"thread {i} did not pause: {str(out['messages'][-1].content)[:300]}")
        (pending,) = out["__interrupt__"]
        assert pending.value["arguments"]["destination"] == f"City{i}"
        return i, pending.id, list(pending.value["requests"])

    return list(await asyncio.gather(*(one(i) for i in range(start, start + n))))


async def resume_all(graph: Any, tag: str, pending: list[tuple[int, str, list[str]]]) -> int:
    """Resume every thread together with its own date; count the replies that carry their own city and date."""

    async def one(i: int, interrupt_id: str, keys: list[str]) -> bool:
        cfg = {"configurable": {"thread_id": f"{tag}-{i}"}}
        answers = {key: {"action": "accept", "content": {"date": date_for(i)}} for key in keys}
        out = await graph.ainvoke(Command(resume={interrupt_id: answers}), cfg)
        text = str(out["messages"][-1].content)
        return f"City{i}" in text and date_for(i) in text

    return sum(await asyncio.gather(*(one(*p) for p in pending)))


async def child(era: str, arrival: str, parked: str, url: str, n: int) -> dict[str, Any]:
    # "all": each paused legacy call stays open on the server (one HTTP response each); "defaults": up to the cap.
    options = {"max_parked_calls": n + 20} if parked == "all" else {}
    servers = McpServers({"demo": http_spec(url, era, **options)})
    graph = graph_for(servers, InMemorySaver())
    try:
        await servers.list_tools()
        warm = await pause_all(graph, "warm", 0, 20)
        assert await resume_all(graph, "warm", warm) == 20
        gc.collect()
        rss0, fds0 = rss_bytes(), open_fds()
        before = await servers.call_tool("demo_stats", {})
        began = time.perf_counter()
        wave = n if arrival == "burst" else WAVE
        pending: list[tuple[int, str, list[str]]] = []
        for start in range(0, n, wave):
            part = pause_all(graph, "t", start, min(wave, n - start))
            pending.extend(await asyncio.wait_for(part, PHASE_TIMEOUT))
        pause_s = time.perf_counter() - began
        gc.collect()
        rss1, fds1 = rss_bytes(), open_fds()
        began = time.perf_counter()
        right = await asyncio.wait_for(resume_all(graph, "t", pending), PHASE_TIMEOUT)
        resume_s = time.perf_counter() - began
        gc.collect()
        rss2, fds2 = rss_bytes(), open_fds()
        after = await servers.call_tool("demo_stats", {})
    finally:
        await servers.aclose()
    return {
        "era": era,
        "arrival": arrival,
        "parked": parked,
        "threads": n,
        "pause_seconds": pause_s,
        "resume_seconds": resume_s,
        "rss_per_paused_thread_kb": (rss1 - rss0) / n / 1024,
        "rss_after_resume_kb": (rss2 - rss0) / 1024,
        "fds": [fds0, fds1, fds2],
        "own_answer": right,
        "book_trip_requests": requests_of(after) - requests_of(before),
    }


def requests_of(stats: Any) -> int:
    data = stats.structured_content or {}
    counts = data.get("counts", data) if isinstance(data, dict) else {}
    return int(counts.get(f"{TOOL}.request", 0))


def run_child(era: str, arrival: str, parked: str, url: str, n: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.p8_scale", "--child", era, arrival, parked, url, str(n)]
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=3 * PHASE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"error": f"no answer within {3 * PHASE_TIMEOUT:g} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


async def measure(quick: bool) -> Section:
    n = 200 if quick else 1000
    section = Section(
        "p8",
        f"P8 scale: {n:,} concurrent paused graph threads per era, one HTTP server",
        [
            "era",
            "arrival",
            "parked calls",
            "pause all",
            "resume all",
            "RSS per paused thread",
            "RSS kept after resume",
            "fds before / paused / after",
            "own answer",
            "tools/call",
        ],
    )
    cases = [
        (era, arrival, parked) for era in ERAS for parked in PARKED[era] for arrival in ("burst", "waves")
    ]
    with http_server_process(lambda port: [SERVER, str(port)]) as url:
        for era, arrival, parked in cases:
            r = run_child(era, arrival, parked, url, n)
            section.data[f"{era}/{arrival}" + ("" if parked == "defaults" else f"/{parked}-parked")] = r
            parked_text = (
                "—"
                if era == "modern"
                else (f"≤ {DEFAULT_CAP} (default)" if parked == "defaults" else f"all {n:,}")
            )
            if "error" in r:
                section.rows.append(
                    [era, arrival, parked_text, f"failed: {r['error']}", "", "", "", "", "", ""]
                )
                continue
            section.rows.append(
                [
                    era,
                    arrival if arrival == "burst" else f"waves of {WAVE}",
                    parked_text,
                    f"{r['pause_seconds']:.1f} s",
                    f"{r['resume_seconds']:.1f} s",
                    f"{r['rss_per_paused_thread_kb'] * 1.024:.0f} KB",
                    f"{r['rss_after_resume_kb'] / 1024:+.0f} MiB",
                    " / ".join(map(str, r["fds"])),
                    f"{r['own_answer']}/{n}",
                    str(r["book_trip_requests"]),
                ]
            )
    section.notes.append(
        f"Target ≤ {TARGET_KB} KB per paused thread, with the package's defaults. Legacy with the defaults parks "
        f"{DEFAULT_CAP} calls (`max_parked_calls`: each parked call holds one HTTP response open) and cancels the pauses past the cap "
        f"on the server, re-issuing them on resume (`tools/call` counts the replays); `all {n:,}` parks every call "
        "(`max_parked_calls` above the thread count): each paused thread then also holds the SDK's in-flight request "
        "and its open HTTP response. Each row is a fresh process; each phase is bounded by "
        f"{PHASE_TIMEOUT:g} s; 20 threads are paused and resumed first as a warm-up. `RSS kept after resume` is the "
        "finished threads' checkpoints (InMemorySaver keeps every checkpoint) and what the allocator keeps of the peak."
    )
    return section


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        era, arrival, parked, url, count = sys.argv[2:7]
        sys.stdout.write(json.dumps(asyncio.run(child(era, arrival, parked, url, int(count)))) + "\n")
    else:
        main(__doc__ or "", measure)
