"""The fault matrix (issue 10): each fault over stdio and streamable HTTP, in both eras, through a real graph.

Every cell runs the README-shaped graph (``McpToolNode`` then a next step, with a checkpointer) against the demo
server and asserts what the user sees: an error ``ToolMessage`` (or the result, where the fault is recovered, or
a still-pending interrupt), within the configured timeouts; the graph's next step ran; no server process is left
behind (checked by PID). Faults are real: the stdio server is killed by PID or kills itself, the HTTP server
(uvicorn on 127.0.0.1 in the test's loop) is stopped hard and restarted on the same port, or its response is cut
mid-body by an ASGI wrapper.

Set ``FAULT_MATRIX_REPORT=<file>`` to append each cell's measured time-to-outcome (for the README table).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from langgraph_mcp import ApprovalPolicy, McpServers, McpToolNode
from langgraph_mcp.examples.demo_server import DemoServer, build_server, http_app
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.checkpointers import StrictSaver
from tests.support.faults import CutResponses, calls_tool
from tests.support.helpers import (
    ERAS,
    TRANSPORTS,
    LoopbackUvicorn,
    child_pids,
    crashing_demo_spec,
    event_pids,
    free_port,
    wait_exit,
    wait_for_writes,
)
from tests.support.node_support import TOMORROW, accept_all, text_of, tool_messages

pytestmark = pytest.mark.anyio

FAULT_TRANSPORTS = [t for t in TRANSPORTS if t != "in_process"]  # a fault needs a process or a socket
OPTIONS = {"connect_timeout": 5, "tool_timeout": 5, "reconnect_backoff": 0.05, "retries": 2}
HANG_TIMEOUT = 1.0

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""These tests are about transport faults, not approvals: the tool node runs every call unasked."""


@dataclass
class Rig:
    """One transport's server plus the faults that can be done to it."""

    transport: str
    era: str
    servers: McpServers
    events: Path
    app: CutResponses | None = None
    _restart: Callable[[], Any] | None = None
    demo: DemoServer | None = None
    started: float = field(default_factory=time.monotonic)

    def pids(self, tool: str) -> list[int]:
        return event_pids(self.events, tool)

    async def kill_or_restart(self) -> None:
        """The server goes away between calls: stdio killed by PID, HTTP stopped hard and started again."""
        if self.transport == "stdio":
            pid = (await self.servers.call_tool("demo_stats", {})).structured_content["pid"]  # type: ignore[index]
            os.kill(pid, signal.SIGKILL)
            await wait_exit(pid)
            # "Between calls": the client has read the end of the dead server's stdout (milliseconds later). A
            # call sent in the instant before that meets a dead pipe and is reported as maybe-run, honestly.
            with anyio.fail_after(10):
                await server_access(self.servers).connections.connection("demo").owner.transport_ended()
        else:
            assert self._restart is not None
            await self._restart()


class _Uvicorn:
    """uvicorn on a fixed 127.0.0.1 port inside a task group, stoppable hard and restartable."""

    def __init__(self, tg: anyio.abc.TaskGroup, port: int) -> None:
        self.tg, self.port = tg, port
        self.server: LoopbackUvicorn | None = None
        self.done: anyio.Event | None = None

    async def start(self, app: Any) -> None:
        server = LoopbackUvicorn(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        done = anyio.Event()

        async def serve() -> None:
            try:
                await server.serve()
            finally:
                done.set()

        self.server, self.done = server, done
        self.tg.start_soon(serve)
        with anyio.fail_after(10):
            await server.ready.wait()
        assert server.started, f"uvicorn could not start again on port {self.port}"

    async def stop(self) -> None:
        if self.server is not None and self.done is not None:
            self.server.should_exit = self.server.force_exit = True
            with anyio.fail_after(10):
                await self.done.wait()


@asynccontextmanager
async def rig(transport: str, era: str, tmp_path: Path, **options: Any) -> AsyncIterator[Rig]:
    events = tmp_path / "events.jsonl"
    spec = {"mode": era, **OPTIONS, **options}
    before = child_pids()
    if transport == "stdio":
        async with aclosing(McpServers({"demo": crashing_demo_spec(events_file=events, **spec)})) as servers:
            yield Rig(transport, era, servers, events)
        assert child_pids() == before  # no orphan server process
        return
    os.environ["DEMO_EVENTS_FILE"] = str(events)
    try:
        async with anyio.create_task_group() as tg:
            http = _Uvicorn(tg, free_port())
            demo = build_server()
            app = CutResponses(http_app(demo), calls_tool("echo"), limit=0)
            await http.start(app)
            servers = McpServers({"demo": {"url": f"http://127.0.0.1:{http.port}/mcp", **spec}})
            the_rig = Rig(transport, era, servers, events, app=app, demo=demo)

            async def restart() -> None:
                await http.stop()
                the_rig.demo = build_server()
                the_rig.app = CutResponses(http_app(the_rig.demo), calls_tool("echo"), limit=0)
                await http.start(the_rig.app)

            the_rig._restart = restart
            try:
                yield the_rig
            finally:
                await servers.aclose()
                await http.stop()
    finally:
        os.environ.pop("DEMO_EVENTS_FILE", None)
    assert child_pids() == before


def graph_of(servers: McpServers, name: str, args: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """START → agent (one tool call) → tools (McpToolNode) → after (the next step) → END, with a checkpointer."""

    def after(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="next step ran", id="after")]}

    builder = StateGraph(MessagesState)
    builder.add_node("tools", McpToolNode(servers, policy=NO_APPROVALS))
    builder.add_node("after", after)
    builder.add_edge(START, "tools")
    builder.add_edge("tools", "after")
    builder.add_edge("after", END)
    call = AIMessage(content="", tool_calls=[{"id": "c1", "name": name, "args": args, "type": "tool_call"}])
    return builder.compile(checkpointer=StrictSaver()), {"messages": [call]}


