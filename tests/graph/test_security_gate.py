"""Issue 9, approval bypasses: no path lets a destructive call run unapproved (the servers' own records decide).

1. A cut or failed ``tools/list`` at gate time never makes a call "non-MCP": it is asked about (or denied).
2. Calls with a duplicate or missing id are never run, on every wiring; each id gets one error ToolMessage.
3. A name two servers publish is refused on every path; a resumed approval runs exactly the server+tool shown.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import ToolException
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode, resume_command, route_tool_calls
from langgraph_mcp.calls.tools import make_langchain_tools
from langgraph_mcp.errors import ToolNameCollisionError, ToolOwnerUnknownError
from langgraph_mcp.examples.demo_server import build_server, http_app
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, OpenServers, demo_entry, http_demo_server, serve_asgi
from tests.support.security_support import (
    SECURITY_TRANSPORTS,
    WIRINGS,
    CutToolsList,
    ExpiringServer,
    RecordingServer,
)

pytestmark = pytest.mark.anyio


def call(name: str, call_id: str | None, **args: Any) -> ToolCall:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def cfg(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


def tool_messages(out: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def text(message: ToolMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


# ------------------------------------------------------------------------------ 1. cut / failed tools/list


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("fault", ["cut", "error", "garbage"])
@pytest.mark.parametrize("mode", ERAS)
async def test_cut_tools_list_at_gate_time_asks_and_never_runs_the_call(
    open_servers: OpenServers, mode: str, fault: str, wiring: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """Every tools/list response is cut mid-body (or fails) while the gate looks: the call is asked about, naming
    the failure; approving that blind question still does not run it once the listing works again (the name
    then resolves to a tool nobody was shown)."""
    srv = build_server()
    proxy = CutToolsList(
        http_app(srv), mode=fault, cuts=1_000
    )  # the connection layer may retry: cut them all
    base = await open_servers.enter(serve_asgi(proxy))
    servers = open_servers(
        {"demo": {"transport": "http", "url": f"{base}/mcp", "mode": mode, "connect_timeout": 10}},
        on_connection_error="ignore",
    )
    graph = WIRINGS[wiring](
        servers, ApprovalPolicy(), [call("demo_delete_file", "rm", path="todo.txt")], checkpointer
    )
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    assert proxy.cut >= 1
    [pending] = out["__interrupt__"]
    assert pending.value["type"] == "mcp_approval"
    assert pending.value["server"] is None  # nobody could tell which server it is
    assert "could not establish which MCP server" in pending.value["reason"]
    assert "'demo'" in pending.value["reason"]
    assert srv.events.counts["delete_file.request"] == 0
    proxy.cuts = proxy.cut  # the server lists again
    out = await graph.ainvoke(resume_command(out, decisions={"rm": {"type": "approve"}}), cfg())
    # The blind approval proves nothing about the tool it now resolves to: the tool node asks, naming it.
    [asked] = out["__interrupt__"]
    assert (asked.value["server"], asked.value["tool"]) == ("demo", "delete_file")
    assert "the tool node asks because" in asked.value["reason"]
    assert srv.events.counts["delete_file.request"] == 0
    out = await graph.ainvoke(resume_command(out, decisions={"rm": {"type": "reject"}}), cfg())
    [message] = tool_messages(out)
    assert message.status == "error" and "rejected" in text(message)
    assert srv.events.counts["delete_file.request"] == 0
    assert "todo.txt" in srv.workspace


async def test_cut_tools_list_without_a_gate_is_an_error_not_a_guess(open_servers: OpenServers) -> None:
    """Resolution itself fails closed: a cut listing is ``ToolOwnerUnknownError``, never "not found"."""
    srv = build_server()
    proxy = CutToolsList(http_app(srv), cuts=1_000)
    base = await open_servers.enter(serve_asgi(proxy))
    servers = open_servers({"demo": {"transport": "http", "url": f"{base}/mcp", "connect_timeout": 10}})
    resolution = await servers.resolve_tool("demo_delete_file")
    assert resolution.tools == () and set(resolution.unknown) == {"demo"}
    with pytest.raises(ToolOwnerUnknownError, match="demo_delete_file"):
        resolution.tool()
    proxy.cuts = proxy.cut
    assert (await servers.get_tool("demo_delete_file")).server == "demo"  # the next listing works


async def test_a_prefix_free_server_that_failed_to_list_could_publish_any_name(
    open_servers: OpenServers,
) -> None:
    """``prefix=False`` servers can publish any name: while one can't be listed, no name is "non-MCP"."""
    srv = build_server()
    proxy = CutToolsList(http_app(srv), cuts=10, mode="error")
    base = await open_servers.enter(serve_asgi(proxy))
    servers = open_servers(
        {
            "demo": {"transport": "in_process", "server": build_server()},
            "bare": {"transport": "http", "url": f"{base}/mcp", "prefix": False, "connect_timeout": 10},
        },
        on_connection_error="ignore",
    )
    graph = WIRINGS["gate_router"](
        servers, ApprovalPolicy(), [call("delete_file", "rm", path="x")], StrictSaver()
    )
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    [pending] = out["__interrupt__"]
    assert "'bare'" in pending.value["reason"]
    # A tool listed by a healthy server is asked about too while 'bare' could also publish its name.
    listed = await servers.resolve_tool("demo_list_files")
    assert [t.server for t in listed.tools] == ["demo"] and set(listed.unknown) == {"bare"}
    graph = WIRINGS["gate_router"](servers, ApprovalPolicy(), [call("demo_list_files", "ls")], StrictSaver())
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg("t2"))
    [pending] = out["__interrupt__"]
    assert pending.value["server"] == "demo" and "'bare'" in pending.value["reason"]
    assert srv.events.counts["delete_file.request"] == 0


