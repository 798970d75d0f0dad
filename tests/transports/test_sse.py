"""The legacy HTTP+SSE transport: catalog, calls and a paused elicitation, against the demo server under uvicorn."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import OpenServers, serve_asgi
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


@pytest.mark.parametrize(("mode", "era"), [("modern", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_sse_server_lists_calls_and_pauses_on_a_question(
    open_servers: OpenServers, mode: str, era: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    base = await open_servers.enter(serve_asgi(srv.sse_app()))
    url = f"{base}/sse"
    servers = open_servers({"demo": {"url": url, "mode": mode}})  # a URL ending in /sse means SSE
    assert servers.config.servers["demo"].transport == "sse"
    tools = {t.published_name: t for t in await servers.list_tools()}
    assert tools["demo_delete_file"].declared_hints["destructiveHint"] is True
    assert server_access(servers).connections.connection("demo").owner.protocol_version == era
    result = await servers.call_tool("demo_add", {"a": 20, "b": 22})
    assert result.structured_content == {"result": 42}

    graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], checkpointer)
    cfg: Any = {"configurable": {"thread_id": "sse"}}
    out = await graph.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), cfg)
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    assert srv.events.counts["book_trip.commit"] == 1
