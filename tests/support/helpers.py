"""Test helpers: the era/transport matrix, the bundled demo server as a stdio command or a live HTTP server,
and process checks.

Everything here starts real servers (no mocks) and stops what it starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    AsyncExitStack,
    ExitStack,
    asynccontextmanager,
)
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc
import uvicorn
from mcp.server.mcpserver import MCPServer

from langgraph_mcp import McpServers
from langgraph_mcp.connection.owner import ListKind
from langgraph_mcp.examples.demo_server import build_server, http_app

T = TypeVar("T")

ERAS = ("modern", "legacy")
"""The protocol eras as ``mode`` values: 2026-07-28 (``modern``) and 2025-11-25 (``legacy``). Parametrize with
``@pytest.mark.parametrize("era", ERAS)``; tests about ``mode="auto"`` itself say so."""
TRANSPORTS = ("in_process", "stdio", "http")
"""The transports every behaviour is checked over: the SDK's in-process pair (fast), a stdio subprocess, and
streamable HTTP on 127.0.0.1 (uvicorn in the test's own loop). Legacy SSE has its own tests (test_sse.py)."""

HANG_GUARD = 120
"""Seconds a test waits for a process it started before calling it hung: only a hung process trips it (a loaded
2-core box took 20+ s for healthy CLI runs, past the 20–30 s budgets tests had)."""

SERVERS_DIR = Path(__file__).resolve().parent / "servers"
RAW_SERVER = SERVERS_DIR / "raw_stdio_server.py"


def raw_server_spec(mode: str, **options: Any) -> dict[str, Any]:
    """A stdio config entry for ``tests/support/servers/raw_stdio_server.py`` in ``mode`` (``deep`` or ``banner``)."""
    return {"command": sys.executable, "args": [str(RAW_SERVER), mode], **options}


def stdio_demo_spec(*, events_file: Path | None = None, **options: Any) -> dict[str, Any]:
    """A stdio server config entry running ``python -m langgraph_mcp.examples.demo_server stdio``.

    ``events_file`` sets ``DEMO_EVENTS_FILE`` so every tool run is logged with the server's pid.
    """
    spec: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
        **options,
    }
    if events_file is not None:
        spec["env"] = {**spec.get("env", {}), "DEMO_EVENTS_FILE": str(events_file)}
    return spec


@asynccontextmanager
async def demo_entry(
    transport: str,
    era: str,
    *,
    server: MCPServer | None = None,
    events_file: Path | None = None,
    **options: Any,
) -> AsyncIterator[dict[str, Any]]:
    """A server config entry for the demo server over ``transport`` in ``era``; HTTP is served until exit.

    ``server`` (in-process and HTTP; default: a fresh ``build_server()``) lets a test read the server's own
    record; ``events_file`` (stdio) sets ``DEMO_EVENTS_FILE``.
    """
    if transport not in TRANSPORTS or era not in ERAS:
        raise ValueError(
            f"transport must be one of {TRANSPORTS} and era one of {ERAS}: {transport!r}, {era!r}"
        )
    if transport == "stdio":
        yield stdio_demo_spec(events_file=events_file, mode=era, **options)
    elif transport == "in_process":
        yield {"transport": "in_process", "server": server or build_server(), "mode": era, **options}
    else:
        async with http_demo_server(server) as url:
            yield {"url": url, "mode": era, **options}


CRASHING_SERVER = SERVERS_DIR / "crashing_demo_server.py"


def crashing_demo_spec(*, events_file: Path | None = None, **options: Any) -> dict[str, Any]:
    """:func:`stdio_demo_spec` for ``tests/support/servers/crashing_demo_server.py``: the demo server plus ``crash``,
    ``flaky_read`` and ``flaky_delete``, tools that kill the server process."""
    spec = stdio_demo_spec(events_file=events_file, **options)
    spec["args"] = [str(CRASHING_SERVER)]
    return spec


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def http_demo_server(server: MCPServer | None = None) -> AsyncIterator[str]:
    """Serve ``server`` (default: a fresh demo server) over streamable HTTP on 127.0.0.1; yields the ``/mcp`` URL."""
    async with serve_asgi(http_app(server if server is not None else build_server())) as base:
        yield f"{base}/mcp"


