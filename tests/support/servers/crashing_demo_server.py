"""The demo server plus tools that kill their own process, for transport-failure and restart tests.

A public example server should not exit when a model calls it, so these live here, not in
``langgraph_mcp.examples.demo_server``. Everything else is the demo server (same tools, events, request keys):

* ``crash(mode="always")`` — no annotations (so not retry-safe): exits the process at once.
* ``flaky_read(marker)`` — read-only: exits on the first call (creating file ``marker``), succeeds once it exists.
* ``flaky_delete(marker)`` — destructive: the same, and records ``commit`` when it succeeds.

Run it over stdio with ``python tests/support/servers/crashing_demo_server.py`` (``DEMO_EVENTS_FILE`` and
``DEMO_SERVER_NAME`` work as for the demo server), or build one in-process with :func:`build_crashing_server`.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from langgraph_mcp.examples.demo_server import DEFAULT_NAME, NAME_ENV, DemoServer, build_server

SCRIPT = Path(__file__).resolve()


def build_crashing_server(name: str = DEFAULT_NAME) -> DemoServer:
    """A fresh demo server with the three process-killing tools added."""
    srv = build_server(name)
    rec = srv.events.record

    @srv.tool()
    def crash(mode: str = "always") -> str:
        """Kill the server process immediately (transport-failure tests). Only mode "always" exists."""
        rec("crash", "enter", mode=mode)
        if mode != "always":
            raise ToolError(f"unknown crash mode: {mode!r}")
        os._exit(1)

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def flaky_read(marker: str) -> str:
        """Read-only: crash the process on the first call (creating file `marker`), succeed once it exists."""
        rec("flaky_read", "enter", marker=marker)
        path = Path(marker)
        if not path.exists():
            path.touch()
            os._exit(1)
        return "ok after restart"

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False))
    def flaky_delete(marker: str) -> str:
        """Destructive: crash the process on the first call (creating `marker`), succeed once it exists."""
        rec("flaky_delete", "enter", marker=marker)
        path = Path(marker)
        if not path.exists():
            path.touch()
            os._exit(1)
        rec("flaky_delete", "commit", marker=marker)
        return "deleted after restart"

    return srv


if __name__ == "__main__":
    build_crashing_server(os.environ.get(NAME_ENV, DEFAULT_NAME)).run("stdio")
