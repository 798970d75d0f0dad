"""MCP Tasks is advertised only to a server that offers it: over HTTP a first client discovers without the
extension, and only a server whose capabilities list it gets a client that advertises it — adopting that discovery
(no second ``server/discover``). Real servers on 127.0.0.1: the ``fastmcp-tasks`` server (offers it) and the demo
server (doesn't); what each received is read off the wire by an ``httpx2.Auth`` that sees every request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from langgraph_mcp.connection.tasks import TASKS_EXTENSION
from tests.support.helpers import OpenServers, http_demo_server
from tests.support.tasks_support import TasksServer, tasks_server, wait_listening
from tests.support.wire import SeenOnTheWire

pytestmark = pytest.mark.anyio


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[TasksServer]:
    with tasks_server(tmp_path) as running:
        await wait_listening(running)
        running.release()
        yield running


async def test_a_server_that_offers_tasks_hears_of_the_extension_only_after_its_discovery(
    server: TasksServer, open_servers: OpenServers
) -> None:
    wire = SeenOnTheWire()
    servers = open_servers({"tasks": server.spec(auth=wire)})
    result = await servers.call_tool("tasks_quick", {"label": "x"})
    assert not result.is_error
    assert wire.advertised("server/discover") == [[]]  # discovered once, advertising nothing
    assert wire.advertised("tools/call") == [[TASKS_EXTENSION]]
    assert [e["background"] for e in server.recorded("quick", "start")] == [True]  # it ran as a task


async def test_a_server_that_does_not_offer_tasks_never_hears_of_the_extension(
    open_servers: OpenServers,
) -> None:
    url = await open_servers.enter(http_demo_server())
    wire = SeenOnTheWire()
    servers = open_servers({"demo": {"url": url, "mode": "modern", "auth": wire}})
    assert (await servers.call_tool("demo_add", {"a": 1, "b": 2})).structured_content == {"result": 3}
    assert wire.advertised("server/discover") == [[]]
    assert wire.sent and all(extensions == [] for _, extensions in wire.sent), wire.sent
