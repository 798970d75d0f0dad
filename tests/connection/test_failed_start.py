"""A failed connection start releases everything it took (issue 10 item 2): no task, pipe, server process or
legacy turn is left behind, and the next call after the server is back works.

The server is a real stdio subprocess: a script that first exits at start (or never answers the handshake), then
is replaced by the demo server.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import anyio
import pytest

from langgraph_mcp import ServerConnectionError
from langgraph_mcp.errors import ServerDiscoveryError
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import OpenServers, child_pids

pytestmark = pytest.mark.anyio

FAILING = {
    "exits": "import sys\nsys.exit('refusing to start: no licence')\n",
    "never_answers": "import sys\nfor line in sys.stdin:\n    pass\n",  # reads the handshake, answers nothing
}
DEMO = (
    "import runpy, sys\n"
    "sys.argv = ['demo_server', 'stdio']\n"
    "runpy.run_module('langgraph_mcp.examples.demo_server', run_name='__main__')\n"
)


CONNECT_TIMEOUT = 5


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def other_tasks(baseline: set[asyncio.Task[object]]) -> list[str]:
    current = asyncio.current_task()
    return [t.get_name() for t in asyncio.all_tasks() - baseline if t is not current and not t.done()]


@pytest.mark.parametrize("failure", sorted(FAILING))
async def test_a_failed_start_leaves_nothing_behind_and_the_server_works_once_back(
    open_servers: OpenServers, tmp_path: Path, failure: str
) -> None:
    script = tmp_path / "server.py"
    script.write_text(FAILING[failure])
    servers = open_servers(
        {
            "s": {
                "command": sys.executable,
                "args": [str(script)],
                "mode": "legacy",
                "exclusive_tools": "all",  # every call takes the connection's single turn
                # Room for the demo server to start on a loaded machine once it is back (a 1 s bound flaked).
                "connect_timeout": CONNECT_TIMEOUT,
                "reconnect_backoff": 0.05,
            }
        }
    )
    conn = server_access(servers).connections.connection("s")
    tasks, fds = set(asyncio.all_tasks()), open_fds()

    async def attempt() -> BaseException | None:
        try:
            await servers.list_tools()
        except (ServerDiscoveryError, ServerConnectionError) as exc:
            return exc
        return None

    with anyio.fail_after(30):  # a bound, not a timing: a start that held on to something would hang here
        errors = await asyncio.gather(attempt(), attempt(), attempt())
    assert all(isinstance(e, ServerDiscoveryError | ServerConnectionError) for e in errors), errors
    if failure == "exits":
        assert any("refusing to start: no licence" in str(e) for e in errors)
    else:
        assert any(f"did not connect within {CONNECT_TIMEOUT}s" in str(e) for e in errors)

    assert child_pids() == set()  # the server process was stopped (and reaped)
    assert other_tasks(tasks) == []  # no owner task, no transport reader/writer
    assert open_fds() == fds  # no pipe to the dead server
    assert conn.router.in_flight == 0 and not conn.owner.alive

    script.write_text(DEMO)  # the server is back
    with anyio.fail_after(30):
        # A server that never came up is retried after its backoff: a timer (the behaviour), slept out exactly.
        while (remaining := conn.owner.backoff.wait_remaining()) > 0:
            await asyncio.sleep(remaining)
        result = await servers.call_tool("s_echo", {"text": "back"})
    assert not result.is_error and "back" in str(result.content)
    assert conn.owner.alive and conn.router.in_flight == 0
