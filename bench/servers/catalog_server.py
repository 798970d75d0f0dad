"""A low-level MCP server listing N tools (default 2,000), for catalog benchmarks: ``python catalog_server.py [N]``.

Each tool has a small realistic inputSchema (three typed properties, one required) and annotations; every tool
answers ``ok``. Serves stdio from the command line; ``build(n)`` returns the server for in-process use.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server


def tool_descriptors(n: int) -> list[types.Tool]:
    return [
        types.Tool(
            name=f"tool_{i:05d}",
            description=f"Tool number {i}: does one small thing with a city, a count and a flag.",
            input_schema={
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "A city name"},
                    "count": {"type": "integer", "minimum": 0, "maximum": 100},
                    "flag": {"type": "boolean", "default": False},
                },
                "required": ["city"],
            },
            annotations=types.ToolAnnotations(read_only_hint=i % 2 == 0, open_world_hint=False),
        )
        for i in range(n)
    ]


def build(n: int = 2000) -> Server[Any]:
    tools = tool_descriptors(n)

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    return Server("catalog", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def _serve(n: int) -> None:
    server = build(n)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve, int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