def report(cell: str, rig_: Rig, outcome: str) -> None:
    path = os.environ.get("FAULT_MATRIX_REPORT")
    if path:
        elapsed = round(time.monotonic() - rig_.started, 2)
        row = {
            "cell": cell,
            "transport": rig_.transport,
            "era": rig_.era,
            "outcome": outcome,
            "seconds": elapsed,
        }
        with open(path, "a") as f:
            f.write(json.dumps(row) + "\n")


CFG = {"configurable": {"thread_id": "t"}}
cells = pytest.mark.parametrize("era", ERAS)
transports = pytest.mark.parametrize("transport", FAULT_TRANSPORTS)


@cells
@transports
async def test_connection_lost_during_a_non_idempotent_call(transport: str, era: str, tmp_path: Path) -> None:
    """stdio: the server process dies inside the call; HTTP: the response is cut mid-body."""
    async with rig(transport, era, tmp_path) as r:
        await r.servers.list_tools()
        if transport == "stdio":
            tool, args = "demo_crash", {}
        else:
            assert r.app is not None
            r.app.limit = None
            tool, args = "demo_echo", {"text": "hi"}
        r.started = time.monotonic()
        graph, state = graph_of(r.servers, tool, args)
        out = await graph.ainvoke(state, CFG)
        message = tool_messages(out)["c1"]
        assert message.status == "error"
        assert "may or may not have run" in text_of(message)
        assert out["messages"][-1].content == "next step ran"
        report(
            "connection lost during a non-idempotent call", r, "error ToolMessage: may or may not have run"
        )
        if r.app is not None:
            r.app.limit = 0
        assert (await r.servers.call_tool("demo_add", {"a": 1, "b": 1})).structured_content == {"result": 2}


@cells
@transports
async def test_connection_lost_during_a_read_only_call_is_retried(
    transport: str, era: str, tmp_path: Path
) -> None:
    """stdio: the server is killed by PID while the call runs; HTTP: the response is cut mid-body once."""
    async with rig(transport, era, tmp_path) as r:
        await r.servers.list_tools()
        r.started = time.monotonic()
        graph, state = graph_of(r.servers, "demo_sleep", {"seconds": 0.3})
        if transport == "http":
            assert r.app is not None
            r.app.rule, r.app.limit = calls_tool("sleep"), 1
            out = await graph.ainvoke(state, CFG)
        else:
            async with anyio.create_task_group() as tg:
                result: dict[str, Any] = {}

                async def run() -> None:
                    result["out"] = await graph.ainvoke(state, CFG)

                tg.start_soon(run)
                await wait_for_writes(
                    r.events.parent, lambda: bool(r.pids("sleep"))
                )  # the server is in the call
                os.kill(r.pids("sleep")[0], signal.SIGKILL)
            out = result["out"]
        message = tool_messages(out)["c1"]
        assert message.status == "success", text_of(message)
        assert text_of(message) == "slept 0.3s"
        assert out["messages"][-1].content == "next step ran"
        report("connection lost during a read-only call", r, "retried: result ToolMessage")


@cells
@transports
async def test_server_gone_between_calls_is_restarted_or_reconnected(
    transport: str, era: str, tmp_path: Path
) -> None:
    async with rig(transport, era, tmp_path) as r:
        await r.servers.list_tools()
        await r.kill_or_restart()
        r.started = time.monotonic()
        graph, state = graph_of(r.servers, "demo_echo", {"text": "back"})
        out = await graph.ainvoke(state, CFG)
        message = tool_messages(out)["c1"]
        assert message.status == "success", text_of(message)
        assert text_of(message) == "back"
        assert out["messages"][-1].content == "next step ran"
        assert r.servers.server_status("demo")["state"] == "connected"
        report("server gone between calls", r, "restarted / reconnected: result ToolMessage")


@cells
@transports
async def test_a_hanging_tool_ends_with_an_error_at_its_timeout(
    transport: str, era: str, tmp_path: Path
) -> None:
    async with rig(transport, era, tmp_path, tool_timeout=HANG_TIMEOUT) as r:
        await r.servers.list_tools()
        r.started = time.monotonic()
        graph, state = graph_of(r.servers, "demo_sleep", {"seconds": 60})
        with anyio.fail_after(HANG_TIMEOUT + 10):
            out = await graph.ainvoke(state, CFG)
        message = tool_messages(out)["c1"]
        assert message.status == "error"
        assert "did not finish within 1s" in text_of(message)
        assert out["messages"][-1].content == "next step ran"
        report("tool hangs", r, "error ToolMessage at tool_timeout")
        assert (await r.servers.call_tool("demo_add", {"a": 1, "b": 1})).structured_content == {"result": 2}


@cells
@transports
async def test_server_gone_while_a_question_is_pending_keeps_the_interrupt(
    transport: str, era: str, tmp_path: Path
) -> None:
    async with rig(transport, era, tmp_path) as r:
        graph, state = graph_of(r.servers, "demo_book_trip", {"destination": "Rome"})
        out = await graph.ainvoke(state, CFG)
        (pending,) = out["__interrupt__"]
        await r.kill_or_restart()
        r.started = time.monotonic()
        snapshot = await graph.aget_state(CFG)
        assert [i.id for i in snapshot.interrupts] == [pending.id]  # still pending after the fault
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), CFG)
        message = tool_messages(out)["c1"]
        assert message.status == "success", text_of(message)
        assert text_of(message) == f"Booked Rome on {TOMORROW}"
        assert out["messages"][-1].content == "next step ran"
        report("server gone while a question is pending", r, "interrupt kept; resume completes")
