"""P1 targets with a confidence interval, and what remains counted: issue 25's per-call comparisons only.

P1 (:mod:`bench.p1_per_call`) times ten graph and session variants in 40 blocks: on a machine whose per-block noise
is ±10 %, its medians move by a few percent from run to run, as much as the targets they are held to (≤ 1.03×,
≤ 1.05×). This benchmark times only the variants those targets compare, in many more blocks, and gives each median
ratio with a distribution-free 95 % confidence interval (the order statistics around the median: no assumption
about the noise's shape). Its second table counts, per call, the Python and C functions the client enters
(``cProfile``: deterministic, no noise), by package, for the same pairs: what each variant does beyond its baseline.
Its third table times the parts of one call in place — inside a graph run, among everything else a run does, where
code runs cold and costs several times what a loop over it alone shows — beside the hand-written node's two parts.

Variants, per era, on the bundled demo server over stdio (the fast ``add`` tool):

* ``raw session`` / ``raw session, own task`` / ``servers.call_tool`` — as in P1 (the own task is what any call
  that can stay open after its caller left pays with mcp 2.3: the floor of a parkable legacy call).
* ``graph: hand-written node`` / ``graph: McpToolNode`` / ``graph: McpToolNode, unchecked`` — as in P1.
"""

from __future__ import annotations

import collections
import contextlib
import cProfile
import functools
import inspect
import math
import pstats
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.graph import MessagesState

import langgraph_mcp.calls.results as results
import langgraph_mcp.graph.node as node_module
from bench.common import ERAS, Comparison, Section, demo_stdio, interleave, main, quantile
from bench.p1_per_call import graph_with, raw_client, variants_for
from langgraph_mcp import McpServers, McpToolNode
from langgraph_mcp.servers.names import NameResolver

PAIRS = [
    ("servers.call_tool", "raw session"),
    ("raw session, own task", "raw session"),
    ("graph: McpToolNode", "graph: hand-written node"),
    ("graph: McpToolNode, unchecked", "graph: hand-written node"),
    ("graph: McpToolNode", "graph: McpToolNode, unchecked"),
]
"""(variant, baseline) pairs the targets compare."""

COUNTED = 300
"""Calls per variant under the profiler (the counts are per call, and the same every run)."""


def median_ci(values: list[float]) -> tuple[float, float, float]:
    """The median and a distribution-free 95 % confidence interval for it (order statistics n/2 ± 0.98·√n)."""
    data = sorted(values)
    n = len(data)
    half = 0.98 * math.sqrt(n)
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half))
    return quantile(data, 0.5), data[lo], data[hi]


def _package(filename: str) -> str:
    """Where a profiled function lives, as one of a few families (ours by layer, the rest by package)."""
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins (C functions, any caller)"
    parts = filename.replace("\\", "/").split("/")
    for root in ("langgraph_mcp", "mcp", "langgraph", "langchain_core", "anyio", "pydantic", "opentelemetry"):
        if root in parts:
            i = parts.index(root)
            if root == "langgraph_mcp" and i + 2 < len(parts):
                return f"{root}/{parts[i + 1]}"
            return root
    if "asyncio" in parts:
        return "asyncio"
    return "other Python (stdlib, jsonschema, …)"


async def _counted(variant: Callable[[int], Awaitable[Any]]) -> collections.Counter[str]:
    await variant(20)
    profile = cProfile.Profile()
    profile.enable()
    await variant(COUNTED)
    profile.disable()
    counts: collections.Counter[str] = collections.Counter()
    for (filename, _line, _name), row in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        counts[_package(filename)] += row[1] / COUNTED
    return counts


SEGMENTS = [
    (node_module.McpToolNode, "_work", "the node's input: pending calls, the gate's records", None),
    (node_module, "with_batch", "the node's output: each ToolMessage marked with its batch", None),
    (NameResolver, "resolve_listed", "name resolution on the listing", None),
    (node_module.McpToolNode, "_prove", "the proof right before tools/call", None),
    (
        node_module,
        "run_call",
        "the call: driver, connection, SDK (hand-written: the SDK's call_tool)",
        "hand: call",
    ),
    (node_module, "to_tool_message", "the result as a ToolMessage (hand-written: its own)", "hand: message"),
    (results, "convert_result", "… of which: the result's content as standard blocks", None),
]
"""(owner, attribute, what it is, the hand-written node's counterpart): the parts of one call timed in place."""


@contextlib.contextmanager
def _timed(owner: Any, name: str, into: collections.Counter[str], label: str) -> Iterator[None]:
    original = getattr(owner, name)
    if isinstance(original, type) or not callable(original):
        raise TypeError(f"{owner!r}.{name} is not a function")
    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                into[label] += time.perf_counter() - began
    else:

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                into[label] += time.perf_counter() - began

    setattr(owner, name, wrapper)
    try:
        yield
    finally:
        setattr(owner, name, original)


