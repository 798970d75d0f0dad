"""A legacy call runs in a task of its own, in a fresh context: a parked call keeps nothing of its caller's context
alive (which would pin the whole paused graph run), yet the caller's trace context still goes out with the call.

Real servers: the demo server in-process (legacy era), plus one tool that reports the ``traceparent`` it received.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import weakref

import mcp.types as types
import pytest
from mcp.server.mcpserver import Context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from langgraph_mcp.connection.legacy_calls import CallHandle, DoneEvent, ElicitEvent
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import OpenServers

_CALLERS_STATE: contextvars.ContextVar[object] = contextvars.ContextVar("callers_state")


class RunState:
    """Stands for what a graph run keeps in its context (pregel loop, scratchpad, callbacks)."""


def tracing_server() -> DemoServer:
    srv = build_server()

    @srv.tool(name="traceparent")
    def traceparent(ctx: Context) -> str:
        meta = ctx.request_context.meta or {}
        return str(meta.get("traceparent", "none"))

    return srv


@pytest.mark.anyio
async def test_a_parked_legacy_call_keeps_nothing_of_its_callers_context_alive(
    open_servers: OpenServers,
) -> None:
    servers = open_servers({"demo": {"transport": "in_process", "server": build_server(), "mode": "legacy"}})
    conn = server_access(servers).connections.connection("demo")

    async def caller() -> tuple[CallHandle, weakref.ref[RunState]]:
        state = RunState()
        _CALLERS_STATE.set(state)  # only the caller's context holds it
        handle = await conn.legacy.start_call("book_trip", {"destination": "Oslo"})
        assert isinstance(await handle.next_event(10), ElicitEvent)  # parked inside its question
        return handle, weakref.ref(state)

    handle, state = await asyncio.create_task(caller(), context=contextvars.Context())
    # The session answers meanwhile (and the finished caller task is let go of by the loop's resuming handle).
    await conn.request(lambda client: client.session.send_ping(), timeout=10)
    gc.collect()
    # Old code: the call ran as an owner job in a copy of the caller's context, and the owner task (started by
    # this first call) in another copy: both kept RunState alive.
    assert state() is None

    handle.reply(types.ElicitResult(action="accept", content={"date": "2027-01-02"}))
    done = await handle.next_event(10)
    assert isinstance(done, DoneEvent) and isinstance(done.result, types.CallToolResult)
    assert "Booked Oslo on 2027-01-02" in done.result.content[0].text  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_legacy_call_sends_its_callers_trace_context(open_servers: OpenServers) -> None:
    servers = open_servers(
        {"demo": {"transport": "in_process", "server": tracing_server(), "mode": "legacy"}}
    )
    await servers.list_tools()
    trace_id = 0x0AF7651916CD43DD8448EB211C80319C
    span = NonRecordingSpan(
        SpanContext(trace_id=trace_id, span_id=0x00F067AA0BA902B7, is_remote=False, trace_flags=TraceFlags(1))
    )
    with trace.use_span(span):
        result = await servers.call_tool("demo_traceparent")
    sent = result.content[0].text  # type: ignore[union-attr]
    assert sent.split("-")[1] == f"{trace_id:032x}", sent


@pytest.mark.anyio
@pytest.mark.parametrize("asks", [False, True], ids=["answers-at-once", "asks-first"])
async def test_a_finished_legacy_call_is_freed_at_once_not_by_the_cycle_collector(
    open_servers: OpenServers, asks: bool
) -> None:
    # A call's handle is freed by reference counting once the call is over: nothing of it waits for the cycle
    # collector (a cycle per call is garbage the collector must find, on every call, in a heap as big as langgraph's).
    servers = open_servers({"demo": {"transport": "in_process", "server": build_server(), "mode": "legacy"}})
    conn = server_access(servers).connections.connection("demo")
    await servers.list_tools()
    handles: list[weakref.ref[CallHandle]] = []

    async def one_call() -> None:
        if asks:
            handle = await conn.legacy.start_call("book_trip", {"destination": "Oslo"})
            question = await handle.next_event(10)
            assert isinstance(question, ElicitEvent)
            handle.reply(types.ElicitResult(action="accept", content={"date": "2027-01-02"}))
        else:
            handle = await conn.legacy.start_call("add", {"a": 1, "b": 2})
        done = await handle.next_event(10)
        assert isinstance(done, DoneEvent) and isinstance(done.result, types.CallToolResult)
        handles.append(weakref.ref(handle))

    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            await one_call()
        # Let the finished call tasks go (the loop drops a task once its last step has run).
        await conn.request(lambda client: client.session.send_ping(), timeout=10)
        alive = [ref for ref in handles if ref() is not None]
    finally:
        gc.enable()
    assert handles and not alive, f"{len(alive)} of {len(handles)} finished calls are kept only by a cycle"