class LoopbackUvicorn(uvicorn.Server):
    """uvicorn for tests: ``ready`` is set once startup is over (``started`` says whether it listens), and it
    installs no SIGINT/SIGTERM handlers: inside a test they would swallow the signal that stops the test run
    (``timeout``, CI), leaving a hung test unkillable but by SIGKILL. Create it inside the test's event loop."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def start_uvicorn(tg: anyio.abc.TaskGroup, server: LoopbackUvicorn, *, bound: float = 10.0) -> None:
    """Start ``server`` in ``tg`` and return once it listens (bounded); raise if its startup failed."""
    tg.start_soon(server.serve)
    with anyio.fail_after(bound):
        await server.ready.wait()
    if not server.started:
        raise OSError(f"uvicorn could not start on {server.config.host}:{server.config.port} (see its log)")


@asynccontextmanager
async def serve_asgi(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port in this event loop; yields the base URL.

    On exit uvicorn is told to stop and awaited; connections its clients still hold open are cancelled after
    5 s (close the clients first: ``open_servers.enter`` orders that).
    """
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=5
    )
    uv = LoopbackUvicorn(config)
    async with anyio.create_task_group() as tg:
        await start_uvicorn(tg, uv)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            uv.should_exit = True


def process_exists(pid: int) -> bool:
    """Whether a process with this pid exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


async def wait_exit(pid: int, *, bound: float = 10.0) -> None:
    """Wait (bounded) until process ``pid`` has exited, on its pidfd: it becomes readable when the process ends."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with anyio.fail_after(bound):
            await anyio.wait_readable(fd)
    finally:
        os.close(fd)


_IN_MODIFY, _IN_CLOSE_WRITE, _IN_CREATE = 0x2, 0x8, 0x100
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC


async def wait_for_writes(directory: Path, condition: Callable[[], bool], *, bound: float = 10.0) -> None:
    """Wait (bounded) until ``condition()`` holds: checked now and after every write to a file in ``directory``
    (inotify), for what another process reports through a file (the demo server's ``DEMO_EVENTS_FILE``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1 failed")
    try:
        if libc.inotify_add_watch(fd, os.fsencode(directory), _IN_MODIFY | _IN_CLOSE_WRITE | _IN_CREATE) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch({directory}) failed")
        with anyio.fail_after(bound):
            while not condition():  # watched before the first check: no write can slip in between
                await anyio.wait_readable(fd)
                with contextlib.suppress(BlockingIOError):
                    while os.read(fd, 4096):
                        pass
    finally:
        os.close(fd)


def child_pids() -> set[int]:
    """Live (non-zombie) child processes of this test process, read from /proc."""
    me = os.getpid()
    children: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        state, ppid = fields[0], int(fields[1])
        if ppid == me and state != "Z":
            children.add(int(entry.name))
    return children


def event_pids(events_file: Path, tool: str | None = None, event: str = "enter") -> list[int]:
    """The pid of every ``event`` the demo server logged to ``DEMO_EVENTS_FILE`` (optionally for one tool)."""
    if not events_file.exists():
        return []
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    return [e["pid"] for e in events if e["event"] == event and (tool is None or e["tool"] == tool)]


class WatchedServers(McpServers):
    """``McpServers`` that lets a test wait for a list-changed invalidation instead of polling for it:
    ``changed[kind]`` is set once a server said its ``tools``, ``resources`` or ``prompts`` changed and what was
    cached of that listing was dropped; ``invalidated`` is ``changed["tools"]``."""

    def __init__(self, config: Any, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.changed = {kind: asyncio.Event() for kind in ("tools", "resources", "prompts")}
        self.invalidated = self.changed["tools"]

    def _list_changed(self, server: str, kind: ListKind) -> None:
        super()._list_changed(server, kind)
        self.changed[kind].set()


class OpenServers:
    """``open_servers(config, **kwargs)`` makes an ``McpServers`` that is closed when the test ends, pass or fail.

    ``await open_servers.enter(cm)`` enters an async context manager for the rest of the test (a live HTTP
    server: ``tests.support.helpers.demo_entry("http", era)``, ``http_demo_server()``); everything unwinds last-in
    first-out, so the ``McpServers`` made after it are closed before it stops (a server waiting for its
    clients to hang up would otherwise wait forever).
    """

    def __init__(self, stack: AsyncExitStack) -> None:
        self._stack = stack

    def __call__(self, config: Any, **kwargs: Any) -> McpServers:
        servers = McpServers(config, **kwargs)
        self._stack.push_async_callback(servers.aclose)
        return servers

    def watched(self, config: Any, **kwargs: Any) -> WatchedServers:
        """Like calling it, but a :class:`WatchedServers`."""
        servers = WatchedServers(config, **kwargs)
        self._stack.push_async_callback(servers.aclose)
        return servers

    async def enter(self, context: AbstractAsyncContextManager[T]) -> T:
        return await self._stack.enter_async_context(context)


class OpenServersSync:
    """:class:`OpenServers` for synchronous tests: ``close()`` at the end, ``enter`` takes a sync context manager."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack

    def __call__(self, config: Any, **kwargs: Any) -> McpServers:
        servers = McpServers(config, **kwargs)
        self._stack.callback(servers.close)
        return servers

    def enter(self, context: AbstractContextManager[T]) -> T:
        return self._stack.enter_context(context)
