"""Faults that used to abort, hang or mislead (issue 10 items 1, 4-6, 10-13), each against a real server.

Servers: the demo server over streamable HTTP (uvicorn on 127.0.0.1, behind an ASGI wrapper that cuts chosen
responses mid-body, or stopped and started again on the same port), as a stdio subprocess, and the hand-written
stdio servers in ``tests/support/servers/``. Every process a test starts, the test stops.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from mcp.server.mcpserver import MCPServer

from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, ServerConnectionError
from langgraph_mcp.errors import (
    CallInterruptedError,
    InvalidResponseError,
    ResultTooLargeError,
    ServerDiscoveryError,
    ToolOwnerUnknownError,
)
from langgraph_mcp.examples.demo_server import build_server, http_app
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.checkpointers import StrictSaver
from tests.support.faults import (
    CutResponses,
    GarbleResponses,
    calls_tool,
    faulty_server_spec,
    lists_tools,
    serve_on_port,
)
from tests.support.helpers import ERAS, OpenServers, child_pids, free_port, serve_asgi, stdio_demo_spec

pytestmark = pytest.mark.anyio
T = TypeVar("T")

FAST = {"connect_timeout": 5, "tool_timeout": 10, "reconnect_backoff": 0.05}

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""These tests are about transport faults, not approvals: the tool node runs every call unasked."""


async def settle(awaitable: Awaitable[T]) -> T:
    """Await a call; a raw ``CancelledError`` escaping it fails the test (and cannot end the test silently)."""
    try:
        return await awaitable
    except asyncio.CancelledError as exc:
        pytest.fail(f"a raw CancelledError escaped instead of an error: {exc!r}")


def one_call_graph(servers: McpServers, name: str, args: dict[str, Any]) -> Any:
    """START → tools (McpToolNode) → after (records that the graph went on) → END, with a checkpointer."""

    def after(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="the graph went on")]}

    graph = StateGraph(MessagesState)
    graph.add_node("tools", McpToolNode(servers, policy=NO_APPROVALS))
    graph.add_node("after", after)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", "after")
    graph.add_edge("after", END)
    compiled = graph.compile(checkpointer=StrictSaver())
    call = AIMessage(content="", tool_calls=[{"id": "c1", "name": name, "args": args}])
    return compiled, {"messages": [call]}


# ------------------------------------------------------------------------- 1. a response cut mid-body (HTTP)


@pytest.mark.parametrize("era", ERAS)
async def test_cut_response_of_a_read_only_call_is_retried_and_succeeds(
    open_servers: OpenServers, era: str
) -> None:
    app = CutResponses(http_app(), calls_tool("get_forecast"), limit=1)
    base = await open_servers.enter(serve_asgi(app))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **FAST}})
    result = await settle(servers.call_tool("demo_get_forecast", {"city": "Oslo", "days": 1}))
    assert result.structured_content is not None and result.structured_content["city"] == "Oslo"
    assert app.cut == 1
    assert app.seen.count("tools/call") == 2  # the cut attempt and its retry


@pytest.mark.parametrize("era", ERAS)
async def test_cut_response_of_a_non_idempotent_call_says_it_may_have_run(
    open_servers: OpenServers, era: str
) -> None:
    server = build_server()
    app = CutResponses(http_app(server), calls_tool("echo"))
    base = await open_servers.enter(serve_asgi(app))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **FAST}})
    with pytest.raises(CallInterruptedError) as caught:
        await settle(servers.call_tool("demo_echo", {"text": "hello"}))
    assert (caught.value.server, caught.value.tool) == ("demo", "echo")
    assert "may or may not have run" in str(caught.value)
    assert server.events.snapshot()["echo.enter"] == 1  # it did run once, and was not repeated
    # The connection recovers for the next call.
    assert (await settle(servers.call_tool("demo_add", {"a": 1, "b": 1}))).structured_content == {"result": 2}


@pytest.mark.parametrize("era", ERAS)
async def test_cut_response_in_a_graph_is_an_error_tool_message_and_the_graph_continues(
    open_servers: OpenServers, era: str
) -> None:
    app = CutResponses(http_app(), calls_tool("echo"))
    base = await open_servers.enter(serve_asgi(app))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **FAST}})
    graph, state = one_call_graph(servers, "demo_echo", {"text": "hi"})
    out = await settle(graph.ainvoke(state, {"configurable": {"thread_id": f"cut-{era}"}}))
    message = out["messages"][1]
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert "may or may not have run" in str(message.content)
    assert out["messages"][-1].content == "the graph went on"


