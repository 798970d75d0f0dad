"""The demo server's MCP App (the ``io.modelcontextprotocol/ui`` extension, through the mcp SDK's ``mcp.server.apps``).

* ``show_files`` (read-only, offered to the model): renders ``ui://demo/files.html`` and returns the workspace's
  files (``structuredContent``: ``{"files": [...]}``).
* ``files_snapshot`` (read-only, ``visibility: ["app"]``): the same list, for the app's Refresh button only; a host
  never offers it to a model.
* The app's Delete buttons call the server's ``delete_file`` (destructive), which the host judges like any call.

The app's HTML (``examples/apps/files_app.html``, package data) is built with the official app SDK
(``@modelcontextprotocol/ext-apps``) from ``examples/apps_ui/src/files_app.ts`` by ``examples/apps_ui/build.mjs``;
the built file is vendored so Python users need no npm. Its resource asks for no network (an empty CSP) and prefers
a border.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from mcp.server.apps import Apps, ResourceCsp
from mcp.types import ToolAnnotations

__all__ = ["FILES_APP_URI", "files_app", "files_app_html"]

FILES_APP_URI = "ui://demo/files.html"

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def files_app_html() -> str:
    """The built app (``examples/apps/files_app.html``)."""
    return (resources.files("langgraph_mcp.examples") / "apps" / "files_app.html").read_text(encoding="utf-8")


def files_app(files: dict[str, str], record: Callable[..., Any]) -> Apps:
    """The demo's Apps extension over the workspace ``files``; ``record(tool, event)`` as every demo tool does."""
    apps = Apps()

    @apps.tool(resource_uri=FILES_APP_URI, annotations=_READ_ONLY)
    def show_files() -> dict[str, list[str]]:
        """Show the workspace's files in an interactive view (the user can refresh it and delete files)."""
        record("show_files", "enter")
        return {"files": sorted(files)}

    @apps.tool(resource_uri=FILES_APP_URI, visibility=["app"], annotations=_READ_ONLY)
    def files_snapshot() -> dict[str, list[str]]:
        """The workspace's files, for the files view's Refresh button."""
        record("files_snapshot", "enter")
        return {"files": sorted(files)}

    apps.add_html_resource(
        FILES_APP_URI,
        files_app_html(),
        name="files",
        title="Workspace files",
        csp=ResourceCsp(),
        prefers_border=True,
    )
    return apps
