"""MCP Apps (``io.modelcontextprotocol/ui``), the client half: against a server built on the mcp SDK's own
``mcp.server.apps.Apps`` extension (tests/support/servers/apps_server.py), in process and over streamable HTTP on
127.0.0.1, in both eras.

* The extension is advertised only with ``apps: true`` and only to a server that offers it (what the server itself
  saw: ``client_supports_apps``, and the wire).
* App-only tools (``visibility: ["app"]``) never reach a model (``get_tools()``, ``list_tools()``, "did you mean"),
  yet stay callable.
* A call to a tool with a UI yields its ToolMessage as without apps, plus the app: in the artifact and as an
  ``mcp_app`` generative UI message tied to the AIMessage, kept in :class:`McpAppsState`'s ``ui``.
* A server without the extension, and a client without ``apps``, see no change.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from langgraph_mcp import McpServers, McpToolNode
from langgraph_mcp.errors import ToolNotFoundError
from langgraph_mcp.examples.demo_apps import FILES_APP_URI, files_app_html
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.graph.apps import McpAppsState, app_of
from langgraph_mcp.graph.routing import route_tool_calls
from langgraph_mcp.payloads import (
    APP_MIME_TYPE,
    APPS_EXTENSION,
    app_origin,
    resource_ui,
    tool_ui,
    visible_to_model,
)
from tests.support.helpers import ERAS, OpenServers, serve_asgi
from tests.support.servers.apps_server import BOARD_HTML, BOARD_URI, AppsServer
from tests.support.wire import SeenOnTheWire

pytestmark = pytest.mark.anyio

APP_ONLY = {"board_board_refresh", "board_board_clear"}


def board(era: str, server: AppsServer, **options: Any) -> dict[str, Any]:
    return {"board": {"transport": "in_process", "server": server.server, "mode": era, **options}}


# ------------------------------------------------------------------------------------------- reading _meta.ui


def test_a_malformed_ui_is_no_ui_and_a_misspelled_visibility_hides_the_tool_from_the_model() -> None:
    assert tool_ui({"ui": {"resourceUri": "https://evil.example/app.html"}}) is None  # not ui://
    assert tool_ui({"ui": {"resourceUri": BOARD_URI, "visibility": "app"}}) is None  # not a list
    assert tool_ui({"ui/resourceUri": BOARD_URI}) == {
        "resourceUri": BOARD_URI,
        "visibility": ["model", "app"],
    }
    assert tool_ui({"ui": {"resourceUri": BOARD_URI, "visibility": ["app"]}}) == {
        "resourceUri": BOARD_URI,
        "visibility": ["app"],
    }
    assert not visible_to_model({"ui": {"visibility": ["ap"]}})
    assert not visible_to_model({"ui": {"visibility": []}})
    assert visible_to_model({"ui": {"resourceUri": BOARD_URI}}) and visible_to_model(None)


def test_only_the_known_keys_of_a_resources_ui_are_passed_on() -> None:
    meta = {
        "ui": {
            "csp": {"connectDomains": ["https://a"], "scriptSrc": ["'unsafe-eval'"], "frameDomains": "x"},
            "permissions": {"camera": {}, "usb": {}},
            "prefersBorder": "yes",
            "domain": "a.example",
            "sandbox": "allow-same-origin",
        }
    }
    assert resource_ui(meta) == {
        "csp": {"connectDomains": ["https://a"]},
        "permissions": {"camera": {}},
        "domain": "a.example",
    }
    assert app_origin({"server": "board", "resource_uri": BOARD_URI}) is None  # incomplete: no mark at all


# ------------------------------------------------------------------------------------------- the model's tools


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("apps", [True, False])
async def test_app_only_tools_never_reach_the_model_yet_stay_callable(
    era: str, apps: bool, open_servers: OpenServers
) -> None:
    server = AppsServer()
    servers = open_servers(board(era, server, apps=apps))
    offered = {tool.name for tool in await servers.get_tools()}
    assert offered == {"board_show_board", "board_plain_echo"}
    assert {tool.published_name for tool in await servers.list_tools()} == offered
    every = {tool.published_name for tool in await servers.list_tools(include_app_only=True)}
    assert every == offered | APP_ONLY
    with pytest.raises(ToolNotFoundError) as missed:
        await servers.get_tool("board_board_refres")
    assert not APP_ONLY & set(missed.value.close_matches)  # no "did you mean" names an app-only tool
    result = await servers.call_tool("board_board_refresh", {})
    assert not result.is_error and result.structured_content == {"rows": ["a", "b"]}
    assert [name for name, _, _ in server.record] == ["board_refresh"]


# ------------------------------------------------------------------------------------------- the advertisement


@pytest.mark.parametrize("apps", [True, False])
async def test_the_extension_is_advertised_only_when_asked_and_only_to_a_server_that_offers_it(
    apps: bool, open_servers: OpenServers
) -> None:
    server = AppsServer()
    base = await open_servers.enter(serve_asgi(server.server.streamable_http_app()))
    wire = SeenOnTheWire()
    servers = open_servers({"board": {"url": f"{base}/mcp", "mode": "modern", "auth": wire, "apps": apps}})
    result = await servers.call_tool("board_show_board", {"title": "t"})
    assert result.structured_content == {"title": "t", "rows": ["a", "b"]}
    assert server.record == [("show_board", {"title": "t"}, apps)]  # what the server itself saw
    assert wire.advertised("server/discover") == [[]]  # discovered once, advertising nothing
    assert wire.advertised("tools/call") == [[APPS_EXTENSION] if apps else []]


async def test_a_server_without_the_extension_never_hears_of_it(open_servers: OpenServers) -> None:
    plain = MCPServer("plain")

    @plain.tool(annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        return a + b

    base = await open_servers.enter(serve_asgi(plain.streamable_http_app()))
    wire = SeenOnTheWire()
    servers = open_servers({"plain": {"url": f"{base}/mcp", "mode": "modern", "auth": wire, "apps": True}})
    assert (await servers.call_tool("plain_add", {"a": 1, "b": 2})).structured_content == {"result": 3}
    assert wire.sent and all(extensions == [] for _, extensions in wire.sent), wire.sent
    values, streamed = await run_calls(servers, McpAppsState, ("plain_add", {"a": 1, "b": 2}))
    assert app_of(values["messages"][-1]) is None and streamed == [] and values.get("ui", []) == []


async def test_a_legacy_server_is_not_told_since_its_handshake_offers_no_extensions(
    open_servers: OpenServers,
) -> None:
    """2025-11-25 server capabilities carry no ``extensions``: nothing says the server offers it, so it is not
    advertised (its tools' ``_meta.ui`` is still read: see the graph tests below)."""
    server = AppsServer()
    servers = open_servers(board("legacy", server, apps=True))
    await servers.call_tool("board_show_board", {})
    assert server.record == [("show_board", {"title": "board"}, False)]


# ------------------------------------------------------------------------------------------- the app in a graph


def calls_graph(servers: McpServers, state: type[Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START → one Send per pending call → the tool node → END, with a checkpointer."""
    builder = StateGraph(state)
    builder.add_node("tools", McpToolNode(servers))
    builder.add_conditional_edges(START, route_tool_calls, ["tools", "__end__"])
    return builder.compile(checkpointer=InMemorySaver())


def asking(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        ToolCall(name=name, args=args, id=f"call_{i}", type="tool_call")
        for i, (name, args) in enumerate(calls)
    ]
    return {"messages": [HumanMessage("go"), AIMessage(content="", tool_calls=tool_calls, id="ai-1")]}


async def run_calls(
    servers: McpServers, state: type[Any], *calls: tuple[str, dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    graph = calls_graph(servers, state)
    config = {"configurable": {"thread_id": "t"}}
    streamed = [
        chunk
        async for mode, chunk in graph.astream(asking(*calls), config, stream_mode=["custom", "updates"])
        if mode == "custom" and isinstance(chunk, dict) and chunk.get("type") == "ui"
    ]
    return (await graph.aget_state(config)).values, streamed


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_to_a_tool_with_a_ui_brings_its_app_in_the_artifact_and_as_a_ui_message(
    era: str, open_servers: OpenServers
) -> None:
    with_apps = await run_calls(
        open_servers(board(era, AppsServer(), apps=True)), McpAppsState, ("board_show_board", {"title": "q"})
    )
    without = await run_calls(
        open_servers(board(era, AppsServer(), apps=False)), McpAppsState, ("board_show_board", {"title": "q"})
    )
    message = with_apps[0]["messages"][-1]
    plain = without[0]["messages"][-1]
    assert isinstance(message, ToolMessage) and isinstance(plain, ToolMessage)
    assert message.content == plain.content  # what the model reads is unchanged
    assert app_of(plain) is None and without[0].get("ui", []) == [] and without[1] == []
    app = app_of(message)
    assert app is not None
    assert (app["server"], app["tool"], app["resource_uri"], app["mime_type"]) == (
        "board",
        "show_board",
        BOARD_URI,
        APP_MIME_TYPE,
    )
    assert app["html"] == BOARD_HTML
    assert app["ui"] == {
        "csp": {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
        },
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": True,
    }
    assert app["tool_input"] == {"title": "q"}
    assert app["tool_result"]["structuredContent"]["rows"] == ["a", "b"]
    assert app["tool_call_id"] == "call_0"
    assert app["app_tools"] == {
        "show_board": "board_show_board",
        "board_refresh": "board_board_refresh",
        "board_clear": "board_board_clear",
        "plain_echo": "board_plain_echo",
    }
    [ui] = with_apps[0]["ui"]
    assert ui["name"] == "mcp_app" and ui["id"] == "mcp_app:call_0"
    assert ui["metadata"]["message_id"] == "ai-1"  # tied to the AIMessage that made the call
    assert ui["props"] == dict(app)
    assert [streamed["id"] for streamed in with_apps[1]] == ["mcp_app:call_0"]


async def test_a_tool_without_a_ui_and_a_state_without_ui_are_left_as_they_were(
    open_servers: OpenServers,
) -> None:
    values, streamed = await run_calls(
        open_servers(board("modern", AppsServer(), apps=True)),
        MessagesState,
        ("board_show_board", {}),
        ("board_plain_echo", {"text": "hi"}),
    )
    by_id = {m.tool_call_id: m for m in values["messages"] if isinstance(m, ToolMessage)}
    assert app_of(by_id["call_1"]) is None
    assert app_of(by_id["call_0"]) is not None  # still in the artifact
    assert "ui" not in values  # MessagesState keeps no UI messages; they are only streamed
    assert [chunk["id"] for chunk in streamed] == ["mcp_app:call_0"]


async def test_an_app_the_server_cannot_serve_costs_the_app_never_the_result(
    open_servers: OpenServers,
) -> None:
    server = AppsServer()
    server.server._resource_manager._resources.pop(BOARD_URI)  # the tool names a resource that is gone
    values, streamed = await run_calls(
        open_servers(board("modern", server, apps=True)), McpAppsState, ("board_show_board", {})
    )
    message = values["messages"][-1]
    assert isinstance(message, ToolMessage) and message.status == "success" and app_of(message) is None
    assert streamed == [] and values.get("ui", []) == []


# ------------------------------------------------------------------------------------------- the demo's app


@pytest.mark.parametrize("era", ERAS)
async def test_the_demo_servers_files_app_travels_with_show_files_and_its_snapshot_tool_is_hidden(
    era: str, open_servers: OpenServers
) -> None:
    demo = build_server()
    servers = open_servers({"demo": {"transport": "in_process", "server": demo, "mode": era, "apps": True}})
    offered = {tool.name for tool in await servers.get_tools()}
    assert "demo_show_files" in offered and "demo_files_snapshot" not in offered
    values, streamed = await run_calls(servers, McpAppsState, ("demo_show_files", {}))
    app = app_of(values["messages"][-1])
    assert app is not None and app["resource_uri"] == FILES_APP_URI and app["html"] == files_app_html()
    assert app["ui"] == {"prefersBorder": True}  # an empty CSP: the app may reach no network
    assert app["tool_result"]["structuredContent"] == {"files": ["notes.txt", "todo.txt"]}
    assert "ui/initialize" in app["html"]  # built with the app SDK, which speaks the host protocol
    assert [ui["id"] for ui in values["ui"]] == ["mcp_app:call_0"] and len(streamed) == 1
