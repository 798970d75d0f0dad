"""What a parked legacy call keeps alive: nothing of the graph run it paused, and after a resume its progress and
logs stream to the resumed run.

A legacy call parked inside its ``elicitation/create`` outlives the graph run that started it (the run pauses; the
call stays open on the server until the answer comes). It must keep only what the call itself needs: holding the
run's context or stream writer would keep the whole paused run (its pregel loop, config, callbacks) in memory for
as long as the call waits for a human.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel._loop import AsyncPregelLoop
from langgraph.types import Command
from mcp.server.mcpserver import AcceptedElicitation, Context, MCPServer
from pydantic import BaseModel

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.connection.legacy_calls import CallHandle
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import OpenServers, http_demo_server
from tests.support.node_support import call, in_process, one_turn_graph, start, text_of, tool_messages

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""Not about approvals: the tool node runs every call unasked (since issue 19 it asks about destructive and
unannotated tools by default)."""

pytestmark = pytest.mark.anyio

TRANSPORTS = ["in_process", "http"]


class Trip(BaseModel):
    date: str


def stepped_server() -> MCPServer:
    srv = MCPServer("steps")

    @srv.tool()
    async def book(destination: str, ctx: Context) -> str:
        """Report progress, ask for a date, then log and report progress again."""
        await ctx.report_progress(1, 2, "before the question")
        result = await ctx.elicit(f"When do you want to travel to {destination}?", Trip)
        if not isinstance(result, AcceptedElicitation):
            return f"not booked: {result.action}"
        await ctx.info(f"booking {destination} on {result.data.date}")
        await ctx.report_progress(2, 2, "after the answer")
        return f"Booked {destination} on {result.data.date}"

    return srv


async def steps_servers(open_servers: OpenServers, transport: str) -> Any:
    srv = stepped_server()
    if transport == "http":
        url = await open_servers.enter(http_demo_server(srv))
        return open_servers({"steps": {"url": url, "mode": "legacy"}})
    return open_servers({"steps": {"transport": "in_process", "server": srv, "mode": "legacy"}})


def pregel_loops() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, AsyncPregelLoop)}


def call_handles() -> list[CallHandle]:
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, CallHandle)]


def answer(pending: Any, date: str) -> dict[str, Any]:
    (key,) = pending.value["requests"]
    return {pending.id: {key: {"action": "accept", "content": {"date": date}}}}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_parked_legacy_call_keeps_nothing_of_the_run_it_paused(
    open_servers: OpenServers, transport: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    servers = await steps_servers(open_servers, transport)
    graph = one_turn_graph(
        servers, [call("steps_book", "c1", destination="Rome")], checkpointer, policy=NO_APPROVALS
    )
    cfg: Any = {"configurable": {"thread_id": "t"}}
    await servers.list_tools()
    before = pregel_loops()
    out = await graph.ainvoke(start(), cfg)
    (pending,) = out["__interrupt__"]
    assert (
        len(server_access(servers).connections.paused_rounds("steps")) == 1
    )  # parked, not cancelled: the fast path stays available
    assert pregel_loops() - before == set(), "the parked call keeps its paused graph run alive"
    out = await graph.ainvoke(Command(resume=answer(pending, "2027-05-01")), cfg)
    assert text_of(tool_messages(out)["c1"]) == "Booked Rome on 2027-05-01"
    assert pregel_loops() - before == set(), "a finished call keeps a graph run alive"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_resumed_legacy_call_streams_its_progress_and_logs_to_the_resumed_run(
    open_servers: OpenServers, transport: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    servers = await steps_servers(open_servers, transport)
    graph = one_turn_graph(
        servers, [call("steps_book", "c1", destination="Rome")], checkpointer, policy=NO_APPROVALS
    )
    cfg: Any = {"configurable": {"thread_id": "t"}}
    first = [e async for e in graph.astream(start(), cfg, stream_mode="custom")]
    (pending,) = (await graph.aget_state(cfg)).interrupts
    resumed = [
        e
        async for e in graph.astream(Command(resume=answer(pending, "2027-05-01")), cfg, stream_mode="custom")
    ]
    where = {"tool_call_id": "c1", "server": "steps", "tool": "book"}
    progress = [(e["progress"], e["message"]) for e in first if e.get("type") == "mcp_progress"]
    assert progress == [(1, "before the question")]
    assert all({k: e[k] for k in where} == where for e in first + resumed)
    assert [(e["progress"], e["message"]) for e in resumed if e.get("type") == "mcp_progress"] == [
        (2, "after the answer")
    ]
    assert [e["data"] for e in resumed if e.get("type") == "mcp_log"] == ["booking Rome on 2027-05-01"]
    state = await graph.aget_state(cfg)
    assert text_of(tool_messages(state.values)["c1"]) == "Booked Rome on 2027-05-01"


async def test_a_finished_legacy_call_is_freed_at_once(open_servers: OpenServers) -> None:
    """The call's request leaves timers behind (cancelled, they stay in the loop's heap until their deadline, with a
    copy of the request's context): that copy must not keep the finished call's handle alive."""
    servers = open_servers({"demo": in_process(build_server(), "legacy")})
    for i in range(3):
        result = await servers.call_tool("demo_add", {"a": i, "b": 1})
        assert result.structured_content == {"result": i + 1}
    assert call_handles() == []
