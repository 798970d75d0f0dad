"""The one :class:`~langgraph_mcp.McpServers` of the Studio graphs (:mod:`langgraph_mcp.examples.studio`).

It has a module of its own, imported by its package name, because langgraph-api loads the file a
``langgraph.json`` graph path names (``./langgraph_mcp/examples/studio.py:make_graph``) anew for every graph id:
an ``McpServers`` at that file's module scope would exist once per graph, and start one server per graph. A
module imported by name exists once per process, so every run of every graph shares this one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langgraph_mcp.examples.demo_graph import demo_server_config
from langgraph_mcp.examples.demo_state import EVENTS_FILE_ENV
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = ["SERVERS"]


def _config() -> dict[str, Any]:
    config = demo_server_config()
    # The demo server runs the same langgraph_mcp as this process (a checkout served with PYTHONPATH, not only
    # whatever copy is installed): the SDK starts stdio servers with a minimal environment.
    package_root = str(Path(__file__).resolve().parents[2])
    paths = [package_root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    if events := os.environ.get(EVENTS_FILE_ENV):  # the demo server's own record, where this process says
        env[EVENTS_FILE_ENV] = events
    config["demo"]["env"] = env
    return config


SERVERS = McpServers(_config())
"""Shared by every run of this process (both graphs): the demo server over stdio, started on first use, one
connection per event loop. Runs share the server's state too (its file workspace). When ``DEMO_EVENTS_FILE`` is
set in this process, the demo server logs every tool run there (with its pid)."""
