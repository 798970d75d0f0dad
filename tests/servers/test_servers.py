"""``McpServers`` against real servers: discovery in every transport and era, one connection per server,
restarts, timeouts, broken servers, the listing cache, and event loops.

Servers: the bundled demo server in-process, as a stdio subprocess and over streamable HTTP (uvicorn in the
test's own loop on 127.0.0.1); low-level servers from ``tests/support/servers/bad_tools.py``; and hand-written stdio
scripts (``tests/support/servers/raw_stdio_server.py``), one of whose ``tools/list`` answer nests 100,000 levels deep.
Every process a test starts, the test stops.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer

from langgraph_mcp import McpServers, ServerConnectionError, ToolCallTimeoutError
from langgraph_mcp.errors import EventLoopError, ServerDiscoveryError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import (
    ERAS,
    TRANSPORTS,
    OpenServers,
    OpenServersSync,
    child_pids,
    crashing_demo_spec,
    event_pids,
    http_demo_server,
    process_exists,
    raw_server_spec,
    stdio_demo_spec,
    wait_exit,
)
from tests.support.servers.bad_tools import ChangingServer

pytestmark = pytest.mark.anyio

MODERN, LEGACY = "2026-07-28", "2025-11-25"


@asynccontextmanager
async def demo_servers(
    transport: str, mode: str, tmp_path: Path, *, name: str = "demo", **options: Any
) -> AsyncIterator[McpServers]:
    """``McpServers`` with the demo server over ``transport``; closes its connections (and HTTP server)."""
    spec: dict[str, Any] = {"mode": mode, **options}
    if transport == "stdio":
        entry = stdio_demo_spec(events_file=tmp_path / "events.jsonl", **spec)
    elif transport == "in_process":
        entry = {"transport": "in_process", "server": build_server(), **spec}
    else:
        async with http_demo_server() as url, aclosing(McpServers({name: {"url": url, **spec}})) as servers:
            yield servers
        return
    async with aclosing(McpServers({name: entry})) as servers:
        yield servers


async def server_pid(servers: McpServers, tool: str = "demo_stats") -> int:
    pid: int = (await servers.call_tool(tool, {})).structured_content["pid"]
    return pid


# --------------------------------------------------------------------------------------------- discovery


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_lists_tools_with_declared_annotations_and_effective_hints(
    transport: str, mode: str, tmp_path: Path
) -> None:
    async with demo_servers(transport, mode, tmp_path) as servers:
        tools = {t.name: t for t in await servers.list_tools()}

        assert server_access(servers).connections.connection("demo").owner.protocol_version == (
            MODERN if mode == "modern" else LEGACY
        )
        assert servers.server_status("demo")["era"] == mode
        assert {"add", "delete_file", "move_file", "get_forecast", "sleep"} <= set(tools)
        assert all(t.published_name == f"demo_{t.name}" for t in tools.values())

        delete = tools["delete_file"]
        assert delete.annotations == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
        assert delete.effective_hints["destructiveHint"] is True
        assert delete.hint_source("destructiveHint") == "declared"

        move = tools["move_file"]
        assert move.annotations is None
        assert move.declared_hints == {}
        assert move.effective_hints == {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": True,
        }
        assert move.hint_source("destructiveHint") == "spec default"

        forecast = tools["get_forecast"]
        assert forecast.title == "Weather forecast"
        assert forecast.read_only and not forecast.destructive
        assert forecast.output_schema is not None
        assert forecast.input_schema["required"] == ["city"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_auto_mode_negotiates_the_modern_era(transport: str, tmp_path: Path) -> None:
    async with demo_servers(transport, "auto", tmp_path) as servers:
        await servers.list_tools()

        assert server_access(servers).connections.connection("demo").owner.protocol_version == MODERN


@pytest.mark.parametrize("mode", ERAS)
async def test_stdio_hundred_calls_spawn_exactly_one_server_process(mode: str, tmp_path: Path) -> None:
    async with demo_servers("stdio", mode, tmp_path) as servers:
        for i in range(50):
            await servers.call_tool("demo_add", {"a": i, "b": 1})
        results = await asyncio.gather(*(servers.call_tool("demo_add", {"a": i, "b": 1}) for i in range(50)))

        assert [r.structured_content for r in results] == [{"result": i + 1} for i in range(50)]
        pids = event_pids(tmp_path / "events.jsonl", "add")
        assert len(pids) == 100
        assert len(set(pids)) == 1
        assert server_access(servers).connections.connection("demo").owner.starts == 1
        assert child_pids() == set(pids)


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", ["in_process", "http"])
async def test_hundred_calls_share_one_connection(transport: str, mode: str, tmp_path: Path) -> None:
    async with demo_servers(transport, mode, tmp_path) as servers:
        for i in range(100):
            await servers.call_tool("demo_add", {"a": i, "b": 1})

        stats = (await servers.call_tool("demo_stats", {})).structured_content
        assert stats["counts"]["add.enter"] == 100
        assert server_access(servers).connections.connection("demo").owner.starts == 1


# --------------------------------------------------------------------------------------------- restarts


async def test_dead_stdio_server_restarts_on_next_call(open_servers: OpenServers, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    servers = open_servers({"demo": crashing_demo_spec(events_file=log, mode="legacy")})
    first = await server_pid(servers)

    # The server dies inside a call: `crash` has no annotations (not retry-safe), so that call fails...
    with pytest.raises(ServerConnectionError) as caught:
        await servers.call_tool("demo_crash", {})
    assert str(caught.value) == (
        "MCP server 'demo': connection lost during the call to 'crash' (MCP error -32000: Connection closed); "
        "the call may or may not have run on the server"
    )
    # ...and the next one restarts it.
    with anyio.fail_after(15):
        second = await server_pid(servers)

    assert second != first
    assert not process_exists(first)
    assert child_pids() == {second}
    assert event_pids(log, "crash") == [first]

    # The server dies between calls (killed from outside): the next call restarts it, no process leaks.
    os.kill(second, signal.SIGKILL)
    with anyio.fail_after(15):
        third = await server_pid(servers)

    assert third not in (first, second)
    assert child_pids() == {third}
    assert server_access(servers).connections.connection("demo").owner.starts == 3
    assert (await servers.call_tool("demo_add", {"a": 1, "b": 1})).structured_content == {"result": 2}


async def test_no_restart_attempts_means_a_dead_server_errors_clearly(
    open_servers: OpenServers, tmp_path: Path
) -> None:
    log = tmp_path / "events.jsonl"
    # The next attempt is due past the call's tool_timeout, so the call does not wait for it (it would restart).
    spec = crashing_demo_spec(
        events_file=log, mode="modern", restart_attempts=0, reconnect_backoff=300, reconnect_backoff_max=300
    )
    servers = open_servers({"demo": spec})
    pid = await server_pid(servers)
    with pytest.raises(ServerConnectionError, match="connection lost during the call to 'crash'"):
        await servers.call_tool("demo_crash", {})

    with pytest.raises(ServerConnectionError) as caught:
        await servers.call_tool("demo_add", {"a": 1, "b": 1})

    assert caught.value.server == "demo"
    assert "gave up after 0 restart attempts" in str(caught.value)
    assert server_access(servers).connections.connection("demo").owner.starts == 1
    await wait_exit(pid)  # the process exits on its own (bounded); nothing restarts it


async def test_aclose_leaves_no_child_process(open_servers: OpenServers) -> None:
    servers = open_servers({"demo": stdio_demo_spec(), "raw": raw_server_spec("banner")})
    await servers.list_tools()
    demo_pid = await server_pid(servers)
    assert demo_pid in child_pids()
    assert len(child_pids()) == 2  # the demo server and the raw server

    # What this test is about (the fixture closes it again if an assertion above fails).
    await servers.aclose()

    assert not process_exists(demo_pid)
    assert child_pids() == set()


# ------------------------------------------------------------------------------------------- hostile servers


async def test_tools_list_nested_100000_levels_fails_discovery_fast(open_servers: OpenServers) -> None:
    timeout = 3.0
    servers = open_servers({"deep": raw_server_spec("deep", connect_timeout=timeout)})
    with pytest.raises(ServerDiscoveryError) as caught:
        await servers.list_tools()

    # Fast means the unparseable answer ends the wait, not the discovery timeout: a timeout says "within".
    assert "invalid response" in str(caught.value)
    assert "within" not in str(caught.value)
    assert caught.value.server == "deep"
    assert "MCP server 'deep'" in str(caught.value)
    assert "cannot parse" in str(caught.value)
    assert "recursion limit" in str(caught.value)
    assert (
        server_access(servers).connections.connection("deep").owner.protocol_version == LEGACY
    )  # fell back from server/discover
    await servers.aclose()
    assert child_pids() == set()


async def test_deep_json_server_is_reported_and_others_still_listed(open_servers: OpenServers) -> None:
    servers = open_servers(
        {
            "deep": raw_server_spec("deep", connect_timeout=3),
            "demo": {"transport": "in_process", "server": build_server()},
        },
        on_connection_error="ignore",
    )
    tools = await servers.list_tools()

    assert {t.server for t in tools} == {"demo"}
    assert isinstance(servers.report.failed_servers["deep"], ServerDiscoveryError)
    assert "recursion limit" in str(servers.report.failed_servers["deep"])
    assert (await servers.call_tool("demo_add", {"a": 1, "b": 2})).structured_content == {"result": 3}


async def test_a_stray_stdout_line_does_not_break_the_connection(open_servers: OpenServers) -> None:
    # A server that prints a banner on stdout before speaking JSON-RPC: the SDK can't parse that line, but the
    # requests sent after it must still get their answers.
    servers = open_servers({"raw": raw_server_spec("banner")})
    assert [t.published_name for t in await servers.list_tools()] == ["raw_ping"]
    result = await servers.call_tool("raw_ping", {})
    assert [block.text for block in result.content] == ["pong"]  # type: ignore[union-attr]
    assert len(await servers.list_tools(cache_mode="refresh")) == 1


# --------------------------------------------------------------------------------------------- timeouts


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_tool_past_its_timeout_raises_and_the_connection_survives(
    transport: str, mode: str, tmp_path: Path
) -> None:
    async with demo_servers(transport, mode, tmp_path, tool_timeout=0.5) as servers:
        pid = await server_pid(servers)

        # Had the 0.5 s timeout not fired, the 5 s sleep would have returned a result instead of raising.
        with pytest.raises(ToolCallTimeoutError) as caught:
            await servers.call_tool("demo_sleep", {"seconds": 5})

        assert (caught.value.server, caught.value.tool, caught.value.timeout) == ("demo", "sleep", 0.5)
        assert "raise the server's tool_timeout" in str(caught.value)
        assert await server_pid(servers) == pid
        assert (await servers.call_tool("demo_add", {"a": 2, "b": 2})).structured_content == {"result": 4}
        assert server_access(servers).connections.connection("demo").owner.starts == 1


# --------------------------------------------------------------------------------------------- broken servers


def broken_and_demo() -> dict[str, Any]:
    return {
        "broken": {"command": "/nonexistent/cmd", "connect_timeout": 5},
        "demo": {"transport": "in_process", "server": build_server()},
    }


async def test_broken_server_with_ignore_policy_is_reported_and_others_listed(
    open_servers: OpenServers,
) -> None:
    servers = open_servers(broken_and_demo(), on_connection_error="ignore")
    tools = await servers.list_tools()

    assert tools
    assert {t.server for t in tools} == {"demo"}
    error = servers.report.failed_servers["broken"]
    assert isinstance(error, ServerDiscoveryError)
    assert "command not found" in str(error)
    assert "/nonexistent/cmd" in str(error)
    assert servers.server_status("broken")["error"] == str(error)
    assert (await servers.call_tool("demo_echo", {"text": "hi"})).structured_content == {"result": "hi"}


async def test_broken_server_with_callback_policy_calls_back_with_server_and_error(
    open_servers: OpenServers,
) -> None:
    seen: list[tuple[str, BaseException]] = []
    servers = open_servers(
        broken_and_demo(), on_connection_error=lambda name, error: seen.append((name, error))
    )
    tools = await servers.list_tools()

    assert {t.server for t in tools} == {"demo"}
    assert [server for server, _ in seen] == ["broken"]
    assert isinstance(seen[0][1], ServerDiscoveryError)
    assert "command not found" in str(seen[0][1])


async def test_broken_server_with_raise_policy_names_the_server(open_servers: OpenServers) -> None:
    servers = open_servers(broken_and_demo(), on_connection_error="raise")
    with pytest.raises(ServerDiscoveryError) as caught:
        await servers.list_tools()

    assert caught.value.server == "broken"
    assert str(caught.value).startswith("MCP server 'broken': ")
    assert "command not found (/nonexistent/cmd)" in str(caught.value)


async def test_a_broken_server_does_not_hide_another_servers_tool_on_lookup(
    open_servers: OpenServers,
) -> None:
    servers = open_servers(broken_and_demo())  # default policy: raise, but only when listing everything
    tool = await servers.get_tool("demo_add")

    assert tool.server == "demo"
    # "broken" could not publish demo_add, so the lookup never waited on it (issue 25: a call to one server does
    # not wait for the others); listing everything still reports it.
    assert "broken" not in servers.report.failed_servers


# --------------------------------------------------------------------------------------------- listing cache


@pytest.mark.parametrize("mode", ERAS)
async def test_cache_modes_use_refresh_bypass(open_servers: OpenServers, mode: str) -> None:
    changing = ChangingServer()
    servers = open_servers({"changing": {"transport": "in_process", "server": changing.server, "mode": mode}})

    async def names(cache_mode: Any = "use") -> set[str]:
        return {t.name for t in await servers.list_tools(cache_mode=cache_mode)}

    assert await names() == {"add_tool"}
    assert await names() == {"add_tool"}
    assert changing.list_calls == 1  # use: served from the cache

    changing.add("second")  # silently: no notification
    assert await names() == {"add_tool"}
    assert changing.list_calls == 1

    assert await names("refresh") == {"add_tool", "second"}
    assert changing.list_calls == 2  # refresh: always asks, and stores

    changing.add("third")
    assert await names("bypass") == {"add_tool", "second", "third"}
    assert changing.list_calls == 3  # bypass: always asks...
    assert await names() == {"add_tool", "second"}
    assert changing.list_calls == 3  # ...and leaves the cache alone


async def test_legacy_tools_list_changed_notification_invalidates_the_cache(
    open_servers: OpenServers,
) -> None:
    changing = ChangingServer()
    servers = open_servers.watched(
        {"changing": {"transport": "in_process", "server": changing.server, "mode": "legacy"}}
    )
    assert [t.name for t in await servers.list_tools()] == ["add_tool"]

    # The server adds a tool and sends notifications/tools/list_changed.
    await servers.call_tool("changing_add_tool", {"name": "fresh"})

    with anyio.fail_after(5):
        await servers.invalidated.wait()
    assert {t.name for t in await servers.list_tools()} == {"add_tool", "fresh"}  # cache "use": it re-lists
    assert changing.list_calls == 2
    assert (await servers.get_tool("changing_fresh")).name == "fresh"


async def test_modern_tools_list_changed_event_invalidates_the_cache(open_servers: OpenServers) -> None:
    dynamic = MCPServer("dynamic")

    @dynamic.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a tool at run time and announce it."""

        def added() -> str:
            return "new tool"

        dynamic.add_tool(added, name=name, description="added at run time")
        await ctx.notify_tools_changed()  # reaches subscriptions/listen streams (2026-07-28)
        return f"added {name}"

    servers = open_servers.watched({"dyn": {"transport": "in_process", "server": dynamic, "mode": "auto"}})
    assert [t.name for t in await servers.list_tools()] == ["add_tool"]
    assert server_access(servers).connections.connection("dyn").owner.protocol_version == "2026-07-28"
    await servers.call_tool("dyn_add_tool", {"name": "fresh"})
    with anyio.fail_after(5):
        await servers.invalidated.wait()
    assert {t.name for t in await servers.list_tools()} == {
        "add_tool",
        "fresh",
    }  # cache "use": no refresh asked
    assert (await servers.get_tool("dyn_fresh")).name == "fresh"


