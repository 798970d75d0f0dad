"""P4 catalog: a server with 2,000 tools over stdio, both eras — first listing and conversion, then the caches.

Rows (each a median over repetitions, interleaved where they share a connection):

* ``first list_tools`` — the first ``tools/list`` (all tools: parse, inputSchema guard, names) on a started connection.
* ``first get_tools`` — the first conversion of that listing into LangChain tools.
* ``relist unchanged (refresh)`` — ``list_tools(cache_mode="refresh")``: asks the server; unchanged tools are kept.
* ``raw SDK tools/list`` — ``mcp.Client.list_tools(cache_mode="bypass")`` on the same session: the SDK's share.
* ``cached list_tools`` — served from the cache.
* ``cached get_tools`` — the cached listing's LangChain tools (target ≤ 2 ms).
* ``convert all (no cache)`` — ``make_langchain_tools`` over the cached listing: what every ``get_tools()`` cost
  before the cache.
"""

from __future__ import annotations

import time
from typing import Any

from bench.common import CATALOG_SERVER, ERAS, PY, Section, Summary, main
from langgraph_mcp import McpServers
from langgraph_mcp.calls.tools import make_langchain_tools
from langgraph_mcp.servers.mcp_servers import server_access

TOOLS = 2000
TARGET_MS = 2.0


def spec(era: str) -> dict[str, Any]:
    return {"command": PY, "args": [CATALOG_SERVER, str(TOOLS)], "mode": era, "connect_timeout": 60}


async def timed(make: Any) -> tuple[float, Any]:
    began = time.perf_counter()
    value = await make()
    return time.perf_counter() - began, value


async def one_connection(era: str, reps: int, times: dict[str, list[float]]) -> None:
    servers = McpServers({"cat": spec(era)})
    try:
        await server_access(servers).connections.connection("cat").owner.client()
        t, listed = await timed(servers.list_tools)
        assert len(listed) == TOOLS, len(listed)
        times["first list_tools"].append(t)
        times["first get_tools"].append((await timed(servers.get_tools))[0])
        first = await servers.get_tools()
        client = await server_access(servers).connections.connection("cat").owner.client()

        async def convert_all() -> Any:
            return make_langchain_tools(server_access(servers), servers.cached_tools())

        steps = {
            "relist unchanged (refresh)": lambda: servers.list_tools(cache_mode="refresh"),
            "raw SDK tools/list": lambda: client.list_tools(cache_mode="bypass"),
            "cached list_tools": servers.list_tools,
            "cached get_tools": servers.get_tools,
            "convert all (no cache)": convert_all,
        }
        names = list(steps)
        for rep in range(reps):
            for name in names[rep % len(names) :] + names[: rep % len(names)]:
                times[name].append((await timed(steps[name]))[0])
        again = await servers.get_tools()
        assert all(a is b for a, b in zip(first, again, strict=True)), "the cache did not keep the tools"
    finally:
        await servers.aclose()


async def measure(quick: bool) -> Section:
    starts, reps = (1, 8) if quick else (2, 10)
    section = Section(
        "p4",
        f"P4 catalog: {TOOLS:,} tools over stdio",
        ["era", "step", "median [p25–p75]", "× cached list_tools"],
    )
    for era in ERAS:
        times: dict[str, list[float]] = {
            "first list_tools": [],
            "first get_tools": [],
            "relist unchanged (refresh)": [],
            "raw SDK tools/list": [],
            "cached list_tools": [],
            "cached get_tools": [],
            "convert all (no cache)": [],
        }
        for _ in range(starts):
            await one_connection(era, reps, times)
        cached_list = Summary.of(times["cached list_tools"]).median
        cell: dict[str, Any] = {}
        for name, values in times.items():
            summary = Summary.of(values)
            section.rows.append([era, name, summary.ms(), f"{summary.median / cached_list:.1f}×"])
            cell[name] = summary.as_dict()
        got = Summary.of(times["cached get_tools"]).median * 1e3
        cell["target_met"] = got <= TARGET_MS
        section.data[era] = cell
    section.notes.append(
        f"Target: cached get_tools ≤ {TARGET_MS:g} ms for {TOOLS:,} tools. {starts} fresh connections per era, "
        f"{reps} interleaved repetitions of the cached steps on each."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
