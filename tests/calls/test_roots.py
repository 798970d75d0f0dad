"""Roots: a relative path in the ``roots`` option is answered as the same absolute ``file://`` URI in both eras."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import ListRoots, Resolve
from mcp.types import ListRootsResult

from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import OpenServers

pytestmark = pytest.mark.anyio


def get_roots() -> ListRoots:
    return ListRoots()


def roots_server() -> MCPServer:
    server = MCPServer("roots")

    @server.tool()
    def where(roots: Annotated[ListRootsResult, Resolve(get_roots)]) -> list[str]:
        """The root URIs the client offered."""
        return [str(root.uri) for root in roots.roots]

    return server


@pytest.mark.parametrize("mode", ["modern", "legacy"])
async def test_relative_and_uri_roots_are_answered_the_same_in_both_eras(
    mode: str, open_servers: OpenServers
) -> None:
    spec = {
        "transport": "in_process",
        "server": roots_server(),
        "mode": mode,
        "roots": ["data", "file:///srv/x"],
    }
    servers = open_servers({"r": spec})
    assert server_access(servers).connections.connection("r").owner.protocol_version is None
    result = await servers.call_tool("r_where", {})
    assert result.structured_content == {"result": [(Path("data").resolve()).as_uri(), "file:///srv/x"]}
    assert servers.server_status("r")["era"] == mode
