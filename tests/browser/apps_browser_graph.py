"""The graph ``tests/browser/test_apps_in_agent_chat_ui.py`` serves with ``langgraph dev``: the apps demo graph
(:func:`langgraph_mcp.examples.apps_graph.build_apps_graph`, Agent Chat UI mode) over the demo server on stdio with
``apps: true``, which appends each event to ``$LGMCP_BROWSER_DEMO_EVENTS`` (its own record of what ran)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph_sdk.runtime import ServerRuntime

from langgraph_mcp.examples.apps_graph import build_apps_graph
from langgraph_mcp.servers.mcp_servers import McpServers

APPS_GRAPH_ID = "mcp_apps"
DEMO_EVENTS_ENV = "LGMCP_BROWSER_DEMO_EVENTS"
GRAPHS = {APPS_GRAPH_ID: "./tests/browser/apps_browser_graph.py:make_apps_graph"}


@asynccontextmanager
async def make_apps_graph(
    runtime: ServerRuntime[Any],
) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    env = {"DEMO_EVENTS_FILE": os.environ.get(DEMO_EVENTS_ENV, os.devnull)}
    config = {
        "demo": {
            "command": sys.executable,
            "args": ["-m", "langgraph_mcp.examples.demo_server", "stdio"],
            "env": env,
            "apps": True,
        }
    }
    servers = McpServers(config)
    try:
        yield build_apps_graph(servers)
    finally:
        await servers.aclose()