@pytest.mark.parametrize("era", ERAS)
async def test_cut_tools_list_is_retried_then_reported_as_a_discovery_error(
    open_servers: OpenServers, era: str
) -> None:
    once = CutResponses(http_app(), lists_tools, limit=1)
    base = await open_servers.enter(serve_asgi(once))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **FAST}})
    assert any(t.name == "add" for t in await settle(servers.list_tools()))
    assert once.cut == 1

    always = CutResponses(http_app(), lists_tools)
    base = await open_servers.enter(serve_asgi(always))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **FAST}})
    with pytest.raises(ServerDiscoveryError) as caught:
        await settle(servers.list_tools())
    assert caught.value.server == "demo"
    assert "connection lost during tools/list" in caught.value.detail


# ------------------------------------------------------------------------- 4. legacy session lost (server restart)


async def test_legacy_http_server_restarted_between_calls_reinitializes_the_session(
    open_servers: OpenServers,
) -> None:
    port = free_port()
    servers = open_servers({"demo": {"url": f"http://127.0.0.1:{port}/mcp", "mode": "legacy", **FAST}})
    async with serve_on_port(http_app(), port):
        assert (await settle(servers.call_tool("demo_add", {"a": 1, "b": 1}))).structured_content == {
            "result": 2
        }
    async with serve_on_port(http_app(), port):
        # A safe call meets the stale session: the session is re-initialized and the call retried.
        assert (await settle(servers.call_tool("demo_add", {"a": 2, "b": 2}))).structured_content == {
            "result": 4
        }
    restarted = build_server()
    async with serve_on_port(http_app(restarted), port):
        # A non-idempotent call meets the stale session: the server refused it unrun (404), so it is sent
        # again on the re-initialized session and runs exactly once.
        assert (await settle(servers.call_tool("demo_echo", {"text": "x"}))).content[0].text == "x"  # type: ignore[union-attr]
        assert restarted.events.snapshot()["echo.enter"] == 1
        assert restarted.events.snapshot()["echo.request"] == 1  # the stale attempt never reached a tool
    assert server_access(servers).connections.connection("demo").owner.starts == 3


# ------------------------------------------------------------------------- 5. large results


@pytest.mark.parametrize("era", ERAS)
async def test_results_over_one_mebibyte_arrive_over_http(open_servers: OpenServers, era: str) -> None:
    text = "x" * (3 * 1024 * 1024)
    base = await open_servers.enter(serve_asgi(http_app()))
    servers = open_servers({"demo": {"url": f"{base}/mcp", "mode": era, **FAST}})
    result = await settle(servers.call_tool("demo_echo", {"text": text}))
    assert len(result.content[0].text) == len(text)  # type: ignore[union-attr]
    assert server_access(servers).connections.connection("demo").owner.starts == 1


async def test_legacy_result_past_max_result_bytes_is_a_clear_error_without_reconnects(
    open_servers: OpenServers,
) -> None:
    base = await open_servers.enter(serve_asgi(http_app()))
    servers = open_servers(
        {"demo": {"url": f"{base}/mcp", "mode": "legacy", "max_result_bytes": 1_000_000, **FAST}}
    )
    with pytest.raises(ResultTooLargeError) as caught:
        await settle(servers.call_tool("demo_echo", {"text": "x" * 2_000_000}))
    assert "result too large" in str(caught.value)
    assert "limit 1000000; raise `max_result_bytes`" in str(caught.value)
    assert server_access(servers).connections.connection("demo").owner.starts == 1
    assert (await settle(servers.call_tool("demo_add", {"a": 1, "b": 1}))).structured_content == {"result": 2}
    assert server_access(servers).connections.connection("demo").owner.starts == 1


@pytest.mark.parametrize("era", ERAS)
async def test_results_over_one_mebibyte_arrive_over_stdio(
    open_servers: OpenServers, era: str, tmp_path: Path
) -> None:
    servers = open_servers({"demo": stdio_demo_spec(mode=era, **FAST)})
    result = await settle(servers.call_tool("demo_echo", {"text": "y" * (3 * 1024 * 1024)}))
    assert len(result.content[0].text) == 3 * 1024 * 1024  # type: ignore[union-attr]


# ------------------------------------------------------------------------- 6. stray stdout line


async def test_a_log_line_on_stdout_during_tools_list_does_not_lose_the_request(
    open_servers: OpenServers,
) -> None:
    servers = open_servers({"faulty": faulty_server_spec("late_banner", **FAST)})
    assert [t.published_name for t in await settle(servers.list_tools())] == ["faulty_ping"]
    assert (await settle(servers.call_tool("faulty_ping", {}))).content[0].text == "pong"  # type: ignore[union-attr]
    await servers.aclose()
    assert child_pids() == set()


# ------------------------------------------------------------------------- 10-13. errors that mislead


def dies_at_start() -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-c", "import module_that_does_not_exist_xyz"], **FAST}