async def test_without_a_human_a_prefix_free_server_that_failed_to_list_leaves_every_name_unowned(
    open_servers: OpenServers,
) -> None:
    """``servers.call_tool``, ``get_tool`` and ``get_tools()``' tools ask nobody: while a ``prefix=False`` server
    can't be listed, a name another server lists may be its too, so they refuse instead of guessing the owner."""
    srv = build_server()
    proxy = CutToolsList(http_app(srv), cuts=1_000, mode="error")
    base = await open_servers.enter(serve_asgi(proxy))
    demo = build_server()
    servers = open_servers(
        {
            "demo": {"transport": "in_process", "server": demo},
            "bare": {"transport": "http", "url": f"{base}/mcp", "prefix": False, "connect_timeout": 10},
        },
        on_connection_error="ignore",
    )
    [listed] = [t for t in await servers.list_tools() if t.published_name == "demo_list_files"]
    [lc_tool] = [t for t in await servers.get_tools(["demo"]) if t.name == "demo_list_files"]
    with pytest.raises(ToolOwnerUnknownError, match="'bare'"):
        await servers.call_tool("demo_list_files", {})
    with pytest.raises(ToolOwnerUnknownError, match="'bare'"):
        await servers.get_tool("demo_list_files")
    with pytest.raises(ToolException, match="'bare'"):  # in a graph: the model reads it as the tool's error
        await lc_tool.ainvoke({})
    assert demo.events.counts["list_files.request"] == 0 and listed.server == "demo"
    proxy.cuts = proxy.cut  # 'bare' lists again: its listing rules the name out
    assert (await servers.get_tool("demo_list_files")).server == "demo"
    assert not (await servers.call_tool("demo_list_files", {})).is_error
    assert demo.events.counts["list_files.request"] == 1


