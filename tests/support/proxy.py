"""A small reverse proxy of our own on 127.0.0.1, in front of HTTP server replicas, for the scale tests.

Plain asyncio streams. Each client connection carries one request (the response says ``Connection: close``); the
request goes to one replica on a fresh upstream connection and the response is streamed back byte for byte, so a
streamable-HTTP event stream passes through as it is written. Two routing modes:

* ``round_robin``: every request goes to the next replica in turn (what a default load balancer does);
* ``sticky``: a request carrying ``mcp-session-id`` goes to the replica that issued that session (learned from
  the ``mcp-session-id`` header of its responses); one without goes to the next replica in turn.

A replica that refuses the connection is answered the way a gateway answers (``down_answer``: an HTTP 502, 503
or 504, or a reset of the client's connection); a replica that dies mid-response cuts the client's response.
Every request is recorded (:attr:`ReverseProxy.routed`): which replica, the HTTP method, the JSON-RPC method, the
session id, and the status the client got. :class:`Replicas` starts demo server replicas as processes, each with
its own pid, so a test can kill one by pid; the replicas record what they ran themselves (``DEMO_EVENTS_FILE``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tests.support.helpers import HANG_GUARD, free_port, wait_exit, wait_for_writes

Mode = Literal["round_robin", "sticky"]
DownAnswer = Literal[502, 503, 504, "reset"]

_REASONS = {502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}
_HOP_BY_HOP = {b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade", b"te"}


@dataclass
class Routed:
    """One request as the proxy routed it."""

    replica: int
    """Index of the replica it was sent to (or would have been, when that replica was down)."""
    method: str
    """The HTTP method."""
    rpc: str | None
    """The JSON-RPC method of a POSTed request (``None`` for a response, a notification's too, or a GET)."""
    session: str | None
    """The ``mcp-session-id`` the request carried."""
    tool: str | None = None
    """The tool a ``tools/call`` names."""
    status: int | None = None
    """The status the client got (``None``: the connection was reset)."""


@dataclass
class ReverseProxy:
    """A reverse proxy on 127.0.0.1 over ``upstreams`` (``(host, port)`` pairs); start with :func:`reverse_proxy`."""

    upstreams: list[tuple[str, int]]
    mode: Mode = "round_robin"
    down_answer: DownAnswer = 502
    routed: list[Routed] = field(default_factory=list)
    sessions: dict[str, int] = field(default_factory=dict)
    """Sticky mode's table: session id -> replica index."""
    port: int = 0
    _turn: itertools.count[int] = field(default_factory=itertools.count)
    _handlers: set[asyncio.Task[None]] = field(default_factory=set)
    _server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def to(self, replica: int, *, status: int | None = 200) -> list[Routed]:
        """The requests routed to ``replica`` (with ``status``; ``None`` matches any)."""
        return [r for r in self.routed if r.replica == replica and (status is None or r.status == status)]

    def rpc_calls(self, rpc: str = "tools/call", *, tool: str | None = None) -> list[Routed]:
        return [r for r in self.routed if r.rpc == rpc and (tool is None or r.tool == tool)]

    async def stop_listening(self) -> None:
        """Close the listening socket: a new connection to the proxy is refused (nothing is sent)."""
        assert self._server is not None
        self._server.close()  # not wait_closed(): on 3.11 it also waits for the open connections to end
        self._server = None

    async def listen(self) -> None:
        """Listen (again) on the proxy's port (a free one the first time)."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    def _pick(self, session: str | None) -> int:
        if self.mode == "sticky" and session is not None and session in self.sessions:
            return self.sessions[session]
        return next(self._turn) % len(self.upstreams)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            await self._serve_one(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # the proxy is closing (only close() cancels a handler)
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *lines = head[:-4].split(b"\r\n")
        method = request_line.split(b" ", 1)[0].decode()
        headers = [line.split(b":", 1) for line in lines]
        length = next((int(v) for k, v in headers if k.strip().lower() == b"content-length"), 0)
        body = await reader.readexactly(length) if length else b""
        session = next(
            (v.strip().decode() for k, v in headers if k.strip().lower() == b"mcp-session-id"), None
        )
        rpc, tool = _rpc_method(body)
        record = Routed(self._pick(session), method, rpc, session, tool)
        self.routed.append(record)
        host, port = self.upstreams[record.replica]
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError:
            await self._answer_down(writer, record)
            return
        try:
            kept = b"".join(b"%s:%s\r\n" % (k, v) for k, v in headers if k.strip().lower() not in _HOP_BY_HOP)
            up_writer.write(request_line + b"\r\n" + kept + b"Connection: close\r\n\r\n" + body)
            await up_writer.drain()
            try:
                response_head = await up_reader.readuntil(b"\r\n\r\n")
            except (ConnectionError, asyncio.IncompleteReadError):
                await self._answer_down(writer, record)
                return
            status_line, *response_lines = response_head[:-4].split(b"\r\n")
            record.status = int(status_line.split(b" ")[1])
            pairs = [line.split(b":", 1) for line in response_lines]
            for key, value in pairs:
                if key.strip().lower() == b"mcp-session-id":
                    self.sessions[value.strip().decode()] = record.replica
            chunked = any(
                k.strip().lower() == b"transfer-encoding" and b"chunked" in v.lower() for k, v in pairs
            )
            kept = b"".join(
                b"%s:%s\r\n" % (k, v)
                for k, v in pairs
                if k.strip().lower() not in _HOP_BY_HOP - {b"transfer-encoding"}
            )
            writer.write(status_line + b"\r\n" + kept + b"Connection: close\r\n\r\n")
            await writer.drain()
            await _pump(up_reader, writer, chunked=chunked)
        finally:
            up_writer.close()
            with contextlib.suppress(Exception):
                await up_writer.wait_closed()

    async def _answer_down(self, writer: asyncio.StreamWriter, record: Routed) -> None:
        """The replica is unreachable: answer as a gateway does (or reset the client's connection)."""
        if self.down_answer == "reset":
            record.status = None
            transport = writer.transport
            sock = transport.get_extra_info("socket")
            if sock is not None:  # SO_LINGER 0: close with RST, not FIN
                import socket
                import struct

                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
            return
        status = self.down_answer
        record.status = status
        text = f"{status} {_REASONS[status]}: upstream 127.0.0.1:{self.upstreams[record.replica][1]} refused".encode()
        writer.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\ncontent-length: %d\r\nConnection: close\r\n\r\n%s"
            % (status, _REASONS[status].encode(), len(text), text)
        )
        await writer.drain()

    async def close(self) -> None:
        for task in list(self._handlers):
            task.cancel()
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=HANG_GUARD)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, chunked: bool) -> None:
    """Copy the upstream body to the client as it arrives, until its end (a chunked body's last chunk, or EOF)."""
    if not chunked:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        return
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        data = await reader.readexactly(size + 2)
        writer.write(size_line + data)
        await writer.drain()
        if size == 0:
            return


