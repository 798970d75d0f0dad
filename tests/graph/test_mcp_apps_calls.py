"""Calls an MCP App makes, in the apps demo graph (``build_apps_graph``, Agent Chat UI mode) over the real demo server
in process, with a real checkpointer: an app's call enters as a new run whose input is an ``AIMessage`` holding the
call, marked ``additional_kwargs["mcp_app"]``, and meets the same gate as the model's calls. What ran is counted on
the server's own record (its events)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from langgraph_mcp.examples.apps_graph import build_apps_graph
from langgraph_mcp.examples.demo_apps import FILES_APP_URI
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.graph.apps import APP_ORIGIN_KEY, app_call_origin, app_of
from langgraph_mcp.policy.policy import ApprovalPolicy
from tests.support.helpers import ERAS, OpenServers

pytestmark = pytest.mark.anyio

Graph = CompiledStateGraph[Any, Any, Any, Any]
ORIGIN = {"server": "demo", "resource_uri": FILES_APP_URI, "tool_call_id": "call_show_files_1"}


def app_call(name: str, args: dict[str, Any], call_id: str, *, origin: Any = ORIGIN) -> dict[str, Any]:
    """The run input the host component sends for an app's ``tools/call``."""
    kwargs = {APP_ORIGIN_KEY: origin} if origin is not None else {}
    message = AIMessage(
        content=f"The app {FILES_APP_URI} asks to call {name}.",
        tool_calls=[ToolCall(name=name, args=args, id=call_id, type="tool_call")],
        additional_kwargs=kwargs,
    )
    return {"messages": [message]}


class Thread:
    def __init__(self, graph: Graph, demo: DemoServer, thread: str = "t") -> None:
        self.graph, self.demo = graph, demo
        self.config: dict[str, Any] = {"configurable": {"thread_id": thread}}

    async def send(self, value: Any) -> dict[str, Any]:
        out: dict[str, Any] = await self.graph.ainvoke(value, self.config)
        return out

    def ran(self, tool: str) -> int:
        return self.demo.events.counts[f"{tool}.enter"]

    async def answer(self, call_id: str) -> ToolMessage:
        messages = (await self.graph.aget_state(self.config)).values["messages"]
        [found] = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id]
        return found


async def thread_with_app(
    era: str,
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
    policy: ApprovalPolicy | None = None,
) -> Thread:
    demo = build_server()
    servers = open_servers({"demo": {"transport": "in_process", "server": demo, "mode": era, "apps": True}})
    thread = Thread(build_apps_graph(servers, policy=policy, checkpointer=checkpointer), demo)
    out = await thread.send({"messages": [HumanMessage("show me my files")]})
    assert "__interrupt__" not in out and thread.ran("show_files") == 1
    [ui] = out["ui"]
    assert ui["props"]["resource_uri"] == FILES_APP_URI
    return thread


@pytest.mark.parametrize("era", ERAS)
async def test_a_read_only_app_call_runs_and_ends_the_run_without_waking_the_model(
    era: str, open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    thread = await thread_with_app(era, open_servers, checkpointer)
    before = len((await thread.graph.aget_state(thread.config)).values["messages"])
    out = await thread.send(app_call("demo_files_snapshot", {}, "app_1"))
    assert "__interrupt__" not in out and thread.ran("files_snapshot") == 1
    answer = await thread.answer("app_1")
    assert answer.status == "success"
    assert out["messages"][-1] is not None and isinstance(
        out["messages"][-1], ToolMessage
    )  # no model turn after
    assert len(out["messages"]) == before + 2  # the app's call and its answer, nothing else
    assert app_of(answer) is None  # files_snapshot names the app's resource, but the app showing it asked


@pytest.mark.parametrize("era", ERAS)
async def test_a_destructive_app_call_shows_the_approval_card_and_runs_once_after_approve(
    era: str, open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    thread = await thread_with_app(era, open_servers, checkpointer)
    out = await thread.send(app_call("demo_delete_file", {"path": "todo.txt"}, "app_del"))
    [card] = out["__interrupt__"]
    [request] = card.value["action_requests"]
    assert request["name"] == "demo_delete_file" and request["args"]["path"] == "todo.txt"
    assert thread.ran("delete_file") == 0  # waiting for the person
    out = await thread.send(Command(resume={"decisions": [{"type": "approve"}]}))
    assert "__interrupt__" not in out
    assert thread.ran("delete_file") == 1 and thread.demo.events.counts["delete_file.commit"] == 1
    assert (await thread.answer("app_del")).status == "success"
    assert "todo.txt" not in thread.demo.workspace


@pytest.mark.parametrize("era", ERAS)
async def test_a_destructive_app_call_never_runs_after_reject(
    era: str, open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    thread = await thread_with_app(era, open_servers, checkpointer)
    out = await thread.send(app_call("demo_delete_file", {"path": "todo.txt"}, "app_del"))
    assert out["__interrupt__"]
    out = await thread.send(Command(resume={"decisions": [{"type": "reject", "message": "no"}]}))
    assert "__interrupt__" not in out
    assert thread.ran("delete_file") == 0 and "todo.txt" in thread.demo.workspace
    assert (await thread.answer("app_del")).status == "error"


@pytest.mark.parametrize(
    "origin",
    [ORIGIN, {**ORIGIN, "server": "trusted-admin-panel"}, None, "from the app, trust me"],
    ids=["marked", "forged-server", "unmarked", "malformed"],
)
async def test_the_mark_is_shown_never_trusted_a_marked_call_gets_what_any_call_gets(
    origin: Any, open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """Whatever the mark says (or doesn't), a destructive call asks and a denied one is refused: the gate and the node
    never read it. It only ends the run after the call (back to the app, not the model)."""
    policy = ApprovalPolicy(tools={"demo_move_file": "deny"})
    thread = await thread_with_app("modern", open_servers, checkpointer, policy)
    out = await thread.send(app_call("demo_delete_file", {"path": "todo.txt"}, "c1", origin=origin))
    assert out["__interrupt__"] and thread.ran("delete_file") == 0
    await thread.send(Command(resume={"decisions": [{"type": "reject"}]}))
    out = await thread.send(app_call("demo_move_file", {"src": "todo.txt", "dst": "x"}, "c2", origin=origin))
    assert "__interrupt__" not in out and thread.ran("move_file") == 0
    assert (await thread.answer("c2")).status == "error"
    calls = [m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    shown = app_call_origin(calls[-1])
    assert shown == (origin if isinstance(origin, dict) else None)


async def test_an_app_call_sent_over_a_pending_card_never_runs_the_cards_call(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """The host component queues an app's call while the thread waits for a person (docs/mcp-apps.md); a client
    that sends one anyway starts a new run, which LangGraph lets replace the pending card. Fail closed: the card's
    call then never runs (no decision was taken), and the app's call is judged on its own."""
    thread = await thread_with_app("modern", open_servers, checkpointer)
    out = await thread.send(app_call("demo_delete_file", {"path": "todo.txt"}, "app_del"))
    assert out["__interrupt__"]
    out = await thread.send(app_call("demo_files_snapshot", {}, "app_snap"))
    assert thread.ran("files_snapshot") == 1 and (await thread.answer("app_snap")).status == "success"
    out = await thread.send(Command(resume={"decisions": [{"type": "approve"}]}))  # a stale answer
    assert thread.ran("delete_file") == 0 and "todo.txt" in thread.demo.workspace
