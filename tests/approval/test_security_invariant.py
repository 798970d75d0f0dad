"""Issue 9 acceptance: in both documented wirings, no destructive call reaches a server without an answered approval.

One scripted model turn mixes a read-only call, destructive calls, a name no server publishes, two calls sharing
an id, a name two servers publish and a call to a server whose ``tools/list`` fails (over real HTTP). What the
servers themselves recorded as run is checked after the pause, after rejecting everything, and after approving
everything (only what a human approved, on the server shown, may run).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolCall, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_mcp import ApprovalPolicy, McpServers, resume_command
from langgraph_mcp.examples.demo_server import DemoServer, build_server, http_app
from tests.support.helpers import serve_asgi
from tests.support.security_support import WIRINGS, CutToolsList, RecordingServer

pytestmark = pytest.mark.anyio


def call(name: str, call_id: str | None, **args: Any) -> ToolCall:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


BATCH = [
    call("demo_list_files", "read-only"),
    call("demo_delete_file", "destructive", path="todo.txt"),
    call("demo_move_file", "no-annotations", src="notes.txt", dst="moved.txt"),  # spec default: destructive
    call("local_calculator", "unknown", x=1),
    call("demo_read_file", "dup", path="notes.txt"),
    call("demo_delete_file", "dup", path="notes.txt"),
    call("demo_delete_file", None, path="notes.txt"),
    call("fs_admin_delete", "colliding", target="everything"),
    call("down_delete_file", "unreachable", path="todo.txt"),
]
ASKED = {"destructive", "no-annotations", "unreachable"}


@dataclass
class World:
    demo: DemoServer
    down: DemoServer
    fs: RecordingServer
    fs_admin: RecordingServer
    servers: McpServers

    def destructive_runs(self) -> dict[str, int]:
        """Every destructive tool body run or request the servers recorded (none may happen unapproved)."""
        return {
            "demo.delete_file": self.demo.events.counts["delete_file.request"],
            "demo.move_file": self.demo.events.counts["move_file.request"],
            "down.delete_file": self.down.events.counts["delete_file.request"],
            "fs.admin_delete": self.fs.ran.count("admin_delete"),
            "fs_admin.delete": self.fs_admin.ran.count("delete"),
        }


@pytest.fixture(params=["auto", "legacy"])
async def world(request: pytest.FixtureRequest) -> AsyncIterator[World]:
    down = build_server("down")
    async with serve_asgi(CutToolsList(http_app(down), cuts=1_000, mode="error")) as base:
        demo = build_server()
        fs = RecordingServer("fs", destructive=["admin_delete"])
        fs_admin = RecordingServer("fs_admin", destructive=["delete"])
        config = {
            "demo": {"transport": "in_process", "server": demo, "mode": request.param},
            "fs": {"transport": "in_process", "server": fs.server},
            "fs_admin": {"transport": "in_process", "server": fs_admin.server},
            "down": {
                "transport": "http",
                "url": f"{base}/mcp",
                "mode": request.param,
                "connect_timeout": 10,
            },
        }
        async with aclosing(McpServers(config, on_connection_error="ignore")) as servers:
            yield World(demo, down, fs, fs_admin, servers)


def answers(out: dict[str, Any]) -> dict[str, ToolMessage]:
    found: dict[str, ToolMessage] = {}
    for message in out["messages"]:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id not in found, f"two ToolMessages for {message.tool_call_id!r}"
            found[message.tool_call_id] = message
    return found


NOTHING_RAN = {
    "demo.delete_file": 0,
    "demo.move_file": 0,
    "down.delete_file": 0,
    "fs.admin_delete": 0,
    "fs_admin.delete": 0,
}


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
async def test_no_destructive_call_runs_without_an_answered_approval(
    world: World, wiring: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    graph = WIRINGS[wiring](world.servers, ApprovalPolicy(), BATCH, checkpointer)
    cfg: Any = {"configurable": {"thread_id": "reject"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    asked = {i.value["tool_call_id"]: i.value for i in out["__interrupt__"]}
    assert set(asked) == ASKED
    assert asked["unreachable"]["server"] is None and "'down'" in asked["unreachable"]["reason"]
    assert world.destructive_runs() == NOTHING_RAN
    assert world.demo.events.counts["list_files.enter"] == 1 or wiring == "gate_router"

    rejected = {call_id: {"type": "reject", "message": "no"} for call_id in asked}
    out = await graph.ainvoke(resume_command(out, decisions=rejected), cfg)
    assert "__interrupt__" not in out
    assert world.destructive_runs() == NOTHING_RAN
    results = answers(out)
    assert set(results) == {
        "read-only",
        "destructive",
        "no-annotations",
        "unknown",
        "dup",
        "",
        "colliding",
        "unreachable",
    }
    assert results["read-only"].status != "error"
    assert all(results[i].status == "error" for i in results if i != "read-only")
    assert world.demo.events.counts["list_files.enter"] == 1
    assert out["messages"][-1].content == "done"


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
async def test_approving_everything_runs_only_what_was_shown(
    world: World, wiring: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    graph = WIRINGS[wiring](world.servers, ApprovalPolicy(), BATCH, checkpointer)
    cfg: Any = {"configurable": {"thread_id": "approve"}}
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg)
    asked = {i.value["tool_call_id"] for i in out["__interrupt__"]}
    out = await graph.ainvoke(resume_command(out, decisions={i: {"type": "approve"} for i in asked}), cfg)
    assert "__interrupt__" not in out
    # Approved and shown with its server: ran once. The blind approval (owner unknown) ran nothing.
    assert world.destructive_runs() == {**NOTHING_RAN, "demo.delete_file": 1, "demo.move_file": 1}
    results = answers(out)
    assert results["unreachable"].status == "error"
    assert "todo.txt" not in world.demo.workspace and "todo.txt" in world.down.workspace