def _rpc_method(body: bytes) -> tuple[str | None, str | None]:
    """The JSON-RPC method of a request (``None`` for anything else) and the tool a ``tools/call`` names."""
    try:
        message = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(message, dict) or "id" not in message:
        return None, None
    params = message.get("params")
    tool = params.get("name") if isinstance(params, dict) and message.get("method") == "tools/call" else None
    return message.get("method"), tool


@contextlib.asynccontextmanager
async def reverse_proxy(
    upstreams: Iterable[tuple[str, int]], *, mode: Mode = "round_robin", down_answer: DownAnswer = 502
) -> AsyncIterator[ReverseProxy]:
    """A :class:`ReverseProxy` listening on a free 127.0.0.1 port in this event loop; stopped on exit."""
    proxy = ReverseProxy(list(upstreams), mode=mode, down_answer=down_answer)
    await proxy.listen()
    try:
        yield proxy
    finally:
        if proxy._server is not None:
            await proxy.stop_listening()
        await proxy.close()


class Replicas:
    """Demo server replicas over streamable HTTP, each a process of its own (``python -m
    langgraph_mcp.examples.demo_server http PORT``), all recording into one ``DEMO_EVENTS_FILE``."""

    def __init__(self, directory: Path, count: int, *, env: dict[str, str] | None = None) -> None:
        self.directory = directory
        self.events = directory / "events.jsonl"
        self.count = count
        self.env = env or {}
        self.processes: list[subprocess.Popen[bytes]] = []
        self.ports: list[int] = []

    @property
    def upstreams(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", port) for port in self.ports]

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    async def start(self) -> None:
        env = {**os.environ, "DEMO_EVENTS_FILE": str(self.events), **self.env}
        for index in range(self.count):
            port = free_port()
            log = self.directory / f"replica{index}.log"
            argv = [sys.executable, "-m", "langgraph_mcp.examples.demo_server", "http", str(port)]
            with log.open("wb") as stderr:
                process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
            self.processes.append(process)
            self.ports.append(port)

        def listening() -> bool:
            for process, index in zip(self.processes, itertools.count(), strict=False):
                log = self.directory / f"replica{index}.log"
                assert process.poll() is None, f"replica {index} exited: {log.read_text()[-2000:]}"
            return all(
                b"Uvicorn running on" in (self.directory / f"replica{i}.log").read_bytes()
                for i in range(self.count)
            )

        await wait_for_writes(self.directory, listening, bound=30)

    async def kill(self, pid: int) -> None:
        """Kill the replica with process id ``pid`` (SIGKILL) and wait until it is gone."""
        assert pid in self.pids, f"{pid} is not a replica"
        os.kill(pid, signal.SIGKILL)
        await wait_exit(pid)
        next(p for p in self.processes if p.pid == pid).wait(HANG_GUARD)

    def records(self) -> list[dict[str, object]]:
        """What the replicas recorded themselves (``pid``, ``tool``, ``event``, ...)."""
        if not self.events.exists():
            return []
        return [json.loads(line) for line in self.events.read_text().splitlines() if line.strip()]

    def counted(self, tool: str, event: str) -> dict[int, int]:
        """How often each replica (by pid) recorded ``tool``'s ``event``."""
        counts = {pid: 0 for pid in self.pids}
        for record in self.records():
            if record["tool"] == tool and record["event"] == event:
                pid = record["pid"]
                assert isinstance(pid, int)
                counts[pid] = counts.get(pid, 0) + 1
        return counts

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(HANG_GUARD)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(HANG_GUARD)


@contextlib.asynccontextmanager
async def replicas(
    directory: Path, count: int = 2, *, env: dict[str, str] | None = None
) -> AsyncIterator[Replicas]:
    started = Replicas(directory, count, env=env)
    try:
        await started.start()
        yield started
    finally:
        started.stop()
