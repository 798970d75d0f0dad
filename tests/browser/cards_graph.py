"""The graphs ``tests/browser/test_new_cards.py`` serves with ``langgraph dev``, both in Agent Chat UI mode.

* ``cards_remember``: on every human turn the scripted agent proposes the same destructive call
  (``demo_delete_file`` on ``todo.txt``), which the default policy asks about; the demo server appends each event
  to ``$LGMCP_BROWSER_DEMO_EVENTS`` (its own record of what ran, one JSON line per event).
* ``cards_chat``: the Agent Chat UI demo agent (``langgraph.json``'s ``mcp_agent_chat``: a read-only call, an
  approval, a form and a URL card on every turn), its demo server recording to ``$LGMCP_BROWSER_DEMO_EVENTS``.
* ``cards_review``: on every human turn the agent calls ``notes_summarize``, whose server asks the client's model
  for a completion (the offline ``ScriptedSamplingModel``, ``sampling_policy="allow"``) that a person reviews
  (``review_completion=True``) before it goes back; the server appends every completion it received to
  ``$LGMCP_BROWSER_SAMPLING_SEEN``.

Like :mod:`langgraph_mcp.examples.studio`: no checkpointer (the server brings its own, and its store), and the
servers are started lazily by a run and closed when the server leaves the factory's context.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph_sdk.runtime import ServerRuntime

from langgraph_mcp.examples.demo_graph import build_graph
from langgraph_mcp.examples.scripted_model import ScriptedChatModel, ScriptedSamplingModel
from langgraph_mcp.examples.studio import CHAT_TOOL_CALLS
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.servers.mcp_servers import McpServers

REMEMBER_GRAPH_ID = "cards_remember"
REVIEW_GRAPH_ID = "cards_review"
CHAT_GRAPH_ID = "cards_chat"
DEMO_EVENTS_ENV = "LGMCP_BROWSER_DEMO_EVENTS"
SAMPLING_SEEN_ENV = "LGMCP_BROWSER_SAMPLING_SEEN"
GRAPHS = {
    REMEMBER_GRAPH_ID: "./tests/browser/cards_graph.py:make_remember_graph",
    REVIEW_GRAPH_ID: "./tests/browser/cards_graph.py:make_review_graph",
    CHAT_GRAPH_ID: "./tests/browser/cards_graph.py:make_chat_graph",
}
"""``langgraph.json``'s ``graphs`` for these two (paths relative to the repository)."""

SUMMARIZED = "the meeting notes"
"""What the review graph's agent asks the server to summarize."""

_SAMPLING_SERVER = Path(__file__).resolve().parents[1] / "support" / "servers" / "sampling_server.py"
Graph = CompiledStateGraph[Any, Any, Any, Any]


@asynccontextmanager
async def _served(servers: McpServers, graph: Graph) -> AsyncIterator[Graph]:
    try:
        yield graph
    finally:
        await servers.aclose()


@asynccontextmanager
async def make_remember_graph(runtime: ServerRuntime[Any]) -> AsyncIterator[Graph]:
    """The agent proposing ``demo_delete_file(todo.txt)`` each turn, the default policy asking about it."""
    env = {"DEMO_EVENTS_FILE": os.environ.get(DEMO_EVENTS_ENV, os.devnull)}
    command = [sys.executable, "-m", "langgraph_mcp.examples.demo_server", "stdio"]
    servers = McpServers({"demo": {"command": command[0], "args": command[1:], "env": env}})
    model = ScriptedChatModel(tool_calls=[("delete_file", {"path": "todo.txt"})])
    graph = build_graph(servers, policy=ApprovalPolicy(), model=model, agent_chat_ui=True)
    async with _served(servers, graph) as served:
        yield served


@asynccontextmanager
async def make_review_graph(runtime: ServerRuntime[Any]) -> AsyncIterator[Graph]:
    """The agent calling ``notes_summarize`` each turn; the model's completion is reviewed before it goes back."""
    config = {
        "notes": {
            "command": sys.executable,
            "args": [str(_SAMPLING_SERVER)],
            "env": {"SAMPLING_SEEN_FILE": os.environ.get(SAMPLING_SEEN_ENV, os.devnull)},
            "sampling_model": ScriptedSamplingModel(),
            "sampling_policy": "allow",
            "review_completion": True,
        }
    }
    servers = McpServers({"mcpServers": config})
    model = ScriptedChatModel(tool_calls=[("summarize", {"text": SUMMARIZED})], prefix="notes_")
    # The server's tools are unannotated: allowed here (this graph is about the completion, not the call).
    policy = ApprovalPolicy(tools={"*": "allow"})
    graph = build_graph(servers, policy=policy, model=model, agent_chat_ui=True)
    async with _served(servers, graph) as served:
        yield served


@asynccontextmanager
async def make_chat_graph(runtime: ServerRuntime[Any]) -> AsyncIterator[Graph]:
    """The Agent Chat UI demo agent (an approval, a form and a URL card per turn), the demo server recording what
    it ran in ``$LGMCP_BROWSER_DEMO_EVENTS``."""
    env = {"DEMO_EVENTS_FILE": os.environ.get(DEMO_EVENTS_ENV, os.devnull)}
    command = [sys.executable, "-m", "langgraph_mcp.examples.demo_server", "stdio"]
    servers = McpServers({"demo": {"command": command[0], "args": command[1:], "env": env}})
    model = ScriptedChatModel(tool_calls=list(CHAT_TOOL_CALLS))
    graph = build_graph(servers, policy=ApprovalPolicy(), model=model, agent_chat_ui=True)
    async with _served(servers, graph) as served:
        yield served
