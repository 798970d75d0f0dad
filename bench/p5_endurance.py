"""P5 endurance over stdio, both eras: 10,000 ``servers.call_tool`` calls, then 2,000 graph runs with ``McpToolNode``.

Measures RSS growth after a warm-up (``gc.collect()`` before each reading), open file descriptors and child
processes before, after, and after ``aclose()``. Growth should be flat: per-1,000 figures are what to watch.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from bench.common import ERAS, Section, child_processes, demo_stdio, main, open_fds, rss_bytes
from bench.p1_per_call import graph_with
from langgraph_mcp import McpServers, McpToolNode


def snapshot() -> dict[str, int]:
    gc.collect()
    return {"rss": rss_bytes(), "fds": open_fds(), "children": child_processes()}


async def measure(quick: bool) -> Section:
    calls, runs, warmup = (2000, 400, 300) if quick else (10_000, 2000, 1000)
    section = Section(
        "p5",
        f"P5 endurance: {calls:,} calls and {runs:,} graph runs per era (stdio)",
        ["era", "phase", "RSS growth", "per 1,000", "fds before → after", "children before → after", "time"],
    )
    for era in ERAS:
        before_all = snapshot()
        servers = McpServers({"demo": demo_stdio(era)})
        graph = graph_with(McpToolNode(servers))
        cell: dict[str, Any] = {"before": before_all}
        try:
            for i in range(warmup):
                await servers.call_tool("demo_add", {"a": i, "b": 1})
            for _ in range(warmup // 5):
                await graph.ainvoke({"messages": []})
            warm = snapshot()
            began = time.perf_counter()
            for i in range(calls):
                result = await servers.call_tool("demo_add", {"a": i, "b": 1})
                assert result.structured_content == {"result": i + 1}
            calls_time = time.perf_counter() - began
            after_calls = snapshot()
            began = time.perf_counter()
            for _ in range(runs):
                out = await graph.ainvoke({"messages": []})
                assert out["messages"][-1].status == "success"
            runs_time = time.perf_counter() - began
            after_runs = snapshot()
        finally:
            await servers.aclose()
        closed = snapshot()
        phases = [
            (f"{calls:,} calls", warm, after_calls, calls, calls_time),
            (f"{runs:,} graph runs", after_calls, after_runs, runs, runs_time),
        ]
        for name, start, end, count, seconds in phases:
            growth = end["rss"] - start["rss"]
            section.rows.append(
                [
                    era,
                    name,
                    f"{growth / 1024:+.0f} KiB",
                    f"{growth / 1024 / count * 1000:+.1f} KiB",
                    f"{start['fds']} → {end['fds']}",
                    f"{start['children']} → {end['children']}",
                    f"{seconds:.1f} s",
                ]
            )
        section.rows.append(
            [
                era,
                "after aclose()",
                f"{(closed['rss'] - warm['rss']) / 1024:+.0f} KiB vs warm",
                "",
                f"{before_all['fds']} → {closed['fds']}",
                f"{before_all['children']} → {closed['children']}",
                "",
            ]
        )
        cell.update({"warm": warm, "after_calls": after_calls, "after_runs": after_runs, "closed": closed})
        cell.update({"calls": calls, "runs": runs, "calls_seconds": calls_time, "runs_seconds": runs_time})
        section.data[era] = cell
    section.notes.append(
        f"Warm-up: {warmup:,} calls and {warmup // 5:,} graph runs before the first reading. Graph runs have no "
        "checkpointer (so nothing is meant to accumulate)."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
