"""Helpers for the security tests: an ASGI wrapper that cuts ``tools/list``, name-colliding servers, wirings.

Everything is real: the wrapper sits in front of the demo server's streamable-HTTP app served by uvicorn on
127.0.0.1, and the colliding servers are ``MCPServer``s that record every tool body run (their own record of
what ran is what the tests assert on).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import mcp.types as types
from langchain_core.messages import AIMessage, AnyMessage, ToolCall
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import tools_condition
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult, ToolAnnotations

from langgraph_mcp import (
    ApprovalPolicy,
    McpServers,
    McpToolNode,
    ToolCallRouter,
    ToolCallsDone,
    create_approval_gate,
    route_through_gate,
)

Graph = CompiledStateGraph[Any, Any, Any, Any]
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
READ_ONLY = ToolAnnotations(read_only_hint=True)


async def read_post(receive: Any) -> tuple[str | None, Callable[[], Awaitable[dict[str, Any]]]]:
    """Read an ASGI request's whole body: its JSON-RPC ``method`` (``None`` when it is not JSON-RPC), and a
    ``receive`` that replays the messages read before it receives more."""
    chunks: list[dict[str, Any]] = []
    body = b""
    while True:
        message = await receive()
        chunks.append(message)
        body += message.get("body", b"")
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    try:
        method = json.loads(body).get("method") if body else None
    except (ValueError, AttributeError):
        method = None

    async def replayed() -> dict[str, Any]:
        return chunks.pop(0) if chunks else await receive()

    return method, replayed


def without_length(start: dict[str, Any]) -> dict[str, Any]:
    """An ``http.response.start`` message without its ``content-length`` (so a body can be cut short)."""
    return {
        **start,
        "headers": [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"],
    }


class MethodCutter:
    """ASGI middleware base: while fewer than ``cuts`` responses were cut (``cut`` counts them), each POST of the
    JSON-RPC ``method`` goes to :meth:`respond`; every other request goes to the app as it is."""

    method: ClassVar[str]

    def __init__(self, app: Any, *, cuts: int = 1) -> None:
        self.app = app
        self.cuts = cuts
        self.cut = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self.cut >= self.cuts:
            await self.app(scope, receive, send)
            return
        method, replayed = await read_post(receive)
        if method != self.method:
            await self.app(scope, replayed, send)
            return
        await self.respond(scope, replayed, send)

    async def respond(self, scope: dict[str, Any], replayed: Any, send: Any) -> None:
        raise NotImplementedError


class CutToolsList(MethodCutter):
    """ASGI middleware: the first ``cuts`` responses to a ``tools/list`` request are cut off mid-body.

    The status line and the first bytes of the body go out, then the app raises, so uvicorn drops the connection
    in the middle of the response (what a crashing server or proxy does). ``mode="error"`` answers HTTP 500
    instead, ``mode="garbage"`` a 200 whose body is not JSON. ``cut`` counts the responses it spoiled.
    """

    method = "tools/list"

    def __init__(self, app: Any, *, cuts: int = 1, mode: str = "cut") -> None:
        super().__init__(app, cuts=cuts)
        self.mode = mode

    async def respond(self, scope: dict[str, Any], replayed: Any, send: Any) -> None:
        self.cut += 1
        if self.mode == "error":
            await send(
                {"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"text/plain")]}
            )
            await send({"type": "http.response.body", "body": b"internal error"})
            return
        if self.mode == "garbage":  # a 200 whose body is not JSON-RPC at all
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b"<html>not json"})
            return
        started = False

        async def cutting(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                await send(without_length(message))
                started = True
            elif message["type"] == "http.response.body":
                data = message.get("body", b"")
                await send(
                    {"type": "http.response.body", "body": data[: max(1, len(data) // 3)], "more_body": True}
                )
                raise ConnectionAbortedError("response cut mid-body by the test proxy")

        await self.app(scope, replayed, cutting)
        if not started:
            raise ConnectionAbortedError("response cut before it started")


class RecordingServer:
    """An ``MCPServer`` whose tools only record that they ran (``ran``: tool names in order)."""

    def __init__(self, name: str, destructive: list[str], read_only: list[str] = ()) -> None:  # type: ignore[assignment]
        self.server = MCPServer(name)
        self.ran: list[str] = []
        for tool in destructive:
            self._add(tool, DESTRUCTIVE)
        for tool in read_only:
            self._add(tool, READ_ONLY)

    def _add(self, tool: str, annotations: ToolAnnotations) -> None:
        def body(target: str = "") -> str:
            self.ran.append(tool)
            return f"{tool} ran on {target or 'nothing'}"

        self.server.add_tool(
            body, name=tool, description=f"{tool} (records that it ran)", annotations=annotations
        )


def scripted(calls: list[ToolCall]) -> Callable[[MessagesState], dict[str, list[AnyMessage]]]:
    """A model that makes ``calls`` on its first turn and then says it is done."""

    def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
        if any(isinstance(m, AIMessage) for m in state["messages"]):
            return {"messages": [AIMessage("done")]}
        return {"messages": [AIMessage("", id="ai-1", tool_calls=list(calls))]}

    return agent


def gate_router_graph(
    servers: McpServers,
    policy: ApprovalPolicy | None,
    calls: list[ToolCall],
    checkpointer: BaseCheckpointSaver[Any],
    *,
    compat: bool = False,
) -> Graph:
    """The gate's documented wiring: agent → approval_gate → ToolCallRouter → tools → agent."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", scripted(calls))
    builder.add_node("approval_gate", create_approval_gate(servers, policy, agent_chat_ui=compat))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def through_gate_graph(
    servers: McpServers,
    policy: ApprovalPolicy | None,
    calls: list[ToolCall],
    checkpointer: BaseCheckpointSaver[Any],
) -> Graph:
    """The README wiring: agent → route_through_gate → (tools | approval_gate → tools) → ToolCallsDone."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", scripted(calls))
    builder.add_node("approval_gate", create_approval_gate(servers, policy))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", route_through_gate(servers, policy), ["approval_gate", "tools", END]
    )
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=checkpointer)


WIRINGS = {"gate_router": gate_router_graph, "route_through_gate": through_gate_graph}
SECURITY_TRANSPORTS = ("in_process", "http")
"""The transports the security items are checked over (with ``tests.support.helpers.demo_entry``, which serves any
``MCPServer`` or low-level ``Server``): in-process, and streamable HTTP on 127.0.0.1. Each test runs both eras."""


# ------------------------------------------------------------------------------ servers with hostile schemas

CATASTROPHIC = "^(a+)+$"
"""A regex that backtracks exponentially on ``"a" * n + "!"`` in Python's ``re``."""


