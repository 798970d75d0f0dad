"""The call target (``calls/target.py``): resolved once, it holds a tool node's call back once the listing the call
was judged on is dropped or replaced, and an interceptor's header override goes to the target for those headers."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.calls.driver import run_call
from langgraph_mcp.errors import ServersClosedError, ToolChangedError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import ERAS
from tests.support.node_support import call, in_process, one_turn_graph, start, tool_messages

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("era", ERAS)
async def test_a_checked_target_is_not_sent_once_its_listing_is_dropped_or_replaced(
    era: str, open_servers: Any
) -> None:
    demo = build_server()
    servers = open_servers({"demo": in_process(demo, era)})
    access = server_access(servers)
    tool = (await access.resolve_tool("demo_add")).tool()
    judged = access.call_target(tool, checked=True)
    assert judged.listed_now() and judged.listing is not None

    await servers.list_tools(
        ["demo"], cache_mode="refresh"
    )  # a newer listing replaces the one it was judged on
    assert not judged.listed_now()
    with pytest.raises(ToolChangedError, match="not what the server lists now"):
        await run_call(judged, {"a": 1, "b": 2}, tool_call_id="c1", asker=None)
    assert demo.events.snapshot().get("add.request", 0) == 0  # nothing was sent

    again = access.call_target((await access.resolve_tool("demo_add")).tool(), checked=True)
    result = await run_call(again, {"a": 1, "b": 2}, tool_call_id="c2", asker=None)
    assert not result.is_error and demo.events.snapshot()["add.request"] == 1

    access.listings.invalidate("demo")  # the server said its tools changed
    assert not again.listed_now()
    unchecked = access.call_target(tool)  # McpServers.call_tool and LangChain tools: not held back
    assert unchecked.listed_now()
    assert not (await run_call(unchecked, {"a": 2, "b": 2}, tool_call_id="", asker=None)).is_error


@pytest.mark.parametrize("era", ERAS)
async def test_the_tool_node_proves_again_when_the_listing_is_dropped_under_its_call(
    era: str, open_servers: Any
) -> None:
    """An interceptor drops the listing once, after the proof and before the send: the node proves the call again
    on a new listing and sends it once."""
    demo = build_server()
    attempts: list[bool] = []

    async def drop_once(request: Any, handler: Any) -> Any:
        if not attempts:
            server_access(servers).listings.invalidate("demo")
        attempts.append(True)
        return await handler(request)

    servers = open_servers({"demo": in_process(demo, era)}, interceptors=[drop_once])
    graph = one_turn_graph(
        servers, [call("demo_add", "c1", a=1, b=2)], None, policy=ApprovalPolicy(tools={"*": "allow"})
    )
    out = await graph.ainvoke(start())
    message = tool_messages(out)["c1"]
    assert message.status != "error", message.content
    assert len(attempts) == 2  # held back once (nothing sent), then proven on the new listing and sent
    assert demo.events.snapshot()["add.request"] == 1


async def test_a_fixed_credential_target_is_kept_only_while_the_listing_cache_is_unchanged(
    open_servers: Any,
) -> None:
    demo = build_server()
    servers = open_servers({"demo": in_process(demo, "modern")})
    access = server_access(servers)
    tool = (await access.resolve_tool("demo_add")).tool()
    first = access.call_target(tool, checked=True)
    assert access.call_target(tool, checked=True) is first  # nothing changed: the same target
    assert not access.call_target(tool).checked  # an unchecked one is its own

    access.listings.invalidate("demo")  # the listing it was resolved from is dropped
    dropped = access.call_target(tool, checked=True)
    assert dropped is not first and dropped.listing is None and not dropped.listed_now()

    relisted = (await access.resolve_tool("demo_add")).tool()
    newer = access.call_target(relisted, checked=True)
    assert newer.listed_now() and newer.listing is access.listings.cached("demo")
    assert not first.listed_now()  # the old target still holds its call back

    await servers.aclose()
    with pytest.raises(ServersClosedError):
        access.call_target(relisted, checked=True)
