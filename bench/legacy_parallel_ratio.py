"""Issue 14 §1: 32 parallel 100 ms calls to a legacy (2025-11-25) server vs one call, stdio and HTTP, one run.

    .venv/bin/python bench/legacy_parallel_ratio.py [--blocks 15] [--transport streamable_http]

Per transport, one server and one ``McpServers``: ``McpServers.call_tool`` and the raw SDK session of the same
connection are measured interleaved block by block (their order alternating), each block timing one call, 32
parallel calls, then 4 calls one after another (for the client's CPU per call on its own). Over HTTP two more
clients give the floors under the SDK, each on its own MCP session of the same server:

* bare ``httpx2`` — a POST per call whose event stream is read to its end (its connection is reused): the HTTP
  library's floor;
* raw sockets — pre-encoded HTTP/1.1 POSTs on kept-alive sockets, read up to the end of the chunked body, no HTTP
  library: nearly no client CPU, so what remains above 1.0 is the server's own work (and the machine's load).

The server is the demo server under default uvicorn in its own process, as a user would run it. Prints medians
(and min–max) of the wall times, the ratio of the medians (target ≤ 1.3), the median (min–max) of the per-block
ratios, what a burst adds to one call (ms), the client's CPU ms per burst and per call alone, and the server's CPU
ms per burst (all its threads, from /proc/<pid>/task/*/schedstat: ns, not 10 ms ticks), with the machine load
before and after, and how many bursts a full garbage collection of this process landed in (~100 ms each: the max
column). On 2 shared cores a burst's CPU on both sides adds to its wall time: compare the clients side by side,
not the 1.3 alone.
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
from urllib.parse import urlsplit

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import FullCollections  # noqa: E402
from langgraph_mcp import McpServers  # noqa: E402
from langgraph_mcp.servers.mcp_servers import server_access  # noqa: E402
from tests.support.helpers import free_port, stdio_demo_spec  # noqa: E402

PARALLEL = 32
SECONDS = 0.1
ALONE = 4
"""Calls one after another per block, for the client's CPU per call on its own."""
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


async def legacy_session(http: httpx2.AsyncClient, url: str) -> str:
    """A new initialized legacy MCP session on ``url``; returns its session id."""
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
    session_id = response.headers["mcp-session-id"]
    headers = {**LEGACY_HEADERS, "mcp-session-id": session_id}
    await http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return session_id


@asynccontextmanager
async def bare_http(url: str) -> AsyncIterator[Callable[[], Awaitable[Any]]]:
    """One call of ``sleep`` through bare ``httpx2`` on its own initialized legacy session."""
    limits = httpx2.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx2.AsyncClient(limits=limits) as http:
        headers = {**LEGACY_HEADERS, "mcp-session-id": await legacy_session(http, url)}
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


CHUNKED_END = b"\r\n0\r\n\r\n"