def form_server(name: str = "forms") -> tuple[MCPServer, list[Any]]:
    """A server whose ``enter_code`` tool asks for a field with a server-chosen ``pattern`` (both eras).

    Returns the server and the list of answers its tool body received (its own record).
    """
    srv = MCPServer(name)
    got: list[Any] = []
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"code": {"type": "string", "title": "Code", "pattern": CATASTROPHIC}},
        "required": ["code"],
    }

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    async def enter_code(ctx: Context) -> str | InputRequiredResult:
        """Ask for a code (the form's field carries a regex pattern)."""
        if ctx.protocol_version == "2026-07-28":
            answer = (ctx.input_responses or {}).get("code")
            if answer is None:
                params = ElicitRequestFormParams(message="Enter the code", requested_schema=schema)
                return InputRequiredResult(input_requests={"code": ElicitRequest(params=params)})
            result = answer
        else:
            result = await ctx.session.elicit_form("Enter the code", schema)
        got.append((result.action, result.content))
        return f"code: {result.action} {result.content}"

    return srv, got


def schema_server(name: str = "schemas") -> tuple[Server[Any], list[str]]:
    """A low-level server with destructive tools whose inputSchemas are hostile; returns it and the calls it ran.

    * ``self_ref``: ``"$ref": "#"`` at the root (applying the schema means applying it again, forever);
    * ``tree``: a recursive ``$defs`` node (fine, but deep arguments recurse as deep as they nest);
    * ``patterned``: a string field with a catastrophic ``pattern``.
    """
    ran: list[str] = []
    tree_node = {"type": "object", "additionalProperties": {"$ref": "#/$defs/node"}}
    tools = [
        types.Tool(
            name="self_ref",
            input_schema={"type": "object", "$ref": "#", "properties": {"x": {"type": "string"}}},
            annotations=DESTRUCTIVE,
        ),
        types.Tool(
            name="tree",
            input_schema={
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/node"}},
                "$defs": {"node": tree_node},
            },
            annotations=DESTRUCTIVE,
        ),
        types.Tool(
            name="patterned",
            input_schema={
                "type": "object",
                "properties": {"code": {"type": "string", "pattern": CATASTROPHIC}},
            },
            annotations=DESTRUCTIVE,
        ),
    ]

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        ran.append(params.name)
        return types.CallToolResult(content=[types.TextContent(text=f"ran {params.name}")])

    return Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool), ran


def nested(depth: int, leaf: Any = "x") -> Any:
    """A value nesting ``depth`` dicts (built without recursion)."""
    value = leaf
    for _ in range(depth):
        value = {"k": value}
    return value


def url_server(urls: list[str], name: str = "links") -> MCPServer:
    """A server whose ``open_link(i)`` tool asks the user to open ``urls[i]`` (URL elicitation, both eras)."""
    srv = MCPServer(name)

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    async def open_link(i: int, ctx: Context) -> str | InputRequiredResult:
        """Ask the user to open one of the server's URLs."""
        if ctx.protocol_version == "2026-07-28":
            answer = (ctx.input_responses or {}).get("link")
            if answer is None:
                params = types.ElicitRequestURLParams(message="Please open this", url=urls[i])
                return InputRequiredResult(input_requests={"link": ElicitRequest(params=params)})
            return f"link: {answer.action}"
        result = await ctx.elicit_url("Please open this", urls[i], f"link-{i}")
        return f"link: {result.action}"

    return srv


class ExpiringServer:
    """A low-level server whose listing carries ``ttlMs=1`` (2026-07-28) and can be made to fail; records runs."""

    def __init__(self, name: str = "expiring") -> None:
        self.fail_listing = False
        self.ran: list[str] = []
        tool = types.Tool(
            name="delete_all", input_schema={"type": "object", "properties": {}}, annotations=DESTRUCTIVE
        )

        async def on_list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            if self.fail_listing:
                raise RuntimeError("the tool registry is down")
            return types.ListToolsResult(tools=[tool], ttl_ms=1)

        async def on_call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            self.ran.append(params.name)
            return types.CallToolResult(content=[types.TextContent(text=f"ran {params.name}")])

        self.server: Server[Any] = Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)
