"""The LangGraph Studio / ``langgraph dev`` graph factory for the demo agent (``langgraph.json`` points here).

::

    {"dependencies": ["."], "graphs": {"mcp_agent": "./langgraph_mcp/examples/studio.py:make_graph"}}

The graph is :func:`langgraph_mcp.examples.demo_graph.build_graph` (scripted model → approval gate → one ``Send``
per call → :class:`~langgraph_mcp.McpToolNode` → model) over the bundled demo server, started as a stdio
subprocess. Three rules of the LangGraph API server shape this module:

* **No checkpointer.** ``langgraph dev`` refuses a graph compiled with its own checkpointer or store; it brings
  its own, which is what makes the ``mcp_approval`` and ``mcp_elicitation`` pauses resumable from Studio.
* **The servers belong to the process, the graph to the run.** The server calls the factory for every run *and*
  for schema reads, state reads and state updates, always expecting the same topology. One
  :class:`~langgraph_mcp.McpServers`, :data:`SERVERS`, is shared by every run of both graphs. It lives in
  :mod:`~langgraph_mcp.examples.studio_servers`, a module imported by name, because langgraph-api loads this
  file anew per graph id. It starts a connection lazily, one per event loop, so building a graph never touches
  the server: the demo server starts when the first run's first node lists or calls tools and then serves every
  later run of this process (a factory that built its own ``McpServers`` would start a stdio server per run: 10
  runs took 10-12 s that way against 1.2-1.4 s shared). The graph itself is built per run (cheap, below).
  Contexts that only read (``runtime.execution_runtime is None``) never start it. The server leaves with the
  API process (its stdin closes).
* **Loading the graph is cheap.** The server times every factory call and warns above 100 ms ("Slow graph
  load"). Nothing here lists tools or opens a connection at load; building the graph (two small compiles)
  takes ~2 ms warm and ~11 ms for the very first call of a process on a loaded CI machine (measured
  in-process), so a warning there comes from the server's own load (startup, blockbuster, a busy event loop),
  not from this factory. Reads (``execution_runtime is None``: schema, graph drawing, state reads and updates,
  which Studio makes often) reuse one graph built on first use and never start a server.
* **No blocking calls in the event loop.** The server raises ``BlockingError`` (blockbuster) for e.g.
  ``time.sleep`` or blocking socket I/O inside async code. Everything here is async or pure; the stdio
  stderr pump of the connection runs in its own thread.

The factory takes ``runtime: ServerRuntime`` (``langgraph_sdk.runtime``), the form langgraph-api recognises by
annotation and calls as an async context manager (verified against langgraph-api 0.16.7).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph_sdk.runtime import ServerRuntime

from langgraph_mcp.examples.demo_graph import build_graph
from langgraph_mcp.examples.scripted_model import ScriptedChatModel
from langgraph_mcp.examples.studio_servers import SERVERS
from langgraph_mcp.policy.policy import ApprovalPolicy

__all__ = ["CHAT_GRAPH_ID", "CHAT_TOOL_CALLS", "GRAPH_ID", "SERVERS", "make_chat_graph", "make_graph"]

GRAPH_ID = "mcp_agent"
"""The graph's id in the repository's ``langgraph.json`` (the ``assistant_id`` to run it with)."""

CHAT_GRAPH_ID = "mcp_agent_chat"
"""The Agent Chat UI variant's id in ``langgraph.json``: the same agent in Agent Chat UI mode (``agent_chat_ui=True``)."""

CHAT_TOOL_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("list_files", {}),
    ("delete_file", {"path": "todo.txt"}),
    ("register", {}),
    ("pay_deposit", {"amount": 20}),
)
"""What the chat variant's scripted model proposes: a read-only call, a destructive call the gate asks about,
a call whose server asks for a form with text, number, boolean, choice and date fields, and one whose server asks
the user to visit a payment page (a URL card)."""


_READ_GRAPHS: dict[bool, CompiledStateGraph[Any, Any, Any, Any]] = {}
"""The graphs served to read-only contexts (by ``agent_chat_ui``), built once (their servers are never started)."""


@asynccontextmanager
async def make_graph(runtime: ServerRuntime[Any]) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    """Yield the demo graph, compiled without a checkpointer.

    For a run (``runtime.execution_runtime`` set): a graph built for this run over :data:`SERVERS`, whose demo
    server starts on the first run's first use and serves every later run. For schema and state reads: the one
    read graph, built on first use; nothing is started.
    """
    async with _graph(runtime, agent_chat_ui=False) as graph:
        yield graph


@asynccontextmanager
async def make_chat_graph(
    runtime: ServerRuntime[Any],
) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    """Yield the demo agent in Agent Chat UI mode (``agent_chat_ui=True``), as :func:`make_graph` does otherwise.

    Point Agent Chat UI at ``langgraph dev`` with assistant ``mcp_agent_chat``: every pause is one
    ``HITLRequest`` card, resumed with a bare ``{"decisions": [...]}``.
    """
    async with _graph(runtime, agent_chat_ui=True) as graph:
        yield graph


def _model(agent_chat_ui: bool) -> ScriptedChatModel:
    return ScriptedChatModel(tool_calls=list(CHAT_TOOL_CALLS)) if agent_chat_ui else ScriptedChatModel()


@asynccontextmanager
async def _graph(
    runtime: ServerRuntime[Any], *, agent_chat_ui: bool
) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    if runtime.execution_runtime is None:
        if agent_chat_ui not in _READ_GRAPHS:
            _READ_GRAPHS[agent_chat_ui] = _build(agent_chat_ui)
        yield _READ_GRAPHS[agent_chat_ui]
        return
    yield _build(agent_chat_ui)


def _build(agent_chat_ui: bool) -> CompiledStateGraph[Any, Any, Any, Any]:
    return build_graph(
        SERVERS, policy=ApprovalPolicy(), model=_model(agent_chat_ui), agent_chat_ui=agent_chat_ui
    )
