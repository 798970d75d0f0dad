"""The MCP Apps sandbox proxy, as an ASGI app: ``GET /mcp-apps/sandbox`` serves ``examples/apps/sandbox.html``.

SEP-1865 requires a web host to show an app behind a sandbox proxy on an origin other than the host page's. The
apps demo's ``langgraph.apps.json`` mounts this app as the LangGraph server's custom routes (``"http": {"app": ...}``),
so the proxy is served by the API server: in ``langgraph dev`` from ``http://127.0.0.1:2024/mcp-apps/sandbox`` while
Agent Chat UI runs on ``http://localhost:3000``; in a deployment from the deployment's URL, while the UI is served
elsewhere. The host component derives the proxy's address from the API URL it talks to and refuses to show an app
when that address has the page's own origin (e.g. Agent Chat UI's same-origin API passthrough): then set
``window.LANGGRAPH_MCP_APPS_SANDBOX_URL`` to a proxy on another origin (serve this file anywhere: it is static).

The page's own headers: no caching, no referrer, and ``X-Content-Type-Options: nosniff``. Its policy for the app is
the resource's declared CSP, applied in the page itself (a ``<meta>`` CSP ahead of the app's HTML).
"""

from __future__ import annotations

from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

__all__ = ["SANDBOX_PATH", "app", "sandbox_html"]

SANDBOX_PATH = "/mcp-apps/sandbox"


def sandbox_html() -> str:
    """The sandbox proxy page (``examples/apps/sandbox.html``)."""
    return (resources.files("langgraph_mcp.examples") / "apps" / "sandbox.html").read_text(encoding="utf-8")


async def _sandbox(request: Request) -> HTMLResponse:
    return HTMLResponse(
        sandbox_html(),
        headers={
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
        },
    )


app = Starlette(routes=[Route(SANDBOX_PATH, _sandbox, methods=["GET"])])
"""The custom routes ``langgraph.apps.json`` mounts (``"http": {"app": "./langgraph_mcp/examples/apps_sandbox.py:app"}``)."""
