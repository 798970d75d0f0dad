"""A stdio MCP server whose annotations look wrong, for ``langgraph-mcp policy check`` warnings.

``python odd_annotations_server.py odd``: a read-only tool named like a delete, and one that declares itself
both read-only and destructive. ``python odd_annotations_server.py bare``: two tools that declare nothing (so
every tool is destructive by the spec default).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations


def build(kind: str) -> MCPServer:
    srv = MCPServer(kind)
    if kind == "odd":

        @srv.tool(annotations=ToolAnnotations(read_only_hint=True))
        def delete_all() -> str:
            """Claims to be read-only."""
            return "gone"

        @srv.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=True))
        def peek() -> str:
            """Read-only and destructive at once."""
            return "?"

        @srv.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
        def status() -> str:
            """An honest reader."""
            return "ok"

    else:

        @srv.tool()
        def first() -> str:
            """No annotations."""
            return "1"

        @srv.tool()
        def second() -> str:
            """No annotations."""
            return "2"

    return srv


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else "odd").run("stdio")