# --------------------------------------------------------------------------------------------- event loops


def test_same_servers_work_from_two_consecutive_asyncio_runs(
    tmp_path: Path, open_servers_sync: OpenServersSync
) -> None:
    servers = open_servers_sync({"demo": stdio_demo_spec()})

    async def use() -> tuple[int, int]:
        conn = server_access(servers).connections.connection("demo")
        return await server_pid(servers), id(conn)

    first_pid, first_conn = asyncio.run(use())
    second_pid, second_conn = asyncio.run(use())
    assert second_pid != first_pid  # a fresh connection in the second loop
    assert second_conn != first_conn
    assert not process_exists(first_pid)  # the first loop's connection ended with its loop
    servers.close()
    assert not process_exists(second_pid)
    assert child_pids() == set()


async def test_sync_calls_from_a_thread_running_a_loop_work_where_they_cannot_deadlock(
    open_servers: OpenServers,
) -> None:
    # A notebook cell: this thread's loop is running. Work on the private loop never waits for this loop.
    servers = open_servers({"demo": {"transport": "in_process", "server": build_server()}})
    assert "demo_add" in {t.published_name for t in servers.run_sync(servers.list_tools)}

    def call_back_synchronously() -> Any:  # from the private loop's own thread: it would wait for itself
        return servers.run_sync(servers.list_tools)

    async def nested() -> Any:
        return call_back_synchronously()

    with pytest.raises(EventLoopError, match="would wait for itself forever"):
        servers.run_sync(nested)
    await servers.list_tools(cache_mode="bypass")  # now this loop holds a connection: only it can close it
    with pytest.raises(EventLoopError, match=r"await servers\.aclose\(\)"):
        servers.close()
    assert not servers.closed
    await servers.aclose()


