"""The call target (``calls/call.py``): the tool node asks the servers layer once per call for it (``ServerAccess.target``);
it carries the listing its tool was found in and holds the call back once that listing is dropped or replaced."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.calls.driver import run_call
from langgraph_mcp.errors import ServersClosedError, ToolChangedError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.access import ServerAccess
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
    async with access.target("demo_add") as (resolution, judged):
        assert judged is not None and judged.checked and judged.tool is resolution.tool()
        assert judged.listed_now() and judged.listing is access.listings.cached("demo")

    await servers.list_tools(
        ["demo"], cache_mode="refresh"
    )  # a newer listing replaces the one it was judged on
    assert not judged.listed_now()
    with pytest.raises(ToolChangedError, match="not what the server lists now"):
        await run_call(judged, {"a": 1, "b": 2}, tool_call_id="c1", asker=None)
    assert demo.events.snapshot().get("add.request", 0) == 0  # nothing was sent

    async with access.target("demo_add") as (_, again):
        assert again is not None
        result = await run_call(again, {"a": 1, "b": 2}, tool_call_id="c2", asker=None)
    assert not result.is_error and demo.events.snapshot()["add.request"] == 1

    access.listings.invalidate("demo")  # the server said its tools changed
    assert not again.listed_now()
    unchecked = access.call_target(again.tool)  # McpServers.call_tool and LangChain tools: not held back
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


async def test_a_fixed_credential_target_is_kept_only_while_its_listing_holds(open_servers: Any) -> None:
    demo = build_server()
    servers = open_servers({"demo": in_process(demo, "modern")})
    access = server_access(servers)
    async with access.target("demo_add") as (_, first):
        assert first is not None
    async with access.target("demo_add") as (_, same):
        assert same is first  # nothing changed: the same target
    assert not access.call_target(first.tool).checked  # an unchecked one is its own

    access.listings.invalidate("demo")  # the listing it was found in is dropped: the name is listed again
    async with access.target("demo_add") as (_, newer):
        assert newer is not None and newer is not first
    assert newer.listed_now() and newer.listing is access.listings.cached("demo")
    assert not first.listed_now()  # the old target still holds its call back

    await servers.aclose()
    with pytest.raises(ServersClosedError):
        async with access.target("demo_add"):
            pass


async def test_a_name_no_server_publishes_has_no_target(open_servers: Any) -> None:
    servers = open_servers({"demo": in_process(build_server(), "modern")})
    async with server_access(servers).target("demo_no_such_tool") as (resolution, target):
        assert target is None and not resolution.tools and not resolution.unknown


async def test_the_tool_node_asks_the_servers_layer_once_per_call(
    open_servers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One question per call (``ServerAccess.target``): the tool, its target, its identity and its freshness; the
    key decisions are verified with is the approval side's."""
    demo = build_server()
    servers = open_servers({"demo": in_process(demo, "modern")})
    asked: list[str] = []
    for name, member in vars(ServerAccess).items():
        if callable(member) and not name.startswith("__"):

            def counted(*args: Any, __name: str = name, __member: Any = member, **kwargs: Any) -> Any:
                asked.append(__name)
                return __member(*args, **kwargs)

            monkeypatch.setattr(ServerAccess, name, counted)
    graph = one_turn_graph(
        servers, [call("demo_add", "c1", a=1, b=2)], None, policy=ApprovalPolicy(tools={"*": "allow"})
    )
    out = await graph.ainvoke(start())
    assert tool_messages(out)["c1"].status != "error"
    assert asked.count("target") == 1
    assert {name for name in asked if not name.startswith("_")} == {"target"}
    assert demo.events.snapshot()["add.request"] == 1
