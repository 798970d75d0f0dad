"""An MCP Apps server built on the mcp SDK's own ``mcp.server.apps.Apps`` extension (mcp 2.3), for tests.

* ``show_board`` (read-only, visible to model and app): renders ``ui://board/app.html``; its structured content
  carries the rows.
* ``board_refresh`` (read-only, app only): the rows again.
* ``board_clear`` (destructive, app only): clears the board.
* ``plain_echo``: a tool with no UI at all.

``record`` is the server's own record of every tool run, in order: ``(tool, arguments, client_supports_apps)``.
Run as a script (``python apps_server.py stdio``) it serves over stdio.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

BOARD_URI = "ui://board/app.html"
BOARD_HTML = "<!doctype html><html><body><h1>board</h1><script>/* app */</script></body></html>"

READ_ONLY = ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)


class AppsServer:
    def __init__(self, name: str = "board") -> None:
        self.record: list[tuple[str, dict[str, Any], bool]] = []
        self.rows = ["a", "b"]
        self.server = self._build(name)

    def _build(self, name: str) -> MCPServer:
        apps = Apps()

        @apps.tool(resource_uri=BOARD_URI, description="Show the board", annotations=READ_ONLY)
        def show_board(ctx: Context, title: str = "board") -> dict[str, Any]:
            self.record.append(("show_board", {"title": title}, client_supports_apps(ctx)))
            return {"title": title, "rows": list(self.rows)}

        @apps.tool(
            resource_uri=BOARD_URI, visibility=["app"], description="Reload the rows", annotations=READ_ONLY
        )
        def board_refresh(ctx: Context) -> dict[str, Any]:
            self.record.append(("board_refresh", {}, client_supports_apps(ctx)))
            return {"rows": list(self.rows)}

        @apps.tool(
            resource_uri=BOARD_URI, visibility=["app"], description="Clear the board", annotations=DESTRUCTIVE
        )
        def board_clear(ctx: Context) -> str:
            self.record.append(("board_clear", {}, client_supports_apps(ctx)))
            self.rows.clear()
            return "cleared"

        apps.add_html_resource(
            BOARD_URI,
            BOARD_HTML,
            csp=ResourceCsp(
                connect_domains=["https://api.example.com"], resource_domains=["https://cdn.example.com"]
            ),
            permissions=ResourcePermissions(clipboard_write={}),
            prefers_border=True,
        )
        server = MCPServer(name, extensions=[apps])

        @server.tool(description="Echo text back", annotations=READ_ONLY)
        def plain_echo(text: str) -> str:
            self.record.append(("plain_echo", {"text": text}, False))
            return text

        return server


if __name__ == "__main__":
    if sys.argv[1:] != ["stdio"]:
        raise SystemExit("usage: apps_server.py stdio")
    AppsServer().server.run("stdio")
