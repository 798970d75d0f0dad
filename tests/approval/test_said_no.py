"""A declined or cancelled question is a person's answer: when the call then fails, its ToolMessage says so in words
first ("The user declined the form 'register'"), with the server's own text kept as the detail. The package knows
what it answered; the server's text is never parsed (a server that words its failure otherwise reads the same)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_mcp import pending_interrupts, resume_command
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.policy.policy import ApprovalPolicy
from tests.support.helpers import ERAS, OpenServers
from tests.support.node_support import call, in_process, one_turn_graph, text_of, tool_messages

pytestmark = pytest.mark.anyio

ALLOW = ApprovalPolicy(tools={"*": "allow"})


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(("action", "verb"), [("decline", "declined"), ("cancel", "cancelled")])
async def test_a_declined_form_reads_as_the_person_s_answer_with_the_server_s_text_as_detail(
    open_servers: OpenServers, mode: str, action: str, verb: str
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = one_turn_graph(servers, [call("demo_register", "reg")], InMemorySaver(), policy=ALLOW)
    out = await graph.ainvoke({"messages": [("user", "go")]}, _config(action))
    (question,) = pending_interrupts(out)
    (key,) = question.elicitation["requests"]
    out = await graph.ainvoke(
        resume_command(out, answers={"reg": {key: {"action": action}}}), _config(action)
    )
    message = tool_messages(out)["reg"]
    words = text_of(message)
    assert message.status == "error"
    assert words.startswith(f"The user {verb} the form 'register'. The server said: "), words
    assert words.split("The server said: ", 1)[1].strip()  # the server's own text follows, as it was
    assert srv.events.counts["register.commit"] == 0


@pytest.mark.parametrize("mode", ERAS)
async def test_a_call_that_succeeds_after_a_decline_keeps_the_server_s_words(
    open_servers: OpenServers, mode: str
) -> None:
    """The payment tool handles a declined page itself and succeeds: its result is its own."""
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = one_turn_graph(
        servers, [call("demo_pay_deposit", "pay", amount=20)], InMemorySaver(), policy=ALLOW
    )
    out = await graph.ainvoke({"messages": [("user", "go")]}, _config("pay"))
    (question,) = pending_interrupts(out)
    (key,) = question.elicitation["requests"]
    out = await graph.ainvoke(
        resume_command(out, answers={"pay": {key: {"action": "decline"}}}), _config("pay")
    )
    assert text_of(tool_messages(out)["pay"]) == "payment consent: decline"
