"""A stdio server that answers ``tools/call`` with a JSON line nested beyond the parser's depth: the call fails at
once with an error saying the server's answer could not be read, in both eras (issue 23 item 4). A modern call
waited its whole ``tool_timeout`` for an answer that had already arrived and been dropped by the SDK."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from langgraph_mcp.errors import InvalidResponseError
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import ERAS, OpenServers

pytestmark = pytest.mark.anyio

DEEP_SERVER = Path(__file__).parents[1] / "support" / "servers" / "deep_answer_server.py"
TOOL_TIMEOUT = 300.0
"""Far beyond the hang guard below: a call that waits for its timeout fails the test instead."""


@pytest.mark.parametrize("era", ERAS)
async def test_an_answer_nested_beyond_the_parsers_depth_fails_the_call_at_once(
    open_servers: OpenServers, era: str
) -> None:
    spec = {
        "command": sys.executable,
        "args": [str(DEEP_SERVER), era],
        "mode": era,
        "tool_timeout": TOOL_TIMEOUT,
        "connect_timeout": 30,
    }
    servers = open_servers({"deep": spec})
    assert (await servers.call_tool("deep_ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
    assert server_access(servers).connections.connection("deep").owner.is_legacy == (era == "legacy")
    with anyio.fail_after(60), pytest.raises(InvalidResponseError) as raised:  # a hang guard, not a timing
        await servers.call_tool("deep_deep", {})
    assert "could not be read" in str(raised.value) or "cannot parse" in str(raised.value), raised.value
    # The connection serves the next call.
    with anyio.fail_after(60):
        assert (await servers.call_tool("deep_ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
