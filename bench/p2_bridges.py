"""P2 other bridges on the same stdio demo server: langchain-mcp-adapters and ``langchain.mcp``, vs this package.

Each bridge runs in its own process (``langchain-mcp-adapters`` pins ``mcp<2``, ``langchain.mcp`` needs FastMCP:
``bench/peers`` builds a venv for each) that stays open and runs its variants on request, so every variant of
every bridge is interleaved block by block with this package's in one run. Ratios are per block, against this
process's raw SDK session (``× raw session``) and against this package's ``ToolNode(get_tools())`` (``× ours``).
langchain-mcp-adapters speaks only the legacy era (mcp<2); ``langchain.mcp`` negotiates 2026-07-28.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Any

from bench import peers
from bench.common import DEMO_ARGS, ERAS, PY, Comparison, Section, Summary, interleave, main
from bench.p1_per_call import variants_for

OURS = ["raw session", "servers.call_tool", "graph: McpToolNode", "graph: ToolNode(get_tools())"]
OUR_TOOLNODE = "graph: ToolNode(get_tools())"
PEERS = {
    # venv, script, extra args, era, label prefix
    "lma": ("lma_side.py", [], "legacy", "langchain-mcp-adapters"),
    "lcmcp": ("lcmcp_side.py", ["serve"], "modern", "langchain.mcp"),
}
SLOW = "default get_tools() tools in ToolNode"


async def measure(quick: bool) -> Section:
    blocks, per_block, slow = (4, 10, 1) if quick else (12, 10, 2)
    section = Section(
        "p2",
        "P2 other bridges, same stdio server (fast `add` tool)",
        ["era", "variant", "per call: median [p25–p75]", "× raw session", "× ours", "calls/s"],
    )
    server = ["--server-python", PY, "--server-args", json.dumps([*DEMO_ARGS, "stdio"])]
    for era in ERAS:
        async with AsyncExitStack() as stack:
            mine = await variants_for(stack, era)
            variants: dict[str, Any] = {name: mine[name] for name in OURS}
            counts: dict[str, int] = {}
            labels: dict[str, str] = {}
            for venv, (script, extra, peer_era, label) in PEERS.items():
                if peer_era != era:
                    continue
                worker = await peers.Worker.start(venv, script, *extra, *server)
                if isinstance(worker, str):
                    section.notes.append(f"{label} not measured: {worker}")
                    continue
                stack.push_async_callback(worker.stop)
                version = worker.hello.get("version", "?")
                labels[label] = f"{label} {version}" + (
                    f" (mcp {worker.hello['mcp']})" if "mcp" in worker.hello else ""
                )
                for name in worker.hello["variants"]:
                    key = f"{label}: {name}"
                    variants[key] = worker.variant(name)
                    if name == SLOW:
                        counts[key] = slow
            result: Comparison = await interleave(
                variants, blocks=blocks, per_block=per_block, baseline="raw session", counts=counts
            )
        vs_ours = Comparison(OUR_TOOLNODE, result.times)
        for name, values in result.times.items():
            t = Summary.of(values)
            raw = Summary.of(result.ratios(name))
            ours = Summary.of(vs_ours.ratios(name))
            shown = name if name not in OURS else f"langgraph-mcp: {name}"
            for label, full in labels.items():
                shown = shown.replace(f"{label}:", f"{full}:")
            section.rows.append([era, shown, t.ms(), raw.ratio(), ours.ratio(), f"{1 / t.median:,.0f}"])
            section.data.setdefault(era, {})[name] = {
                "seconds": t.as_dict(),
                "vs_raw": raw.as_dict(),
                "vs_ours": ours.as_dict(),
            }
    section.notes.append(
        f"{blocks} interleaved blocks × {per_block} calls per variant ({slow} for the session-per-call tools); "
        "`× ours` is against `ToolNode(get_tools())` with this package's tools, the like-for-like row."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
