"""P11 cold start: five stdio demo servers, from an unopened ``McpServers`` to the first result of one call to each.

Variants, each block runs all of them in a rotating order (both eras):

* ``slowest single server`` — each of the five servers alone (its own ``McpServers``), unopened to the result of one
  ``add``; the block's figure is the slowest of the five (the baseline: 1.0×).
* ``five servers: a call to each`` — one ``McpServers`` with all five, ``asyncio.gather`` of one call to each; timed
  to the last result (issue 25's target: ≤ 1.2× the slowest single server).
* ``five configured, one called`` — the same five configured, one call to one of them (it should not wait for the
  other four to start).
* ``raw SDK: five sessions at once`` — five raw ``mcp.Client`` stdio sessions opened and called concurrently: what
  starting five Python processes at once costs on this machine, with nothing of ours in it.

The same four again with servers whose start is waiting, not CPU (``bench/servers/waiting_server.py``: no SDK import,
it sleeps ``WAIT`` seconds before it reads its first message), each against the slowest single waiting server of
its block: the case issue 25's target is about (servers that don't depend on each other start concurrently), with
the machine's cores out of it.

Closing is not timed. Five demo interpreters starting at once compete for the cores (each imports the SDK, about
0.5 s of CPU): on a 2-core machine the raw row says how much of the ratio is the machine's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench.common import DEMO_ARGS, ERAS, PY, SERVERS_DIR, Section, Summary, demo_stdio, era_mode, main
from langgraph_mcp import McpServers

NAMES = [f"s{i}" for i in range(1, 6)]
ARGS = {"a": 1, "b": 2}
WAIT = 1.0  # seconds a waiting server sleeps before it serves
WAITING_ARGS = [str(SERVERS_DIR / "waiting_server.py"), str(WAIT)]


def _waiting(era: str) -> dict[str, Any]:
    return {"command": PY, "args": WAITING_ARGS, "mode": era}


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def _ours(era: str, names: list[str], called: list[str], waiting: bool = False) -> float:
    servers = McpServers({name: _waiting(era) if waiting else demo_stdio(era) for name in names})
    try:
        began = time.perf_counter()
        results = await asyncio.gather(*(servers.call_tool(f"{name}_add", ARGS) for name in called))
        elapsed = time.perf_counter() - began
    finally:
        await servers.aclose()
    assert all(_text(r) == "3" for r in results), results
    return elapsed


async def _raw_one(era: str, waiting: bool) -> str:
    params = StdioServerParameters(command=PY, args=WAITING_ARGS if waiting else [*DEMO_ARGS, "stdio"])
    async with Client(stdio_client(params), mode=era_mode(era)) as client:
        return _text(await client.call_tool("add", ARGS))


async def _raw(era: str, waiting: bool = False) -> float:
    # The sessions close inside the gather (a Client's exit is its own task's); the close is a few ms of the total.
    began = time.perf_counter()
    texts = await asyncio.gather(*(_raw_one(era, waiting) for _ in NAMES))
    elapsed = time.perf_counter() - began
    assert texts == ["3"] * len(NAMES), texts
    return elapsed


async def _slowest_single(era: str, waiting: bool = False) -> float:
    return max([await _ours(era, [name], [name], waiting) for name in NAMES])


SLOWEST = "slowest single server"
WAITING_SLOWEST = f"waiting {WAIT:g} s: slowest single server"
VARIANTS: dict[str, Callable[[str], Awaitable[float]]] = {
    SLOWEST: _slowest_single,
    "five servers: a call to each": lambda era: _ours(era, NAMES, NAMES),
    "five configured, one called": lambda era: _ours(era, NAMES, NAMES[:1]),
    "raw SDK: five sessions at once": _raw,
    WAITING_SLOWEST: lambda era: _slowest_single(era, waiting=True),
    f"waiting {WAIT:g} s: five servers, a call to each": lambda era: _ours(era, NAMES, NAMES, waiting=True),
    f"waiting {WAIT:g} s: five configured, one called": lambda era: _ours(
        era, NAMES, NAMES[:1], waiting=True
    ),
    f"waiting {WAIT:g} s: raw SDK, five sessions at once": lambda era: _raw(era, waiting=True),
}


def _baseline(variant: str) -> str:
    return WAITING_SLOWEST if variant.startswith("waiting") else SLOWEST


async def measure(quick: bool) -> Section:
    blocks = 1 if quick else 4  # quick: a smoke run (one block still gives each ratio)
    section = Section(
        "p11",
        "P11 cold start: five stdio servers, unopened to a first result from each",
        ["era", "variant", "wall: median [p25–p75]", "× slowest single server of its kind (per block)"],
    )
    names = list(VARIANTS)
    for era in ERAS:
        await _ours(era, NAMES[:1], NAMES[:1])  # warm-up: the interpreter's files in the page cache
        times: dict[str, list[float]] = {name: [] for name in names}
        for block in range(blocks):
            for name in names[block % len(names) :] + names[: block % len(names)]:
                times[name].append(await VARIANTS[name](era))
        cell: dict[str, Any] = {}
        for name in names:
            wall = Summary.of(times[name])
            ratio = Summary.of([t / b for t, b in zip(times[name], times[_baseline(name)], strict=True)])
            section.rows.append([era, name, wall.ms(), ratio.ratio()])
            cell[name] = {"seconds": wall.as_dict(), "ratio": ratio.as_dict()}
        section.data[era] = cell
    section.notes.append(
        f"{blocks} blocks per era, variants interleaved in a rotating order; each ratio is to the slowest of the "
        "five single-server starts of the same block. A single server's start includes its interpreter starting "
        "(importing the SDK), the handshake, `tools/list` and the call. The waiting rows are to the slowest single "
        f"waiting server (`bench/servers/waiting_server.py`: plain JSON-RPC, no SDK import, {WAIT:g} s asleep before "
        "it reads its first message), so their ratio is what our start adds to a start that is waiting, not CPU."
    )
    return section


if __name__ == "__main__":
    main(__doc__ or "", measure)