async def test_a_stale_listing_that_cannot_be_refreshed_is_not_trusted(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """The listing said ``ttlMs=1``; once stale, re-listing fails: the owner is unknown, so the call is asked."""
    expiring = ExpiringServer()
    servers = open_servers(
        {"expiring": {"transport": "in_process", "server": expiring.server, "mode": "auto"}}
    )
    assert [t.name for t in await servers.list_tools()] == ["delete_all"]
    expiring.fail_listing = True
    await anyio.sleep(0.002)  # the listing's 1 ms ttl runs out (the behaviour under test)
    assert (
        server_access(servers).names.cached_resolution("expiring_delete_all") is None
    )  # stale: the lookup has to list again
    graph = WIRINGS["gate_router"](
        servers,
        ApprovalPolicy(tools={"expiring_*": "allow"}),
        [call("expiring_delete_all", "d")],
        checkpointer,
    )
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    [pending] = out["__interrupt__"]  # not allowed by the override: nobody knows the tool any more
    assert pending.value["server"] is None and "'expiring'" in pending.value["reason"]
    assert expiring.ran == []


async def test_unresolved_deny_policy_denies_without_asking(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    proxy = CutToolsList(http_app(srv), cuts=1_000)
    base = await open_servers.enter(serve_asgi(proxy))
    servers = open_servers(
        {"demo": {"transport": "http", "url": f"{base}/mcp"}}, on_connection_error="ignore"
    )
    graph = WIRINGS["gate_router"](
        servers,
        ApprovalPolicy(unresolved="deny"),
        [call("demo_delete_file", "rm", path="todo.txt")],
        checkpointer,
    )
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    assert "__interrupt__" not in out
    [message] = tool_messages(out)
    assert message.status == "error" and "could not establish" in text(message)
    assert srv.events.counts["delete_file.request"] == 0


# ------------------------------------------------------------------------------ 2. duplicate / missing ids


def plain_graph(servers: McpServers, calls: list[ToolCall], *, fan_out: bool) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("", tool_calls=list(calls), id="ai-1")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    if fan_out:
        builder.add_conditional_edges("agent", route_tool_calls, ["tools", "__end__"])
    else:
        builder.add_edge("agent", "tools")
    builder.add_edge("tools", "__end__")
    return builder.compile(checkpointer=StrictSaver())


DUPLICATES = {
    "same_id": [
        call("demo_read_file", "x", path="notes.txt"),
        call("demo_delete_file", "x", path="todo.txt"),
    ],
    "no_ids": [
        call("demo_read_file", None, path="notes.txt"),
        call("demo_delete_file", None, path="todo.txt"),
    ],
}


@pytest.mark.parametrize("case", sorted(DUPLICATES))
@pytest.mark.parametrize("wiring", [*sorted(WIRINGS), "router_only", "node_only"])
@pytest.mark.parametrize("mode", ERAS)
async def test_calls_sharing_an_id_never_run(
    open_servers: OpenServers, case: str, wiring: str, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": {"transport": "in_process", "server": srv, "mode": mode}})
    calls = DUPLICATES[case]
    if wiring in WIRINGS:
        graph = WIRINGS[wiring](servers, ApprovalPolicy(), calls, checkpointer)
    else:
        graph = plain_graph(servers, calls, fan_out=wiring == "router_only")
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    assert "__interrupt__" not in out
    [message] = tool_messages(out)  # a ToolMessage answers one id: one per id, naming every call
    assert message.tool_call_id == (calls[0]["id"] or "")
    assert message.status == "error" and "none of them was run" in text(message)
    assert "'demo_read_file'" in text(message) and "'demo_delete_file'" in text(message)
    assert srv.events.counts["delete_file.request"] == 0
    assert srv.events.counts["read_file.request"] == 0
    assert "todo.txt" in srv.workspace


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("mode", ERAS)
async def test_calls_sharing_an_id_never_run_over_http(
    open_servers: OpenServers, wiring: str, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    url = await open_servers.enter(http_demo_server(srv))
    servers = open_servers({"demo": {"transport": "http", "url": url, "mode": mode}})
    graph = WIRINGS[wiring](servers, ApprovalPolicy(), DUPLICATES["same_id"], checkpointer)
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    [message] = tool_messages(out)
    assert message.status == "error" and "none of them was run" in text(message)
    assert srv.events.counts["delete_file.request"] == 0 and srv.events.counts["read_file.request"] == 0


async def test_a_unique_call_next_to_duplicates_still_runs(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": {"transport": "in_process", "server": srv}})
    calls = [*DUPLICATES["same_id"], call("demo_list_files", "ls")]
    graph = WIRINGS["route_through_gate"](servers, ApprovalPolicy(), calls, checkpointer)
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    by_id = {m.tool_call_id: m for m in tool_messages(out)}
    assert set(by_id) == {"x", "ls"} and by_id["ls"].status != "error"
    assert srv.events.counts["list_files.enter"] == 1 and srv.events.counts["delete_file.request"] == 0
    assert out["messages"][-1].content == "done"


# ------------------------------------------------------------------------------ 3. colliding names


async def colliding(
    open_servers: OpenServers, transport: str, mode: str
) -> tuple[RecordingServer, RecordingServer, dict[str, Any]]:
    """``fs`` publishes ``admin_delete`` and ``fs_admin`` publishes ``delete``: both are ``fs_admin_delete``."""
    fs = RecordingServer("fs", destructive=["admin_delete"], read_only=["read"])
    fs_admin = RecordingServer("fs_admin", destructive=["delete"])
    config = {
        "fs": await open_servers.enter(demo_entry(transport, mode, server=fs.server)),
        "fs_admin": await open_servers.enter(demo_entry(transport, mode, server=fs_admin.server)),
    }
    return fs, fs_admin, config


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_colliding_name_is_denied_by_the_gate(
    open_servers: OpenServers, transport: str, wiring: str, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    fs, fs_admin, config = await colliding(open_servers, transport, mode)
    servers = open_servers(config)
    graph = WIRINGS[wiring](
        servers,
        ApprovalPolicy(tools={"fs_admin_*": "allow"}),
        [call("fs_admin_delete", "d")],
        checkpointer,
    )
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    assert "__interrupt__" not in out
    [message] = tool_messages(out)
    assert message.status == "error" and "more than one server" in text(message)
    assert fs.ran == [] and fs_admin.ran == []


@pytest.mark.parametrize("fan_out", [True, False])
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_colliding_name_is_refused_by_the_tool_node(
    open_servers: OpenServers, transport: str, fan_out: bool, mode: str
) -> None:
    fs, fs_admin, config = await colliding(open_servers, transport, mode)
    servers = open_servers(config)
    out = await plain_graph(servers, [call("fs_admin_delete", "d")], fan_out=fan_out).ainvoke(
        {"messages": [HumanMessage("go")]}, cfg()
    )
    [message] = tool_messages(out)
    assert message.status == "error" and "collision" in text(message)
    assert fs.ran == [] and fs_admin.ran == []
    with pytest.raises(ToolNameCollisionError):
        servers.cached_tool("fs_admin_delete")


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_colliding_name_is_refused_by_the_langchain_tool(
    open_servers: OpenServers, transport: str, mode: str
) -> None:
    fs, fs_admin, config = await colliding(open_servers, transport, mode)
    servers = open_servers(config)
    with pytest.raises(ToolNameCollisionError):
        await servers.get_tools()
    # A tool object made before the other server published the name refuses too.
    [tool] = [t for t in await servers.list_tools(["fs"]) if t.name == "admin_delete"]
    await servers.list_tools(["fs_admin"])
    [lc_tool] = make_langchain_tools(server_access(servers), [tool])
    with pytest.raises(ToolNameCollisionError):
        await lc_tool.ainvoke({"target": "x"})
    assert fs.ran == [] and fs_admin.ran == []


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_resumed_approval_runs_exactly_what_was_shown(
    open_servers: OpenServers, transport: str, wiring: str, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """Approval shown for fs/admin_delete; after a restart the name resolves to fs_admin/delete: nothing runs."""
    fs = RecordingServer("fs", destructive=["admin_delete"])
    fs_admin = RecordingServer("fs_admin", destructive=["delete"])
    saver = checkpointer
    calls = [call("fs_admin_delete", "d", target="everything")]
    before = open_servers({"fs": await open_servers.enter(demo_entry(transport, mode, server=fs.server))})
    out = await WIRINGS[wiring](before, None, calls, saver).ainvoke({"messages": [HumanMessage("go")]}, cfg())
    [pending] = out["__interrupt__"]
    assert (pending.value["server"], pending.value["tool"]) == ("fs", "admin_delete")
    await before.aclose()  # the restart: this process's connections end
    after = open_servers(  # the restart
        {"fs_admin": await open_servers.enter(demo_entry(transport, mode, server=fs_admin.server))}
    )
    graph = WIRINGS[wiring](after, None, calls, saver)
    state = await graph.aget_state(cfg())
    out = await graph.ainvoke(resume_command(state, decisions={"d": {"type": "approve"}}), cfg())
    # The approval is bound to fs/admin_delete: for fs_admin/delete the tool node asks again, naming it.
    [asked] = out["__interrupt__"]
    assert (asked.value["server"], asked.value["tool"]) == ("fs_admin", "delete")
    assert "judged as server 'fs', tool 'admin_delete'" in asked.value["reason"]
    assert fs.ran == [] and fs_admin.ran == []
    out = await graph.ainvoke(resume_command(out, decisions={"d": {"type": "reject"}}), cfg())
    [message] = tool_messages(out)
    assert message.status == "error"
    assert fs.ran == [] and fs_admin.ran == []


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_an_approved_call_runs_on_the_server_shown(
    open_servers: OpenServers, transport: str, mode: str, wiring: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    fs = RecordingServer("fs", destructive=["admin_delete"])
    servers = open_servers({"fs": await open_servers.enter(demo_entry(transport, mode, server=fs.server))})
    graph = WIRINGS[wiring](servers, None, [call("fs_admin_delete", "d", target="a")], checkpointer)
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    out = await graph.ainvoke(resume_command(out, decisions={"d": {"type": "approve"}}), cfg())
    [message] = tool_messages(out)
    assert message.status != "error" and fs.ran == ["admin_delete"]
    ai = next(m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    record = ai.response_metadata["mcp_gate"]["d"]
    assert (record["server"], record["tool"], record["verdict"]) == ("fs", "admin_delete", "approve")
    binding = record["binding"]  # what the tool node checked before it sent the call
    assert (binding["tool_call_id"], binding["server"], binding["tool"]) == ("d", "fs", "admin_delete")
    assert binding["verdict"] == "approve" and binding["thread_id"] == "t"


async def test_the_node_refuses_a_call_the_gate_did_not_judge(open_servers: OpenServers) -> None:
    """A gated message: a call the gate has no decision about is not run, whatever routed it to the node (no
    checkpointer here, so nobody can be asked: an error ToolMessage says why)."""
    srv = build_server()
    servers = open_servers({"demo": {"transport": "in_process", "server": srv}})
    ai = AIMessage(
        "",
        id="ai-1",
        tool_calls=[call("demo_delete_file", "rm", path="todo.txt")],
        response_metadata={"mcp_gate": {}},
    )
    out = await McpToolNode(servers).ainvoke({"messages": [HumanMessage("go"), ai]})
    [message] = out["messages"]
    assert message.status == "error" and "needs a human's approval" in text(message)
    assert "no decision about this call was taken" in text(message)
    assert srv.events.counts["delete_file.request"] == 0