async def test_a_tool_of_a_server_that_failed_says_the_server_is_unavailable_and_why(
    open_servers: OpenServers,
) -> None:
    servers = open_servers(
        {"broken": dies_at_start(), "demo": {"transport": "in_process", "server": build_server()}},
        on_connection_error="ignore",
    )
    with pytest.raises(ToolOwnerUnknownError) as caught:
        await settle(servers.get_tool("broken_anything"))
    text = str(caught.value)
    assert "'broken'" in text and "could not be listed" in text
    assert "ModuleNotFoundError: No module named 'module_that_does_not_exist_xyz'" in text  # and why
    assert "No MCP tool is published" not in text

    graph, state = one_call_graph(servers, "broken_anything", {})
    out = await settle(graph.ainvoke(state, {"configurable": {"thread_id": "unavailable"}}))
    assert "module_that_does_not_exist_xyz" in str(out["messages"][1].content)
    assert out["messages"][-1].content == "the graph went on"
    # Another server's tools are unaffected.
    assert (await settle(servers.call_tool("demo_add", {"a": 1, "b": 1}))).structured_content == {"result": 2}


async def test_an_unparseable_tools_call_answer_fails_at_once(open_servers: OpenServers) -> None:
    servers = open_servers(
        {"faulty": faulty_server_spec("garbage_call", connect_timeout=5, tool_timeout=120)}
    )
    await settle(servers.list_tools())
    with anyio.fail_after(20):  # far below tool_timeout: the call must not wait it out
        with pytest.raises(InvalidResponseError) as caught:
            await settle(servers.call_tool("faulty_ping", {}))
    assert "the server sent an invalid response" in str(caught.value)
    assert "tool_timeout" not in str(caught.value)


async def test_an_unparseable_http_answer_fails_at_once_as_an_invalid_response(
    open_servers: OpenServers,
) -> None:
    app = GarbleResponses(http_app(), calls_tool("echo"))
    base = await open_servers.enter(serve_asgi(app))
    servers = open_servers(
        {"demo": {"url": f"{base}/mcp", "mode": "modern", "connect_timeout": 5, "tool_timeout": 120}}
    )
    with anyio.fail_after(20):  # far below tool_timeout: the call must not wait it out
        with pytest.raises(InvalidResponseError) as caught:
            await settle(servers.call_tool("demo_echo", {"text": "x"}))
    assert "the server sent an invalid response" in str(caught.value)
    assert app.garbled == 1
    assert (await settle(servers.call_tool("demo_add", {"a": 1, "b": 1}))).structured_content == {"result": 2}


@pytest.mark.parametrize("mode", ["endless_pages", "same_cursor"])
async def test_endless_pagination_is_capped_with_a_clear_error(open_servers: OpenServers, mode: str) -> None:
    servers = open_servers({"faulty": faulty_server_spec(mode, max_list_pages=5, **FAST)})
    with pytest.raises(ServerDiscoveryError) as caught:
        await settle(servers.list_tools())
    assert "nextCursor never ends" in str(caught.value)
    assert "prefix" not in str(caught.value)  # not reported as a name collision


async def test_a_stdio_server_that_exits_at_start_shows_its_command_and_stderr(
    open_servers: OpenServers,
) -> None:
    servers = open_servers({"broken": dies_at_start()})
    with pytest.raises(ServerConnectionError) as caught:
        await settle(servers.list_tools())
    text = str(caught.value)
    assert f"{sys.executable} -c 'import module_that_does_not_exist_xyz'" in text
    assert "ModuleNotFoundError: No module named 'module_that_does_not_exist_xyz'" in text
    assert child_pids() == set()


async def test_waiting_for_an_owner_does_not_swallow_the_callers_cancellation(
    open_servers: OpenServers,
) -> None:
    # The owner cannot finish stopping while the in-process server's teardown is held (shielded) until the test
    # releases it: close() is certainly still waiting for the owner when the test cancels the caller.
    torn_down, release = asyncio.Event(), asyncio.Event()

    @asynccontextmanager
    async def held_teardown(_: MCPServer) -> AsyncIterator[None]:
        yield
        torn_down.set()
        with anyio.CancelScope(shield=True):
            await release.wait()

    server = MCPServer("held", lifespan=held_teardown)

    @server.tool()
    def echo(text: str) -> str:
        return text

    servers = open_servers({"held": {"transport": "in_process", "server": server, **FAST}})
    await settle(servers.list_tools())
    conn = server_access(servers).connections.connection("held")
    try:
        conn.owner.mark_dead(ServerConnectionError("held", "test"))
        waiter = asyncio.ensure_future(conn.owner.close())
        async with asyncio.timeout(10):
            # The owner is stopping, held in the server's teardown; close() waits for it.
            await torn_down.wait()
        assert conn.owner.closed and not waiter.done()
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert waiter.cancelled()
    finally:
        release.set()
        await conn.owner.wait_stopped()
    assert conn.owner.current is None
