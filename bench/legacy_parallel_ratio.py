"""Issue 14 §1: 32 parallel 100 ms calls to a legacy (2025-11-25) server vs one call, stdio and HTTP, one run.

    .venv/bin/python bench/legacy_parallel_ratio.py [--blocks 5]

Prints, per transport, the median (and min–max) wall time of one call and of 32 parallel calls through
``McpServers.call_tool``, interleaved block by block, and their ratio (target ≤ 1.3).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_mcp import McpServers  # noqa: E402
from tests.helpers import free_port, stdio_demo_spec  # noqa: E402

PARALLEL = 32
SECONDS = 0.1


@asynccontextmanager
async def legacy_servers(transport: str) -> AsyncIterator[McpServers]:
    if transport == "stdio":
        servers = McpServers({"demo": stdio_demo_spec(mode="legacy")})
        try:
            yield servers
        finally:
            await servers.aclose()
        return
    # The server runs in its own process (as in production): in this process it would share the client's CPU.
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "langgraph_mcp.examples.demo_server", "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    servers = McpServers(
        {"demo": {"url": f"http://127.0.0.1:{port}/mcp", "mode": "legacy", "restart_attempts": 1000}}
    )
    try:
        deadline = time.monotonic() + 20
        while True:  # until the server is up
            try:
                await servers.list_tools(cache_mode="refresh")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        yield servers
    finally:
        await servers.aclose()
        server.terminate()
        server.wait(10)


async def timed(make: Callable[[], Any]) -> float:
    start = time.perf_counter()
    await make()
    return time.perf_counter() - start


async def measure(transport: str, blocks: int, raw: bool) -> dict[str, Any]:
    async with legacy_servers(transport) as servers:
        if raw:  # the raw SDK session of the same connection, for comparison
            session = (await servers.connection("demo").client()).session

            async def one() -> Any:
                return await session.call_tool("sleep", {"seconds": SECONDS})
        else:

            async def one() -> Any:
                return await servers.call_tool("demo_sleep", {"seconds": SECONDS})

        async def many() -> Any:
            return await asyncio.gather(*(one() for _ in range(PARALLEL)))

        await many()  # warm-up: connect, list, first calls
        singles: list[float] = []
        fans: list[float] = []
        for _ in range(blocks):
            singles.append(await timed(one))
            fans.append(await timed(many))
    single, fan = statistics.median(singles), statistics.median(fans)
    return {
        "transport": transport,
        "one_call_ms": (
            round(single * 1000, 1),
            round(min(singles) * 1000, 1),
            round(max(singles) * 1000, 1),
        ),
        "parallel_ms": (round(fan * 1000, 1), round(min(fans) * 1000, 1), round(max(fans) * 1000, 1)),
        "ratio": round(fan / single, 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one INFO line per request would dominate
    print(f"| legacy transport | client | one call ms (median, min–max) | {PARALLEL} parallel ms | ratio |")
    print("|---|---|---|---|---|")
    for transport in ("stdio", "streamable_http"):
        for raw in (False, True):
            r = await measure(transport, args.blocks, raw)
            one, fan = r["one_call_ms"], r["parallel_ms"]
            client = "raw mcp session" if raw else "McpServers.call_tool"
            print(
                f"| {transport} | {client} | {one[0]} ({one[1]}–{one[2]}) | {fan[0]} ({fan[1]}–{fan[2]}) "
                f"| {r['ratio']} |"
            )


if __name__ == "__main__":
    asyncio.run(main())