@asynccontextmanager
async def raw_sockets(url: str) -> AsyncIterator[Callable[[], Awaitable[Any]]]:
    """One call of ``sleep`` as a pre-encoded HTTP/1.1 POST on a kept-alive socket of its own legacy session, read
    up to the end of its chunked event stream: no HTTP library, nearly no client CPU."""
    async with httpx2.AsyncClient() as http:
        session_id = await legacy_session(http, url)
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    ids = itertools.count(1)
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    opened: list[asyncio.StreamWriter] = []
    head = (
        f"POST {parts.path} HTTP/1.1\r\nhost: {host}:{port}\r\n"
        + "".join(f"{name}: {value}\r\n" for name, value in LEGACY_HEADERS.items())
        + f"mcp-session-id: {session_id}\r\n"
    )

    async def connection() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while idle:
            reader, writer = idle.pop()
            if not reader.at_eof():  # uvicorn hangs up connections idle for 5 s
                return reader, writer
            writer.close()
        reader, writer = await asyncio.open_connection(host, port)
        opened.append(writer)
        return reader, writer

    async def one() -> Any:
        params = {"name": "sleep", "arguments": {"seconds": SECONDS}}
        body = json.dumps(
            {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
        ).encode()
        request = f"{head}content-length: {len(body)}\r\n\r\n".encode() + body
        reader, writer = await connection()
        writer.write(request)
        try:
            response = await reader.readuntil(CHUNKED_END)
        except (
            asyncio.IncompleteReadError
        ) as exc:  # hung up as this request went out: once more, on a new one
            if exc.partial:
                raise
            writer.close()
            reader, writer = await connection()
            writer.write(request)
            response = await reader.readuntil(CHUNKED_END)
        idle.append((reader, writer))
        if b'"result"' not in response:
            raise RuntimeError(f"unexpected response: {response[:300]!r}")
        return response

    try:
        yield one
    finally:
        for writer in opened:
            writer.close()


def process_cpu(pid: int | None) -> float:
    """CPU seconds of process ``pid`` so far, all threads: /proc/<pid>/task/*/schedstat (ns), else /proc/<pid>/stat
    (user + system, 10 ms ticks); 0.0 where neither can be read."""
    if pid is None:
        return 0.0
    try:
        return (
            sum(
                int((task / "schedstat").read_text().split()[0])
                for task in Path(f"/proc/{pid}/task").iterdir()
            )
            / 1e9
        )
    except (OSError, ValueError, IndexError):
        pass
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def spread(values: list[float], scale: float = 1000.0, digits: int = 1) -> str:
    low, mid, high = (v * scale for v in (min(values), statistics.median(values), max(values)))
    return f"{mid:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


async def measure(transport: str, blocks: int) -> list[str]:
    async with legacy_servers(transport) as (servers, server_pid, url), AsyncExitStack() as stack:
        session = (await server_access(servers).connections.connection("demo").owner.client()).session

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
            clients["raw sockets (no HTTP library)"] = await stack.enter_async_context(raw_sockets(url))
        runs: dict[str, dict[str, list[float]]] = {
            name: {
                "one": [],
                "fan": [],
                "ratio": [],
                "cpu": [],
                "server_cpu": [],
                "alone_cpu": [],
                "full_gc": [],
            }
            for name in clients
        }

        async def block(name: str) -> None:
            one = clients[name]
            start = time.perf_counter()
            await one()
            single = time.perf_counter() - start
            cpu, server_cpu = time.process_time(), process_cpu(server_pid)
            with FullCollections() as collections:
                start = time.perf_counter()
                await asyncio.gather(*(one() for _ in range(PARALLEL)))
                fan = time.perf_counter() - start
            run = runs[name]
            run["cpu"].append(time.process_time() - cpu)
            run["server_cpu"].append(process_cpu(server_pid) - server_cpu)
            run["one"].append(single)
            run["fan"].append(fan)
            run["ratio"].append(fan / single)
            run["full_gc"].append(float(collections.count > 0))
            cpu = time.process_time()
            for _ in range(ALONE):
                await one()
            run["alone_cpu"].append((time.process_time() - cpu) / ALONE)

        for name in clients:  # warm-up: connect, list, first calls, the HTTP pool
            await asyncio.gather(*(clients[name]() for _ in range(PARALLEL)))
        for i in range(blocks):
            for name in list(clients)[:: 1 if i % 2 == 0 else -1]:  # alternating order
                await block(name)
    rows = []
    for name, run in runs.items():
        ratio = statistics.median(run["fan"]) / statistics.median(run["one"])
        server_cpu = spread(run["server_cpu"]) if server_pid is not None else "not measured (stdio child)"
        added = statistics.median(run["fan"]) - statistics.median(run["one"])
        rows.append(
            f"| {transport} | {name} | {spread(run['one'])} | {spread(run['fan'])} | {ratio:.2f} "
            f"| {statistics.median(run['ratio']):.2f} ({min(run['ratio']):.2f}–{max(run['ratio']):.2f}) "
            f"| {added * 1000:.1f} | {spread(run['cpu'])} | {spread(run['alone_cpu'], digits=2)} | {server_cpu} "
            f"| {sum(run['full_gc']):.0f}/{len(run['full_gc'])} |"
        )
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=15)
    parser.add_argument("--transport", choices=TRANSPORTS, action="append")
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one INFO line per request would dominate
    print(f"load average before: {load()} ({os.cpu_count()} CPUs)\n")
    print(
        f"| legacy transport | client | one call ms (median, min–max) | {PARALLEL} parallel ms | ratio of medians "
        f"| per-block ratio | burst − one call ms | client CPU ms per {PARALLEL} | client CPU ms per call alone "
        f"| server CPU ms per {PARALLEL} | bursts with a full GC |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for transport in args.transport or TRANSPORTS:
        for row in await measure(transport, args.blocks):
            print(row)
    print(f"\nload average after: {load()}")


if __name__ == "__main__":
    asyncio.run(main())
