"""An MCP server whose one tool answers with the W3C ``traceparent`` its request's ``_meta`` carried."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations


def build() -> MCPServer:
    srv = MCPServer("traced")

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami(ctx: Context) -> str:
        """The traceparent this request came with ('' when none)."""
        meta: dict[str, object] = dict(ctx.request_context.meta or {})
        return str(meta.get("traceparent", ""))

    return srv


if __name__ == "__main__":
    build().run("stdio")