async def segments(era: str, calls: int) -> list[tuple[str, float, float | None]]:
    """(part, µs per call in McpToolNode's graph, µs in the hand-written node's graph) for one era."""
    spent: collections.Counter[str] = collections.Counter()
    async with AsyncExitStack() as stack:
        client = await raw_client(stack, era)
        servers = McpServers({"demo": demo_stdio(era)})
        stack.push_async_callback(servers.aclose)
        await servers.list_tools()

        async def hand_written(state: MessagesState) -> dict[str, Any]:
            call = state["messages"][-1].tool_calls[0]  # type: ignore[union-attr]
            began = time.perf_counter()
            result = await client.call_tool("add", call["args"])
            made = time.perf_counter()
            text = "".join(getattr(block, "text", "") for block in result.content)
            message = ToolMessage(text, tool_call_id=call["id"], name=call["name"])
            spent["hand: call"] += made - began
            spent["hand: message"] += time.perf_counter() - made
            return {"messages": [message]}

        graphs = {"ours": graph_with(McpToolNode(servers)), "hand": graph_with(hand_written)}
        with contextlib.ExitStack() as patches:
            for owner, name, label, _counterpart in SEGMENTS:
                patches.enter_context(_timed(owner, name, spent, label))
            for graph in graphs.values():
                for _ in range(30):
                    await graph.ainvoke({"messages": []})
            spent.clear()
            for block in range(calls // 100):  # interleaved in blocks of 100 runs
                for key, graph in sorted(graphs.items(), reverse=block % 2 == 1):
                    began = time.perf_counter()
                    for _ in range(100):
                        await graph.ainvoke({"messages": []})
                    spent[f"{key}: graph"] += time.perf_counter() - began
    per = {key: value / calls * 1e6 for key, value in spent.items()}
    rows: list[tuple[str, float, float | None]] = [
        ("the whole graph run", per["ours: graph"], per["hand: graph"])
    ]
    for _owner, _name, label, counterpart in SEGMENTS:
        rows.append((label, per.get(label, 0.0), None if counterpart is None else per.get(counterpart, 0.0)))
    return rows


async def measure(quick: bool) -> Section:
    blocks, per_block = (10, 10) if quick else (200, 10)
    section = Section(
        "p1_targets",
        "P1 targets: median ratio with its 95 % confidence interval",
        [
            "era",
            "variant ÷ baseline",
            "median [95 % CI]",
            "p25–p75",
            "client CPU: median [95 % CI]",
            "blocks",
        ],
    )
    counts_section: list[list[str]] = []
    names = sorted({name for pair in PAIRS for name in pair})
    for era in ERAS:
        async with AsyncExitStack() as stack:
            everything = await variants_for(stack, era)
            variants = {name: everything[name] for name in names if name in everything}
            result = await interleave(variants, blocks=blocks, per_block=per_block, baseline="raw session")
            counted = {name: await _counted(variant) for name, variant in variants.items()}
        section.data[era] = {}
        for name, baseline in PAIRS:
            if name not in variants:
                continue
            vs = Comparison(baseline, result.times, result.cpu)
            wall, cpu = vs.ratios(name), vs.cpu_ratios(name)
            m, lo, hi = median_ci(wall)
            cm, clo, chi = median_ci(cpu)
            section.rows.append(
                [
                    era,
                    f"{name} ÷ {baseline}",
                    f"{m:.3f}× [{lo:.3f}–{hi:.3f}]",
                    f"{quantile(wall, 0.25):.2f}–{quantile(wall, 0.75):.2f}",
                    f"{cm:.3f}× [{clo:.3f}–{chi:.3f}]",
                    str(len(wall)),
                ]
            )
            mine, base = counted[name], counted[baseline]
            extra = {k: mine[k] - base[k] for k in set(mine) | set(base) if abs(mine[k] - base[k]) >= 0.5}
            total_mine, total_base = sum(mine.values()), sum(base.values())
            where = ", ".join(f"{k} {v:+.0f}" for k, v in sorted(extra.items(), key=lambda kv: -abs(kv[1])))
            counts_section.append(
                [
                    era,
                    f"{name} ÷ {baseline}",
                    f"{total_mine:.0f} / {total_base:.0f} = {total_mine / total_base:.3f}×",
                    where,
                ]
            )
            section.data[era][f"{name} / {baseline}"] = {
                "wall": {"median": m, "ci95": [lo, hi]},
                "cpu": {"median": cm, "ci95": [clo, chi]},
                "functions_per_call": {
                    "variant": total_mine,
                    "baseline": total_base,
                    "extra_by_package": extra,
                },
            }
    parts = ["| era | part of one call | McpToolNode graph | hand-written graph |", "|---|---|---|---|"]
    for era in ERAS:
        for label, ours, hand in await segments(era, 200 if quick else 2_000):
            parts.append(f"| {era} | {label} | {ours:.1f} µs | {'' if hand is None else f'{hand:.1f} µs'} |")
    section.notes.append(
        f"{blocks} interleaved blocks × {per_block} calls per variant; each ratio is per block, then the median and "
        "its distribution-free 95 % confidence interval (order statistics). `client CPU`: this process's CPU "
        "time per call (the server's is not in it)."
    )
    section.notes.append(
        "Functions entered per call (cProfile, Python and C functions, deterministic), variant / baseline, and "
        "where the difference is (per package; ours by layer):\n\n"
        "| era | variant ÷ baseline | functions per call | difference by package |\n|---|---|---|---|\n"
        + "\n".join("| " + " | ".join(row) + " |" for row in counts_section)
        + "\n"
    )
    section.notes.append(
        "The parts of one call timed in place (wall time per call, 2,000 graph runs per graph after 30 untimed, in "
        "interleaved blocks of 100; the timers themselves add about 1 µs per part):\n\n" + "\n".join(parts)
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
