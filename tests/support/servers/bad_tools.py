"""Low-level ``mcp.server.Server``s for catalog tests: tools no model provider accepts, a changing tool list.

Built with the low-level API because ``MCPServer`` derives every inputSchema from a Python signature and so
can't produce these. Run them in-process with ``{"transport": "in_process", "server": server}``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult

DEEP_LEVELS = 80
"""Nesting of the ``deep_schema`` tool's inputSchema: parseable JSON, past the catalog's 64-level limit."""
HUGE_BYTES = 1024 * 1024
"""Size of the ``huge_schema`` tool's inputSchema (1 MiB), past the catalog's 256 KiB limit."""

GOOD_TOOLS = ("ok_echo", "ok_add", "dotted_name")
"""``dotted_name`` is valid, and is what the sanitiser would turn ``dotted.name`` into."""
BAD_SCHEMA_TOOLS = ("deep_schema", "huge_schema")
BAD_NAME_TOOLS = ("dotted.name", "with space")
NON_OBJECT_TOOL = "string_schema"
"""Listed with inputSchema ``{"type": "string"}``: the MCP wire schema requires root type object."""


def nested_schema(levels: int) -> dict[str, Any]:
    """An object schema nesting exactly ``levels`` JSON objects (a map of maps of ... of strings)."""
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels - 1):
        node = {"type": "object", "additionalProperties": node}
    return node


def huge_schema(size: int = HUGE_BYTES) -> dict[str, Any]:
    return {"type": "object", "properties": {"blob": {"type": "string", "description": "x" * size}}}


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


def build_bad_server(
    name: str = "bad", *, non_object_schema: bool = False
) -> tuple[Server[Any], Counter[str]]:
    """A server listing the good tools and the bad ones above; also returns its request counter.

    ``non_object_schema`` adds a tool whose inputSchema is ``{"type": "string"}``. The SDK's server refuses to
    send that (it validates its own results), so a middleware appends it to the wire result, the way a
    non-conforming third-party server would send it.
    """
    counts: Counter[str] = Counter()
    tools = [
        types.Tool(name="ok_echo", description="Echo text.", input_schema=_object(text={"type": "string"})),
        types.Tool(
            name="ok_add",
            description="Add two integers.",
            input_schema=_object(a={"type": "integer"}, b={"type": "integer"}),
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(name="deep_schema", description="Too deep.", input_schema=nested_schema(DEEP_LEVELS)),
        types.Tool(name="huge_schema", description="Too big.", input_schema=huge_schema()),
        types.Tool(name="dotted.name", description="Dot in the name.", input_schema=_object()),
        types.Tool(name="with space", description="Space in the name.", input_schema=_object()),
        types.Tool(name="dotted_name", description="Listed after 'dotted.name'.", input_schema=_object()),
    ]

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        counts["tools/list"] += 1
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        counts[f"tools/call:{params.name}"] += 1
        args = params.arguments or {}
        if params.name == "ok_echo":
            return _text(str(args.get("text", "")))
        if params.name == "ok_add":
            return _text(str(int(args["a"]) + int(args["b"])))
        return _text(f"called {params.name}")

    server: Server[Any] = Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)

    async def add_non_object_tool(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            bad = {"name": NON_OBJECT_TOOL, "description": "Not an object", "inputSchema": {"type": "string"}}
            result = {**result, "tools": [*result["tools"], bad]}
        return result

    if non_object_schema:
        server.middleware.append(add_non_object_tool)
    return server, counts


class ChangingServer:
    """A low-level server whose tool list grows when ``add_tool`` is called, counting ``tools/list`` requests.

    ``add_tool`` sends ``notifications/tools/list_changed`` on legacy connections (the modern era has no
    spontaneous notifications; changes reach only ``subscriptions/listen`` streams).
    """

    def __init__(self, name: str = "changing") -> None:
        self.list_calls = 0
        self.tools = [types.Tool(name="add_tool", input_schema=_object(name={"type": "string"}))]
        self.server: Server[Any] = Server(
            name, on_list_tools=self._on_list_tools, on_call_tool=self._on_call_tool
        )

    def add(self, name: str) -> None:
        self.tools.append(types.Tool(name=name, input_schema=_object()))

    @property
    def names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    async def _on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self.list_calls += 1
        return types.ListToolsResult(tools=list(self.tools))

    async def _on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name == "add_tool":
            self.add(str((params.arguments or {})["name"]))
            if ctx.protocol_version != "2026-07-28":
                await ctx.session.send_tool_list_changed()
            return _text("added")
        return _text(f"called {params.name}")
