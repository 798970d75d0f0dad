"""Past ``max_parked_calls`` a legacy pause is never cancelled-and-replayed for a tool that may not safely run
twice: its pause gets an error ToolMessage naming the cap and the setting instead (issue 23 item 1).

Many servers do not honour ``notifications/cancelled``: the ``pay`` tool here, like the one seen in the issue,
goes on and pays whatever happened to its question. Replaying its call on resume paid a second time. Read-only
and idempotent tools (trusted hints only) keep the replay. Counts come from the server's own record.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Command
from mcp.server.mcpserver import AcceptedElicitation, Context
from mcp.types import ToolAnnotations
from pydantic import BaseModel

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import OpenServers, http_demo_server
from tests.support.node_support import accept_all, call, one_turn_graph, start, text_of, tool_messages

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""Not about approvals: the tool node runs every call unasked (since issue 19 it asks about destructive and
unannotated tools by default)."""

pytestmark = pytest.mark.anyio


class Confirm(BaseModel):
    ok: bool


def paying_server() -> DemoServer:
    """The demo server plus ``pay`` (asks, then pays; not idempotent) and ``lookup_invoice`` (asks; idempotent).
    Neither honours a cancellation: ``pay`` pays whatever happened to its question."""
    server = build_server()

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
    )
    async def pay(payee: str, ctx: Context) -> str:
        """Ask for confirmation, then pay ``payee``."""
        server.events.record("pay", "enter")
        try:
            answer = await ctx.elicit(f"Pay {payee}?", Confirm)
            declined = not isinstance(answer, AcceptedElicitation)
        except BaseException:
            declined = False
        if not declined:
            server.events.record("pay", "commit", payee=payee)
            server.events.record("pay", f"paid:{payee}")
        return f"paid {payee}"

    @server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
    )
    async def lookup_invoice(number: str, ctx: Context) -> str:
        """Ask which year, then look the invoice up (idempotent: safe to run twice)."""
        server.events.record("lookup_invoice", "enter")
        answer = await ctx.elicit(f"Which year is invoice {number} from?", Confirm)
        server.events.record("lookup_invoice", f"answered:{answer.action}")
        return f"invoice {number}"

    return server


def thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


async def two_pauses(open_servers: OpenServers, tool: str, **options: Any) -> tuple[DemoServer, Any, Any]:
    """Two threads calling ``tool`` on a legacy HTTP server with ``max_parked_calls=1``: the first pauses and
    stays parked; returns the server, the graphs and the first thread's interrupt."""
    server = paying_server()
    url = await open_servers.enter(http_demo_server(server))
    spec = {"url": url, "mode": "legacy", "max_parked_calls": 1, "tool_timeout": 10, **options}
    servers = open_servers({"shop": spec})
    arg = "payee" if tool == "pay" else "number"
    graphs = {
        name: one_turn_graph(
            servers, [call(f"shop_{tool}", "c1", **{arg: name})], StrictSaver(), policy=NO_APPROVALS
        )
        for name in ("alice", "bob")
    }
    first = await graphs["alice"].ainvoke(start(), thread("alice"))
    (pending,) = first["__interrupt__"]
    assert server_access(servers).connections.paused_rounds("shop").open_legacy_calls() == 1
    return server, graphs, pending


async def resume(graph: Any, name: str, interrupt: Any) -> Any:
    return await graph.ainvoke(Command(resume={interrupt.id: accept_all(interrupt)}), thread(name))


async def test_a_pause_past_the_cap_of_a_non_idempotent_tool_is_an_error_and_pays_at_most_once(
    open_servers: OpenServers,
) -> None:
    server, graphs, alice = await two_pauses(open_servers, "pay")
    out = await graphs["bob"].ainvoke(start(), thread("bob"))
    if "__interrupt__" in out:  # the old behaviour: cancelled on the server, replayed on resume
        (bob,) = out["__interrupt__"]
        out = await resume(graphs["bob"], "bob", bob)
    counts = server.events.snapshot()
    assert counts.get("pay.paid:bob", 0) <= 1, counts  # the server's own record: never paid twice
    message = tool_messages(out)["c1"]
    assert message.status == "error", text_of(message)
    text = text_of(message)
    assert "max_parked_calls=1" in text and "'pay'" in text, text
    assert counts.get("pay.enter", 0) == 2  # alice's call and bob's, never a replay

    # The parked call was not disturbed: alice's answer goes to her open call, which pays once.
    done = await resume(graphs["alice"], "alice", alice)
    assert tool_messages(done)["c1"].status == "success", text_of(tool_messages(done)["c1"])
    counts = server.events.snapshot()
    assert counts["pay.paid:alice"] == 1 and counts["pay.enter"] == 2


async def test_a_pause_past_the_cap_of_an_idempotent_tool_is_still_replayed_on_resume(
    open_servers: OpenServers,
) -> None:
    server, graphs, _ = await two_pauses(open_servers, "lookup_invoice")
    out = await graphs["bob"].ainvoke(start(), thread("bob"))
    (bob,) = out["__interrupt__"]
    done = await resume(graphs["bob"], "bob", bob)
    message = tool_messages(done)["c1"]
    assert (message.status, text_of(message)) == ("success", "invoice bob")
    assert server.events.snapshot()["lookup_invoice.enter"] == 3  # bob's call ran its pre-question part twice


async def test_idempotent_hints_of_an_untrusted_server_do_not_allow_the_replay(
    open_servers: OpenServers,
) -> None:
    server, graphs, _ = await two_pauses(open_servers, "lookup_invoice", trust_annotations=False)
    out = await graphs["bob"].ainvoke(start(), thread("bob"))
    assert "__interrupt__" not in out
    message = tool_messages(out)["c1"]
    assert message.status == "error" and "max_parked_calls" in text_of(message)
    assert server.events.snapshot()["lookup_invoice.enter"] == 2
