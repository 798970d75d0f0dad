"""P2 other bridges on the same stdio demo server: langchain-mcp-adapters and ``langchain.mcp``, vs this package.

Each bridge runs in its own process (``langchain-mcp-adapters`` pins ``mcp<2``, ``langchain.mcp`` needs FastMCP:
``bench/peers`` builds a venv for each), and every process measures its own raw SDK session in interleaved blocks
next to its bridge. Processes run one after another, so rows are compared through ``× raw session`` (each against
the raw session measured beside it) and through ``× ours``: the median per-call time against this package's
``ToolNode(get_tools())`` in the same era (what a user of either sees end to end; mcp 1.x's own session is slower).
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack

from bench import peers
from bench.common import DEMO_ARGS, ERAS, PY, Comparison, Section, Summary, interleave, main
from bench.p1_per_call import variants_for

OURS = ["raw session", "servers.call_tool", "graph: McpToolNode", "graph: ToolNode(get_tools())"]
OUR_TOOLNODE = "graph: ToolNode(get_tools())"


def add_rows(section: Section, bridge: str, era: str, result: Comparison, ours: dict[str, float]) -> None:
    for name, values in result.times.items():
        t = Summary.of(values)
        r = Summary.of(result.ratios(name))
        versus = f"{t.median / ours[era]:.2f}×" if name != "raw session" else ""
        label = f"{bridge}: {name}" if name == "raw session" else name
        section.rows.append([era, label, t.ms(), r.ratio(), versus, f"{1 / t.median:,.0f}"])
        section.data.setdefault(bridge, {})[f"{era}/{name}"] = {
            "seconds": t.as_dict(),
            "ratio": r.as_dict(),
        }


async def measure(quick: bool) -> Section:
    blocks, per_block, slow = (4, 10, 1) if quick else (10, 20, 2)
    section = Section(
        "p2",
        "P2 other bridges, same stdio server (fast `add` tool)",
        ["era", "variant", "per call: median [p25–p75]", "× raw session (same process)", "× ours", "calls/s"],
    )
    ours: dict[str, float] = {}
    mine: dict[str, Comparison] = {}
    for era in ERAS:
        async with AsyncExitStack() as stack:
            all_variants = await variants_for(stack, era)
            variants = {name: all_variants[name] for name in OURS}
            mine[era] = await interleave(variants, blocks=blocks, per_block=per_block, baseline="raw session")
        ours[era] = Summary.of(mine[era].times[OUR_TOOLNODE]).median
    for era in ERAS:
        add_rows(section, "langgraph-mcp (mcp 2.3)", era, mine[era], ours)

    common = ["--server-python", PY, "--server-args", json.dumps([*DEMO_ARGS, "stdio"])]
    counts = ["--blocks", str(blocks), "--per-block", str(per_block)]
    lma = peers.run_side("lma", "lma_side.py", *common, *counts, "--slow", str(slow))
    if "error" in lma:
        section.notes.append(f"langchain-mcp-adapters not measured: {lma['error']}")
    else:
        result = Comparison("raw session", lma["times"])
        add_rows(
            section, f"langchain-mcp-adapters {lma['version']} (mcp {lma['mcp']})", "legacy", result, ours
        )
    lc = peers.run_side("lcmcp", "lcmcp_side.py", "percall", *common, *counts)
    if "error" in lc:
        section.notes.append(f"langchain.mcp not measured: {lc['error']}")
    else:
        result = Comparison("raw session", lc["times"])
        add_rows(section, f"langchain.mcp (langchain {lc['version']})", "modern", result, ours)
    section.notes.append(
        f"{blocks} interleaved blocks × {per_block} calls ({slow} for session-per-call tools) per variant. "
        "langchain-mcp-adapters speaks only the legacy era (mcp<2); langchain.mcp negotiates 2026-07-28."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
