"""MCP Apps in a graph: a call to a tool with a ``ui://`` resource brings its app along (see :mod:`langgraph_mcp.payloads.apps`).

For a server configured with ``apps: true``, :class:`~langgraph_mcp.McpToolNode` reads the tool's UI resource
through :meth:`McpServers.read_resource` (cached as every resource read is: while the server's ``ttlMs`` allows) and
gives the call's ToolMessage an ``mcp_app`` artifact entry (:class:`~langgraph_mcp.payloads.apps.McpApp`: the HTML, the
resource's ``_meta.ui``, the call's input and result). The ToolMessage's content stays what the model reads. The
node then pushes the same app as a LangGraph generative UI message named ``mcp_app`` (``push_ui_message``), tied to
the AIMessage that made the call, so any LangGraph UI (Agent Chat UI's ``LoadExternalComponent``) can render it.
The UI message lives in the state's ``ui`` key: build the graph on :class:`McpAppsState` (``MessagesState`` has no
such key; without one the UI message is still streamed, but not kept).

An app that cannot be read (the server fails the read, or serves something that is not
``text/html;profile=mcp-app``) costs the app, never the call's result: the ToolMessage is returned as it is.

**Calls an app makes.** A host (the Agent Chat UI component) sends an app's ``tools/call`` to the thread as a new run
whose input is an ``AIMessage`` holding that one tool call, marked ``additional_kwargs["mcp_app"]`` (which server's
app, which ``ui://`` resource, which call showed it: :class:`~langgraph_mcp.payloads.apps.AppOrigin`). The graph
starts with the same ``route_through_gate`` edge the model's calls take (``otherwise="agent"``): a run whose input
ends with unanswered calls goes to the tool node or the gate exactly as the model's would, so the same gate and the
same tool-node proof judge it; there is no other way in, and a run without such calls goes to the model::

    to_gate = route_through_gate(servers, policy, otherwise="agent")
    builder.add_conditional_edges(START, to_gate, ["agent", "approval_gate", "tools"])
    builder.add_conditional_edges("agent", route_through_gate(servers, policy), ["approval_gate", "tools", END])
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", AppTurnDone("agent"), ["agent", END])
 The mark is client-written, like all run input: it is shown (in the message's text), and used for
one thing only, where the run goes *after* the call (:class:`AppTurnDone`: back to the app, not to the model). It
never decides whether a call runs: the gate and the node do not read it, so a forged mark gets what the policy gives
any call.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Annotated, Any, cast

import mcp.types as types
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.constants import END
from langgraph.graph import MessagesState
from langgraph.graph.ui import AnyUIMessage, push_ui_message, ui_message_reducer

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.graph.messages import last_ai_message, messages_of
from langgraph_mcp.graph.routing import ToolCallsDone
from langgraph_mcp.payloads import APP_COMPONENT, APP_MIME_TYPE, AppOrigin, McpApp, app_origin, resource_ui
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = [
    "APP_ORIGIN_KEY",
    "AppTurnDone",
    "McpAppsState",
    "app_call_origin",
    "app_of",
    "attach_app",
    "push_apps",
    "read_app",
]

APP_ORIGIN_KEY = "mcp_app"
"""The ``AIMessage.additional_kwargs`` key a host marks an app-made call with (an :class:`AppOrigin`)."""

logger = logging.getLogger("langgraph_mcp.apps")


class McpAppsState(MessagesState):
    """``MessagesState`` plus ``ui``: the generative UI messages (``mcp_app`` among them), merged by LangGraph's
    ``ui_message_reducer`` — the state Agent Chat UI reads ``values.ui`` from."""

    ui: Annotated[Sequence[AnyUIMessage], ui_message_reducer]


async def read_app(
    servers: McpServers,
    tool: McpTool,
    *,
    tool_call_id: str,
    arguments: dict[str, Any],
    result: types.CallToolResult,
) -> McpApp | None:
    """The app of a call to ``tool``, or ``None``: its server is not configured with ``apps``, the tool names no
    ``ui://`` resource, or the resource can't be read as ``text/html;profile=mcp-app`` (logged)."""
    ui = tool.ui
    uri = ui["resourceUri"] if ui is not None else None
    if uri is None or not getattr(servers.spec(tool.server), "apps", False):
        return None
    try:
        blobs = await servers.read_resource(tool.server, uri)
    except Exception as exc:  # the call ran: its result is kept, only the app is lost
        logger.warning(
            "MCP server %r: could not read the app %s of tool %r: %s", tool.server, uri, tool.name, exc
        )
        return None
    try:
        listed = await servers.list_tools([tool.server], include_app_only=True)
    except Exception as exc:
        logger.warning("MCP server %r: could not list the tools of the app %s: %s", tool.server, uri, exc)
        return None
    app_tools = {t.name: t.published_name for t in listed if t.server == tool.server and t.for_app}
    for blob in blobs:
        metadata = blob.metadata or {}
        if metadata.get("uri") != uri or blob.mimetype != APP_MIME_TYPE or not isinstance(blob.data, str):
            continue
        return {
            "type": "mcp_app",
            "server": tool.server,
            "tool": tool.name,
            "published_name": tool.published_name,
            "tool_call_id": tool_call_id,
            "resource_uri": uri,
            "mime_type": APP_MIME_TYPE,
            "html": blob.data,
            "ui": resource_ui(metadata.get("meta")),
            "tool_input": dict(arguments),
            "tool_result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
            "app_tools": app_tools,
        }
    logger.warning(
        "MCP server %r: the app %s of tool %r is not served as %s; it is not shown",
        tool.server,
        uri,
        tool.name,
        APP_MIME_TYPE,
    )
    return None