async def test_close_from_a_thread_running_a_loop_that_holds_no_connection(open_servers: OpenServers) -> None:
    servers = open_servers({"demo": {"transport": "in_process", "server": build_server()}})
    servers.run_sync(servers.list_tools)  # a connection on the private loop only
    servers.close()
    assert servers.closed
    assert not any(t.name == "langgraph-mcp-sync" for t in threading.enumerate())


def test_sync_code_runs_calls_on_the_private_loop(open_servers_sync: OpenServersSync) -> None:
    servers = open_servers_sync({"demo": {"transport": "in_process", "server": build_server()}})
    result = servers.run_sync(lambda: servers.call_tool("demo_add", {"a": 20, "b": 22}))

    assert result.structured_content == {"result": 42}
    assert threading.current_thread() is threading.main_thread()
    servers.close()
    assert not any(t.name == "langgraph-mcp-sync" for t in threading.enumerate())


async def test_mode_modern_refuses_a_legacy_only_server_with_a_clear_error(open_servers: OpenServers) -> None:
    legacy_only = raw_server_spec("legacy")  # answers server/discover with -32601: handshake only
    servers = open_servers({"old": {**legacy_only, "mode": "modern", "connect_timeout": 10}})
    with pytest.raises(ServerDiscoveryError, match=r"mode='modern' requires 2026-07-28"):
        await servers.list_tools()


def test_server_status_is_a_frozen_typed_snapshot() -> None:
    """``server_status`` returns a frozen ``ServerStatus``; ``status["state"]`` (the dict it was) still reads."""
    import dataclasses

    from langgraph_mcp.servers.status import ServerStatus

    servers = McpServers({"mcpServers": {"idle": {"command": "never-started"}}})
    status = servers.server_status("idle")
    assert isinstance(status, ServerStatus)
    assert status.state == status["state"] and status.as_dict()["server"] == "idle"
    with pytest.raises(dataclasses.FrozenInstanceError):
        status.state = "connected"  # type: ignore[misc]
    with pytest.raises(KeyError):
        status["nope"]
