"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865): the words the package uses for a tool's UI.

A tool names its UI in ``_meta.ui``: ``resourceUri`` (a ``ui://`` resource, HTML served as
``text/html;profile=mcp-app``) and optionally ``visibility``, a list of ``"model"`` and ``"app"``. A tool whose
visibility leaves out ``"model"`` is for its app only: it is never offered to a model (``get_tools()``, the
``list_tools()`` catalog, "did you mean" hints), while a call to it (from the app, through the graph) still resolves
and is judged like any other. Hiding it is a convenience, not access control: whoever can write a thread's input can
name any tool, and the approval policy decides what runs.

A UI resource's ``_meta.ui`` may carry ``csp`` (``connectDomains``, ``resourceDomains``, ``frameDomains``,
``baseUriDomains``), ``permissions`` (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``), ``domain`` and
``prefersBorder``. Everything here reads what a server sent, which is untrusted: a malformed ``_meta.ui`` is read
as "no UI" (never an error, never a guess), and only the known keys of the known shapes are passed on.

The client advertises the extension (``ClientCapabilities.extensions["io.modelcontextprotocol/ui"]`` with
``{"mimeTypes": ["text/html;profile=mcp-app"]}``) only for a server configured with ``apps: true``, and, like MCP
Tasks, only to a server that offers it (see :mod:`langgraph_mcp.connection.owner`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

__all__ = [
    "APPS_EXTENSION",
    "APP_COMPONENT",
    "APP_MIME_TYPE",
    "AppOrigin",
    "AppResourceUi",
    "McpApp",
    "ToolUi",
    "app_origin",
    "resource_ui",
    "tool_ui",
    "visible_to_app",
    "visible_to_model",
]

APPS_EXTENSION = "io.modelcontextprotocol/ui"
"""The extension identifier a client advertises (``capabilities.extensions``) and a server offers."""

APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The only MIME type a ``ui://`` resource is shown as."""

APP_COMPONENT = "mcp_app"
"""The name of the LangGraph generative UI message (``push_ui_message``) that carries an app, and of the component
that renders it (the ``ui`` bundle's export)."""

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSION_KEYS = ("camera", "microphone", "geolocation", "clipboardWrite")


class ToolUi(TypedDict):
    """A tool's ``_meta.ui``, as read: the ``ui://`` resource it renders and who may call it."""

    resourceUri: str | None
    """``None``: the tool is app-facing (``visibility``) but renders no UI of its own."""
    visibility: list[Literal["model", "app"]]
    """``["model", "app"]`` when the server said nothing."""


class AppResourceUi(TypedDict, total=False):
    """A UI resource's ``_meta.ui``: only these keys, only of these shapes, are passed to a host."""

    csp: dict[str, list[str]]
    permissions: dict[str, dict[str, Any]]
    domain: str
    prefersBorder: bool


class AppOrigin(TypedDict):
    """Where an app-made call says it came from: which server's app, which ``ui://`` resource, which call of the
    model's showed it. Client-written, like all run input: shown to the person, never trusted."""

    server: str
    resource_uri: str
    tool_call_id: str


class McpApp(TypedDict):
    """What a call to a tool with a UI carries besides its ToolMessage: the ``mcp_app`` entry of the ToolMessage's
    artifact and the props of its ``mcp_app`` UI message."""

    type: Literal["mcp_app"]
    server: str
    tool: str
    """The server's own tool name."""
    published_name: str
    tool_call_id: str
    resource_uri: str
    mime_type: str
    html: str
    """The resource's HTML, as read (through the package's resource cache)."""
    ui: AppResourceUi
    """The resource's ``_meta.ui``: its CSP, permissions, domain and border preference; nothing else."""
    tool_input: dict[str, Any]
    """The arguments the call was made with."""
    tool_result: dict[str, Any]
    """The ``CallToolResult`` as the wire has it (``content``, ``structuredContent``, ``isError``, ``_meta``)."""
    app_tools: dict[str, str]
    """The server's tools this app may call (``visibility`` with ``"app"``): the server's name -> the published name
    a call goes to the graph under. A host refuses an app's call to any other (SEP-1865); a convenience, never the
    judgement: every call the host sends is judged by the graph's gate."""


def _visibility(value: Any) -> list[Literal["model", "app"]] | None:
    if value is None:
        return ["model", "app"]
    if not isinstance(value, list) or not value or not all(v in ("model", "app") for v in value):
        return None
    return [v for v in ("model", "app") if v in value]


def tool_ui(meta: Mapping[str, Any] | None) -> ToolUi | None:
    """A tool's ``_meta.ui`` (or the older flat ``_meta["ui/resourceUri"]``), or ``None`` when it has none or it is
    malformed: a ``resourceUri`` that is not a ``ui://`` string, a ``visibility`` that is not a non-empty list of
    ``"model"``/``"app"``."""
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    if ui is None and isinstance(meta.get("ui/resourceUri"), str):
        ui = {"resourceUri": meta["ui/resourceUri"]}
    if not isinstance(ui, Mapping):
        return None
    uri = ui.get("resourceUri")
    if uri is not None and not (isinstance(uri, str) and uri.startswith("ui://")):
        return None
    visibility = _visibility(ui.get("visibility"))
    if visibility is None or (uri is None and "visibility" not in ui):
        return None
    return {"resourceUri": uri, "visibility": visibility}


def visible_to_model(meta: Mapping[str, Any] | None) -> bool:
    """Whether a tool may be offered to a model: every tool, but one whose ``_meta.ui.visibility`` leaves out
    ``"model"``. A malformed ``visibility`` hides the tool (a server that meant "app only" and misspelled it must
    not have its app's tools offered to the model)."""
    if not isinstance(meta, Mapping) or not isinstance(meta.get("ui"), Mapping):
        return True
    if "visibility" not in meta["ui"]:
        return True
    visibility = _visibility(meta["ui"].get("visibility"))
    return visibility is not None and "model" in visibility


def visible_to_app(meta: Mapping[str, Any] | None) -> bool:
    """Whether an app may call a tool (SEP-1865: a host refuses an app's call to a tool whose ``visibility`` leaves
    out ``"app"``). A tool without ``_meta.ui`` is callable from an app of its server."""
    if not isinstance(meta, Mapping) or not isinstance(meta.get("ui"), Mapping):
        return True
    visibility = _visibility(meta["ui"].get("visibility"))
    return visibility is not None and "app" in visibility


def _domains(value: Any) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return list(value)


def resource_ui(meta: Mapping[str, Any] | None) -> AppResourceUi:
    """The known keys of a UI resource's ``_meta.ui``, each only in its known shape; anything else is dropped."""
    ui = meta.get("ui") if isinstance(meta, Mapping) else None
    if not isinstance(ui, Mapping):
        return {}
    read: AppResourceUi = {}
    csp = ui.get("csp")
    if isinstance(csp, Mapping):
        kept = {key: domains for key in _CSP_KEYS if (domains := _domains(csp.get(key))) is not None}
        if kept:
            read["csp"] = kept
    permissions = ui.get("permissions")
    if isinstance(permissions, Mapping):
        granted: dict[str, dict[str, Any]] = {
            key: {} for key in _PERMISSION_KEYS if isinstance(permissions.get(key), Mapping)
        }
        if granted:
            read["permissions"] = granted
    if isinstance(ui.get("domain"), str):
        read["domain"] = ui["domain"]
    if isinstance(ui.get("prefersBorder"), bool):
        read["prefersBorder"] = ui["prefersBorder"]
    return read


def app_origin(value: Any) -> AppOrigin | None:
    """An app-made call's origin mark (``tool_call["mcp_app"]`` or the message's ``mcp_app`` kwarg) as shown, or
    ``None`` when there is none or it is malformed. Never a reason to let a call run."""
    if not isinstance(value, Mapping):
        return None
    fields = {key: value.get(key) for key in ("server", "resource_uri", "tool_call_id")}
    if not all(isinstance(v, str) for v in fields.values()):
        return None
    return {
        "server": str(fields["server"])[:200],
        "resource_uri": str(fields["resource_uri"])[:500],
        "tool_call_id": str(fields["tool_call_id"])[:200],
    }
