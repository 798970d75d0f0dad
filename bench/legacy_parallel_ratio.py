"""Issue 14 §1: 32 parallel 100 ms calls to a legacy (2025-11-25) server vs one call, stdio and HTTP, one run.

    .venv/bin/python bench/legacy_parallel_ratio.py [--blocks 15] [--transport streamable_http]

Per transport, one server and one ``McpServers``: ``McpServers.call_tool`` and the raw SDK session of the same
connection are measured interleaved block by block (their order alternating), each block timing one call and
32 parallel calls. Over HTTP a third client is the floor of the HTTP stack without the SDK: bare ``httpx2`` on its
own MCP session, a POST per call whose event stream is read to its end (its connection is reused). Prints medians (and min–max) of the wall times, the ratio of the medians (target ≤ 1.3), the
median of the per-block ratios, and the CPU ms per 32-call burst in this process and, for HTTP, in the server
process (its own process, as in production; /proc ticks, so 10 ms steps), with the machine load before and after.
On 2 shared cores a burst's CPU on both sides adds to its wall time: compare the two clients, not the 1.3 alone.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_mcp import McpServers  # noqa: E402
from tests.helpers import free_port, stdio_demo_spec  # noqa: E402

PARALLEL = 32
SECONDS = 0.1
TRANSPORTS = ("stdio", "streamable_http")


@asynccontextmanager
async def legacy_servers(transport: str) -> AsyncIterator[tuple[McpServers, int | None, str | None]]:
    """The demo server on ``transport``, legacy era; yields the servers and the HTTP server's pid and URL."""
    if transport == "stdio":
        servers = McpServers({"demo": stdio_demo_spec(mode="legacy")})
        try:
            yield servers, None, None
        finally:
            await servers.aclose()
        return
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
        yield servers, server.pid, f"http://127.0.0.1:{port}/mcp"
    finally:
        await servers.aclose()
        server.terminate()
        server.wait(10)


LEGACY_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


@asynccontextmanager
async def bare_http(url: str) -> AsyncIterator[Callable[[], Awaitable[Any]]]:
    """One call of ``sleep`` through bare ``httpx2`` on its own initialized legacy session."""
    limits = httpx2.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx2.AsyncClient(limits=limits) as http:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        }
        response = await http.post(
            url,
            headers=LEGACY_HEADERS,
            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        )
        headers = {**LEGACY_HEADERS, "mcp-session-id": response.headers["mcp-session-id"]}
        await http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        ids = itertools.count(1)

        async def one() -> Any:
            params = {"name": "sleep", "arguments": {"seconds": SECONDS}}
            body = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
            message = None
            async with http.stream("POST", url, headers=headers, json=body) as streamed:
                async for event in httpx2.EventSource(streamed):
                    if event.data:
                        message = json.loads(event.data)
            return message

        yield one


def process_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) of process ``pid`` so far, from /proc; 0.0 where that can't be read."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def spread(values: list[float], scale: float = 1000.0) -> str:
    return f"{statistics.median(values) * scale:.1f} ({min(values) * scale:.1f}–{max(values) * scale:.1f})"


async def measure(transport: str, blocks: int) -> list[str]:
    async with legacy_servers(transport) as (servers, server_pid, url), AsyncExitStack() as stack:
        session = (await servers.connection("demo").client()).session

        async def ours() -> Any:
            return await servers.call_tool("demo_sleep", {"seconds": SECONDS})

        async def raw() -> Any:
            return await session.call_tool("sleep", {"seconds": SECONDS})

        clients: dict[str, Callable[[], Awaitable[Any]]] = {
            "McpServers.call_tool": ours,
            "raw mcp session": raw,
        }
        if url is not None:
            clients["bare httpx2 (no SDK)"] = await stack.enter_async_context(bare_http(url))
        runs: dict[str, dict[str, list[float]]] = {
            name: {"one": [], "fan": [], "ratio": [], "cpu": [], "server_cpu": []} for name in clients
        }

        async def block(name: str) -> None:
            one = clients[name]
            start = time.perf_counter()
            await one()
            single = time.perf_counter() - start
            cpu, server_cpu = time.process_time(), process_cpu(server_pid)
            start = time.perf_counter()
            await asyncio.gather(*(one() for _ in range(PARALLEL)))
            fan = time.perf_counter() - start
            run = runs[name]
            run["cpu"].append(time.process_time() - cpu)
            run["server_cpu"].append(process_cpu(server_pid) - server_cpu)
            run["one"].append(single)
            run["fan"].append(fan)
            run["ratio"].append(fan / single)

        for name in clients:  # warm-up: connect, list, first calls, the HTTP pool
            await asyncio.gather(*(clients[name]() for _ in range(PARALLEL)))
        for i in range(blocks):
            for name in list(clients)[:: 1 if i % 2 == 0 else -1]:  # alternating order
                await block(name)
    rows = []
    for name, run in runs.items():
        ratio = statistics.median(run["fan"]) / statistics.median(run["one"])
        server_cpu = spread(run["server_cpu"]) if server_pid is not None else "not measured (stdio child)"
        rows.append(
            f"| {transport} | {name} | {spread(run['one'])} | {spread(run['fan'])} | {ratio:.2f} "
            f"| {statistics.median(run['ratio']):.2f} ({min(run['ratio']):.2f}–{max(run['ratio']):.2f}) "
            f"| {spread(run['cpu'])} | {server_cpu} |"
        )
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=15)
    parser.add_argument("--transport", choices=TRANSPORTS, action="append")
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one INFO line per request would dominate
    print(f"load average before: {load()}\n")
    print(
        f"| legacy transport | client | one call ms (median, min–max) | {PARALLEL} parallel ms | ratio of medians "
        f"| per-block ratio | client CPU ms per {PARALLEL} | server CPU ms per {PARALLEL} |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for transport in args.transport or TRANSPORTS:
        for row in await measure(transport, args.blocks):
            print(row)
    print(f"\nload average after: {load()}")


if __name__ == "__main__":
    asyncio.run(main())
