"""Past ``max_parked_calls`` a new legacy pause does not hold a connection: a call of a tool that may safely run
twice (trusted read-only or idempotent) is cancelled on the server and re-issued on resume (the durable path), so
many paused threads can't exhaust the HTTP pool (issue 10 item 2). Any other tool's pause past the cap is an error
(``tests/calls/test_parked_cap_side_effects.py``)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

from langgraph_mcp.connection.legacy_calls import DoneEvent
from langgraph_mcp.errors import CallNotSentError
from langgraph_mcp.examples.demo_server import (
    EVENTS_FILE_ENV,
    AcceptedElicitation,
    DemoServer,
    TripDate,
    build_server,
)
from langgraph_mcp.servers.mcp_servers import server_access
from langgraph_mcp.transports.http import HTTP_POOL_HEADROOM
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers, http_demo_server
from tests.support.node_support import (
    TOMORROW,
    accept_all,
    call,
    one_turn_graph,
    start,
    text_of,
    tool_messages,
)

pytestmark = pytest.mark.anyio


def replayable_server() -> DemoServer:
    """The demo server plus ``book_trip_again``: ``book_trip_legacy`` declared idempotent (booking the same trip
    twice books it once), so a pause past the cap may be cancelled and replayed."""
    server = build_server()

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
    )
    async def book_trip_again(destination: str, ctx: Context) -> str:
        """Book a trip asking via ctx.elicit (idempotent)."""
        server.events.record("book_trip_again", "enter")
        result = await ctx.elicit(f"When do you want to travel to {destination}?", TripDate)
        if not isinstance(result, AcceptedElicitation):
            return f"Not booked ({result.action})"
        server.events.record("book_trip_again", "commit", destination=destination)
        return f"Booked {destination} on {result.data.date.isoformat()}"

    return server


def thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


async def test_a_legacy_pause_past_max_parked_calls_is_cancelled_and_replayed_on_resume(
    open_servers: OpenServers,
) -> None:
    demo = replayable_server()
    url = await open_servers.enter(http_demo_server(demo))
    servers = open_servers(
        {"demo": {"url": url, "mode": "legacy", "max_parked_calls": 1, "tool_timeout": 10}}
    )
    graphs = {
        name: one_turn_graph(servers, [call("demo_book_trip_again", "c1", destination=name)], StrictSaver())
        for name in ("Rome", "Oslo")
    }
    pending = {}
    for name, graph in graphs.items():
        out = await graph.ainvoke(start(), thread(name))
        (pending[name],) = out["__interrupt__"]
    assert (
        server_access(servers).connections.paused_rounds("demo").open_legacy_calls() == 1
    )  # only the first call is kept open

    for name, graph in graphs.items():
        out = await graph.ainvoke(Command(resume={pending[name].id: accept_all(pending[name])}), thread(name))
        message = tool_messages(out)["c1"]
        assert message.status == "success", text_of(message)
        assert text_of(message) == f"Booked {name} on {TOMORROW}"
    counts = demo.events.snapshot()
    assert counts["book_trip_again.commit"] == 2  # each trip booked once
    assert counts["book_trip_again.enter"] == 3  # the call past the cap ran its pre-question work twice


POOLS = [
    # The default pool (max_parked_calls + HTTP_POOL_HEADROOM connections), more threads than it holds.
    pytest.param({}, 4 + HTTP_POOL_HEADROOM + 24, id="default-pool"),
    pytest.param({"max_connections": 8}, 20, id="max_connections=8"),
]


@pytest.mark.parametrize(("options", "threads"), POOLS)
async def test_more_legacy_pauses_than_http_connections_all_pause_then_resume_with_their_own_answers(
    open_servers: OpenServers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, int],
    threads: int,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    """Every call past ``max_parked_calls`` holds its POST until its cancellation is sent, which needs a pooled
    connection of its own: with more threads than connections, none were left and every later call hung."""
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv(EVENTS_FILE_ENV, str(events))
    demo = replayable_server()
    url = await open_servers.enter(http_demo_server(demo))
    spec = {"url": url, "mode": "legacy", "max_parked_calls": 4, "tool_timeout": 20, **options}
    servers = open_servers({"demo": spec})
    saver = checkpointer
    trips = {f"t{i}": (f"City{i}", f"2027-{i % 12 + 1:02d}-{i % 28 + 1:02d}") for i in range(threads)}
    graphs = {
        name: one_turn_graph(servers, [call("demo_book_trip_again", "c1", destination=city)], saver)
        for name, (city, _) in trips.items()
    }

    async def pause(name: str) -> Any:
        out = await graphs[name].ainvoke(start(), thread(name))
        assert "__interrupt__" in out, (name, text_of(tool_messages(out)["c1"]))
        [interrupt] = out["__interrupt__"]
        return interrupt

    async def resume(name: str) -> Any:
        interrupt = pending[name]
        answer = {"action": "accept", "content": {"date": trips[name][1]}}
        value = {key: answer for key in interrupt.value["requests"]}
        return await graphs[name].ainvoke(Command(resume={interrupt.id: value}), thread(name))

    with anyio.fail_after(60):  # a bound, not a timing: the calls hung forever before
        pending = dict(zip(trips, await asyncio.gather(*map(pause, trips)), strict=True))
        assert len({i.id for i in pending.values()}) == threads
        parked = server_access(servers).connections.paused_rounds("demo").open_legacy_calls()
        assert parked == 4
        assert demo.events.counts["book_trip_again.commit"] == 0
        finished = dict(zip(trips, await asyncio.gather(*map(resume, trips)), strict=True))

    for name, (city, date) in trips.items():
        out = finished[name]
        assert "__interrupt__" not in out, name
        message = tool_messages(out)["c1"]
        assert (message.status, text_of(message)) == ("success", f"Booked {city} on {date}"), name
    recorded = [json.loads(line) for line in events.read_text().splitlines()]
    committed = Counter(e["destination"] for e in recorded if e["event"] == "commit")
    assert committed == Counter(city for city, _ in trips.values())  # each trip booked once, none lost
    # Only the calls past the cap were replayed on resume: their pre-question work ran twice.
    replayed = threads - parked
    assert demo.events.counts["book_trip_again.enter"] == threads + replayed
    assert demo.events.counts["book_trip_again.request"] == threads + replayed


async def test_a_legacy_call_that_gets_no_http_connection_within_tool_timeout_is_not_sent(
    open_servers: OpenServers,
) -> None:
    """``max_connections=3`` leaves one connection for legacy calls: while it is held, the next call waits within
    its ``tool_timeout`` and then fails unsent, naming the settings to change, instead of hanging."""
    demo = build_server()
    url = await open_servers.enter(http_demo_server(demo))
    servers = open_servers({"demo": {"url": url, "mode": "legacy", "max_connections": 3, "tool_timeout": 1}})
    conn = server_access(servers).connections.connection("demo")
    await conn.owner.client()
    # Nobody waits for this call's events, so its own tool_timeout never ends it: it holds the slot.
    holder = await conn.legacy.start_call("sleep", {"seconds": 30})
    try:
        with anyio.fail_after(20), pytest.raises(CallNotSentError) as raised:
            await conn.legacy.start_call("echo", {"text": "hi"})
        assert "max_connections" in str(raised.value) and "max_parked_calls" in str(raised.value)
        assert "not sent" in str(raised.value)
        assert "echo.request" not in demo.events.counts  # the server never saw it
    finally:
        await holder.abandon()
    # The slot is free again: the next call is sent and answered.
    with anyio.fail_after(20):
        handle = await conn.legacy.start_call("echo", {"text": "again"})
        event = await handle.next_event(10)
    assert isinstance(event, DoneEvent) and not event.result.is_error
