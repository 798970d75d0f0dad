"""Past ``max_parked_calls`` a new legacy pause does not hold a connection: its call is cancelled on the server and
re-issued on resume (the durable path), so many paused threads can't exhaust the HTTP pool (issue 10 item 2)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import McpServers
from langgraph_mcp.examples.demo_server import build_server
from tests.helpers import http_demo_server
from tests.node_support import TOMORROW, accept_all, call, one_turn_graph, start, text_of, tool_messages

pytestmark = pytest.mark.anyio


def thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


async def test_a_legacy_pause_past_max_parked_calls_is_cancelled_and_replayed_on_resume() -> None:
    demo = build_server()
    async with http_demo_server(demo) as url:
        servers = McpServers(
            {"demo": {"url": url, "mode": "legacy", "max_parked_calls": 1, "tool_timeout": 10}}
        )
        try:
            graphs = {
                name: one_turn_graph(
                    servers, [call("demo_book_trip_legacy", "c1", destination=name)], InMemorySaver()
                )
                for name in ("Rome", "Oslo")
            }
            pending = {}
            for name, graph in graphs.items():
                out = await graph.ainvoke(start(), thread(name))
                (pending[name],) = out["__interrupt__"]
            assert servers.paused_rounds("demo").open_legacy_calls() == 1  # only the first call is kept open

            for name, graph in graphs.items():
                out = await graph.ainvoke(
                    Command(resume={pending[name].id: accept_all(pending[name])}), thread(name)
                )
                message = tool_messages(out)["c1"]
                assert message.status == "success", text_of(message)
                assert text_of(message) == f"Booked {name} on {TOMORROW}"
            counts = demo.events.snapshot()
            assert counts["book_trip_legacy.commit"] == 2  # each trip booked once
            assert (
                counts["book_trip_legacy.enter"] == 3
            )  # the call past the cap ran its pre-question work twice
        finally:
            await servers.aclose()
