"""``async with McpServers(config)`` where one server's headers hold ``${configurable:NAME}`` (issue 23 item 6):
entering lists every server it can list outside a run and leaves the per-run one alone; that one is listed per
identity on its first use inside a run, in both eras. Entering raised ``CredentialError``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage

from langgraph_mcp import McpServers
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import ERAS, OpenServers, serve_asgi
from tests.support.node_support import call, in_process, one_turn_graph
from tests.support.servers.identity_server import build_identity_server

pytestmark = pytest.mark.anyio

TOKEN_HEADERS = {"Authorization": "Bearer ${configurable:token}"}


def run(token: str, n: int) -> Any:
    return {"configurable": {"thread_id": f"t-{token}-{n}", "token": token}}


@pytest.mark.parametrize("era", ERAS)
async def test_async_with_lists_what_it_can_and_per_run_servers_per_identity_on_first_use(
    open_servers: OpenServers, era: str
) -> None:
    ident, record = build_identity_server()
    base = await open_servers.enter(serve_asgi(ident.streamable_http_app()))
    config = {
        "demo": in_process(build_server(), era),
        "ident": {"url": f"{base}/mcp", "mode": era, "headers": TOKEN_HEADERS},
    }
    async with McpServers(config) as servers:
        listed = {tool.published_name for tool in servers.cached_tools()}
        assert "demo_add" in listed  # entering listed the server it could list
        assert not any(name.startswith("ident_") for name in listed)  # and not the per-run one
        assert server_access(servers).connections.live_identities("ident") == 0

        graph = one_turn_graph(servers, [call("ident_whoami", "c1", run="r")], None)
        outs = await asyncio.gather(
            *(
                graph.ainvoke({"messages": [HumanMessage("who?")]}, run(token, n))
                for token in ("ann", "bo")
                for n in range(2)
            )
        )
        for out in outs:
            message = out["messages"][-1]
            assert isinstance(message, ToolMessage) and message.status == "success", message.content
        assert (
            sorted(c["authorization"] for c in record.of("whoami")) == ["Bearer ann"] * 2 + ["Bearer bo"] * 2
        )
        assert (
            server_access(servers).connections.live_identities("ident") == 2
        )  # listed and called once per identity

        # A run lists the per-run server with its own credentials, next to the servers listed on entry.
        mine = await servers.list_tools(config=run("ann", 9))
        assert {"demo_add", "ident_whoami"} <= {tool.published_name for tool in mine}
