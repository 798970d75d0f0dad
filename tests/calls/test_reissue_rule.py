"""The one re-issue rule for a parked legacy call (``calls/paused.py``'s ``may_reissue``), after the park timeout.

A parked call whose round outlived ``park_timeout`` is cancelled on the server. It is sent again on resume only
when its first attempt can no longer complete (here: the server confirmed the cancellation by withdrawing its
question) or its tool may run twice; otherwise the resume gets an error saying the first attempt may still
complete. The servers here ignore cancellation the way many do: the question is shielded, and a failed question is
taken as "go on" — so the first attempt completes after the client gives up on it. Counted from the server's own
record. (Past ``max_parked_calls``: ``test_parked_cap_side_effects.py``; on another worker: ``test_node_durable.py``
and ``test_multiworker.py``.)
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from mcp.server.mcpserver import AcceptedElicitation, Context
from mcp.types import ToolAnnotations
from pydantic import BaseModel

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from tests.support.helpers import HANG_GUARD, OpenServers
from tests.support.node_support import (
    TOMORROW,
    accept_all,
    call,
    in_process,
    one_turn_graph,
    start,
    text_of,
    tool_messages,
)

pytestmark = pytest.mark.anyio

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})


class Confirm(BaseModel):
    ok: bool


def stubborn_server() -> DemoServer:
    """The demo server plus two tools that ignore a cancellation (their question is shielded from it, so the server
    never withdraws it) and go on when the question fails: ``pay`` (not idempotent) and ``fetch_report``
    (idempotent)."""
    server = build_server()
    rec = server.events.record

    async def ask_stubbornly(ctx: Context, tool: str, message: str) -> None:
        rec(tool, "enter")
        try:
            with anyio.CancelScope(shield=True):
                answer = await ctx.elicit(message, Confirm)
            rec(tool, f"answered:{'accept' if isinstance(answer, AcceptedElicitation) else answer.action}")
        except Exception:
            rec(tool, "question_failed")
        rec(tool, "commit")

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
    )
    async def pay(payee: str, ctx: Context) -> str:
        """Ask for confirmation, then pay ``payee`` (whatever happened to the question)."""
        await ask_stubbornly(ctx, "pay", f"Pay {payee}?")
        return f"paid {payee}"

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
    )
    async def fetch_report(report: str, ctx: Context) -> str:
        """Ask for confirmation, then (re)build ``report`` (idempotent)."""
        await ask_stubbornly(ctx, "fetch_report", f"Build {report}?")
        return f"report {report}"

    return server


def config() -> Any:
    return {"configurable": {"thread_id": "t"}}


async def paused_past_its_timeout(
    open_servers: OpenServers, server: DemoServer, tool: str, **args: Any
) -> Any:
    """``tool`` paused in its question on a legacy connection with a short park timeout, the timeout passed and
    its first attempt given up on (what the server recorded: the question failed, and the tool went on)."""
    servers = open_servers({"shop": in_process(server, "legacy", park_timeout=0.2)})
    graph = one_turn_graph(
        servers, [call(f"shop_{tool}", "c1", **args)], InMemorySaver(), policy=NO_APPROVALS
    )
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    with anyio.fail_after(HANG_GUARD):
        await server.events.reached(f"{tool}.commit")  # the first attempt completed after the client gave up
    assert server.events.counts[f"{tool}.question_failed"] == 1
    return graph, pending


async def test_past_the_park_timeout_a_call_that_may_still_complete_is_not_sent_again(
    open_servers: OpenServers,
) -> None:
    server = stubborn_server()
    graph, pending = await paused_past_its_timeout(open_servers, server, "pay", payee="bob")
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    message = tool_messages(out)["c1"]
    assert message.status == "error"
    assert "first attempt may still complete" in text_of(message)
    assert server.events.counts["pay.enter"] == 1  # not sent again: one payment, the first attempt's
    assert server.events.counts["pay.commit"] == 1


async def test_past_the_park_timeout_an_idempotent_call_is_sent_again(open_servers: OpenServers) -> None:
    server = stubborn_server()
    graph, pending = await paused_past_its_timeout(open_servers, server, "fetch_report", report="q3")
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert text_of(tool_messages(out)["c1"]) == "report q3"
    assert server.events.counts["fetch_report.enter"] == 2  # sent again: it may run twice
    assert server.events.counts["fetch_report.answered:accept"] == 1


async def test_past_the_park_timeout_a_call_whose_cancellation_the_server_confirmed_is_sent_again(
    open_servers: OpenServers,
) -> None:
    server = build_server()  # the SDK's server withdraws a cancelled call's question
    servers = open_servers({"demo": in_process(server, "legacy", park_timeout=0.2)})
    graph = one_turn_graph(
        servers,
        [call("demo_book_trip_legacy", "c1", destination="Rome")],
        InMemorySaver(),
        policy=NO_APPROVALS,
    )
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    with anyio.fail_after(HANG_GUARD):
        await server.events.reached("server.cancelled")
    out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    assert server.events.counts["book_trip_legacy.commit"] == 1


async def test_resumed_elsewhere_while_its_holder_is_alive_a_call_is_not_sent_again_and_after_it_closed_it_is(
    open_servers: OpenServers,
) -> None:
    """On another worker (here another ``McpServers`` in this process, as a second worker would be): the question
    names where its call is held open (``held_by``). While that connection is alive the first attempt may still
    complete, so a tool that may not run twice is not sent again; once it has closed, the call is sent again."""
    server = build_server()
    saver = InMemorySaver()
    first, second = (
        open_servers({"demo": in_process(server, "legacy")}),
        open_servers({"demo": in_process(server, "legacy")}),
    )

    def graph(servers: Any, call_id: str) -> Any:
        trip = call("demo_book_trip_legacy", call_id, destination="Rome")
        return one_turn_graph(servers, [trip], saver, policy=NO_APPROVALS)

    held: dict[str, Any] = {}
    for thread in ("alive", "closed"):
        out = await graph(first, "c1").ainvoke(start(), {"configurable": {"thread_id": thread}})
        (held[thread],) = out["__interrupt__"]
        assert held[thread].value["held_by"]

    out = await graph(second, "c1").ainvoke(
        Command(resume={held["alive"].id: accept_all(held["alive"])}),
        {"configurable": {"thread_id": "alive"}},
    )
    message = tool_messages(out)["c1"]
    assert message.status == "error" and "first attempt may still complete" in text_of(message)
    assert server.events.counts["book_trip_legacy.commit"] == 0

    await first.aclose()  # its connection, and the calls it held open, are gone
    out = await graph(second, "c1").ainvoke(
        Command(resume={held["closed"].id: accept_all(held["closed"])}),
        {"configurable": {"thread_id": "closed"}},
    )
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    assert server.events.counts["book_trip_legacy.commit"] == 1