def attach_app(message: ToolMessage, app: McpApp) -> ToolMessage:
    """``message`` with ``app`` as the last entry of its artifact (the content, what the model reads, unchanged)."""
    artifact = message.artifact if isinstance(message.artifact, list) else []
    return message.model_copy(update={"artifact": [*artifact, dict(app)]})


def app_of(message: Any) -> McpApp | None:
    """The ``mcp_app`` entry of a ToolMessage's artifact, or ``None``."""
    artifact = getattr(message, "artifact", None)
    if not isinstance(artifact, list):
        return None
    for entry in artifact:
        if isinstance(entry, dict) and entry.get("type") == "mcp_app":
            return cast(McpApp, entry)
    return None


def push_apps(messages: Sequence[ToolMessage], ai: AIMessage | None, *, state_key: str | None = "ui") -> None:
    """Push one ``mcp_app`` UI message per app among ``messages``, tied to ``ai`` (the AIMessage whose calls they
    answer), with a stable id per call (``mcp_app:<tool_call_id>``), so a node that runs again replaces it."""
    for message in messages:
        app = app_of(message)
        if app is None:
            continue
        try:
            push_ui_message(
                APP_COMPONENT,
                dict(app),
                id=f"mcp_app:{message.tool_call_id}",
                message=ai,
                state_key=state_key,
                metadata={"tool_call_id": message.tool_call_id, "server": app["server"]},
            )
        except RuntimeError:  # outside a graph run: the artifact is all there is
            return


def app_call_origin(message: AnyMessage | None) -> AppOrigin | None:
    """The origin mark of an app-made call's ``AIMessage`` (shown, never trusted), or ``None``."""
    if not isinstance(message, AIMessage):
        return None
    return app_origin(message.additional_kwargs.get(APP_ORIGIN_KEY))


class AppTurnDone:
    """The conditional edge after the tool node: like :class:`~langgraph_mcp.ToolCallsDone` (on once every call
    of the turn has its ToolMessage), but a turn an app made ends the run (``END``): the app gets its result, and
    the model is not woken by a button. Where the run goes is all the mark decides."""

    def __init__(self, next: str = "agent", *, messages_key: str = "messages") -> None:
        self.next = next
        self.messages_key = messages_key
        self._done = ToolCallsDone(next, messages_key=messages_key)
        """When the turn is over: exactly as the plain edge decides it."""

    def __call__(self, state: Any) -> list[str]:
        if not self._done(state):
            return []
        messages = messages_of(state, self.messages_key)
        return [END] if app_call_origin(last_ai_message(messages)) is not None else [self.next]
