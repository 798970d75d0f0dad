"""Issue 9, the answer contract: a wrong answer is refused before it is saved and the same interrupt stays pending.

4. Wrong-shaped elicitation answers and approval decisions are refused by ``response_schema`` (same id).
5. Deep answers, deep edit arguments and self-referential inputSchemas give clear errors, never recursion.
6. A server-chosen regex is never run (elicitation forms and edited arguments).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import is_invalid_resume
from langgraph.types import Command
from pydantic import ValidationError

from langgraph_mcp import ApprovalPolicy, McpServers, ResumeError, _compat, resume_command
from langgraph_mcp.errors import AnswerRefusedError, DecisionError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.questions.decisions import validate_decision
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, OpenServers, demo_entry
from tests.support.node_support import call, fill, one_turn_graph, start, tool_messages
from tests.support.security_support import (
    SECURITY_TRANSPORTS,
    WIRINGS,
    form_server,
    gate_router_graph,
    nested,
    schema_server,
)

pytestmark = pytest.mark.anyio


def cfg(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


async def demo_servers(open_servers: OpenServers, transport: str, mode: str) -> tuple[Any, McpServers]:
    """A demo server (its own record: ``srv.events``) and ``McpServers`` talking to it over ``transport``."""
    srv = build_server()
    return srv, open_servers({"demo": await open_servers.enter(demo_entry(transport, mode, server=srv))})


async def pending_ids(graph: Any, thread: str = "t") -> list[str]:
    return [i.id for i in (await graph.aget_state(cfg(thread))).interrupts]


# ------------------------------------------------------------------------------ 4. wrong shapes


def wrong_answers(key: str, good: dict[str, Any]) -> list[Any]:
    return [
        {"type": "approve"},  # an approval decision sent to a question
        {},
        {"wrong_key": good},
        good["content"],  # the form content without its request key (what a person types in Studio)
        good,  # the answer without its request key
        {key: good, "extra": good},
        {key: {"action": "accept"}},  # a form accepted without content
        {key: {**good, "note": "x"}},
    ]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_wrong_shaped_answers_are_refused_and_the_same_question_stays_pending(
    open_servers: OpenServers, transport: str, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv, servers = await demo_servers(open_servers, transport, mode)
    graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], checkpointer)
    out = await graph.ainvoke(start(), cfg())
    [question] = out["__interrupt__"]
    [key] = question.value["requests"]
    good = fill(question.value["requests"][key])
    for bad in wrong_answers(key, good):
        with pytest.raises(ValidationError) as caught:
            await graph.ainvoke(Command(resume={question.id: bad}), cfg())
        assert is_invalid_resume(caught.value)
        assert await pending_ids(graph) == [question.id], bad
    out = await graph.ainvoke(Command(resume={question.id: {key: good}}), cfg())
    assert "__interrupt__" not in out
    assert srv.events.counts["book_trip.commit"] == 1
    assert tool_messages(out)["c1"].status != "error"


async def test_a_wrong_plain_resume_is_refused_too(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv, servers = await demo_servers(open_servers, "in_process", "modern")
    graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], checkpointer)
    out = await graph.ainvoke(start(), cfg())
    [question] = out["__interrupt__"]
    with pytest.raises(ValidationError):
        await graph.ainvoke(Command(resume={"type": "approve"}), cfg())
    assert await pending_ids(graph) == [question.id]
    assert srv.events.counts["book_trip.commit"] == 0


WRONG_DECISIONS = [
    {},
    {"action": "accept"},
    {"decisions": [{"type": "approve"}]},  # compat shape in plain mode
    {"type": "approve", "extra": 1},
    {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": {"path": "x"}, "extra": 1}},
    {"type": "reject", "message": "no", "why": "extra"},
]
WRONG_COMPAT_DECISIONS = [
    {},
    {"type": "approve"},
    {"decisions": []},
    {"decisions": [{"type": "approve"}], "x": 1},
]


@pytest.mark.parametrize("compat", [False, True])
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_wrong_shaped_decisions_are_refused_and_the_same_approval_stays_pending(
    open_servers: OpenServers, transport: str, mode: str, compat: bool, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv, servers = await demo_servers(open_servers, transport, mode)
    calls = [call("demo_delete_file", "rm", path="todo.txt")]
    graph = gate_router_graph(servers, None, calls, checkpointer, compat=compat)
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    [pending] = out["__interrupt__"]
    for bad in WRONG_COMPAT_DECISIONS if compat else WRONG_DECISIONS:
        # a card's shape ({"decisions": ...}) is refused in words, anything else by pydantic: neither is saved
        refusal = AnswerRefusedError if compat and "decisions" in bad else ValidationError
        with pytest.raises(refusal) as caught:
            await graph.ainvoke(Command(resume={pending.id: bad}), cfg())
        assert is_invalid_resume(caught.value)
        assert await pending_ids(graph) == [pending.id], bad
    assert srv.events.counts["delete_file.request"] == 0
    approve: Any = {"type": "approve"}
    await graph.ainvoke(Command(resume={pending.id: {"decisions": [approve]} if compat else approve}), cfg())
    assert srv.events.counts["delete_file.commit"] == 1


def test_the_langgraph_interrupt_id_internal_is_there() -> None:
    """``_compat.fresh_resume_index`` needs LangGraph's interrupt-id function to tell a new answer from a saved one."""
    assert _compat._interrupt_id is not None, (
        f"langgraph {_compat.LANGGRAPH_VERSION} has no langgraph.types._interrupt_id: wrong-shaped answers would be "
        "skipped instead of refused"
    )


# ------------------------------------------------------------------------------ 5. depth


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_10000_deep_answer_is_refused_before_saving(
    open_servers: OpenServers, transport: str, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv, servers = await demo_servers(open_servers, transport, mode)
    graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], checkpointer)
    out = await graph.ainvoke(start(), cfg())
    [question] = out["__interrupt__"]
    [key] = question.value["requests"]
    deep = {key: {"action": "accept", "content": {"date": nested(10_000)}}}
    with pytest.raises(ValidationError, match="deeper than"):
        await graph.ainvoke(Command(resume={question.id: deep}), cfg())
    assert await pending_ids(graph) == [question.id]
    with pytest.raises(ResumeError, match="deeper than"):
        resume_command(out, answers={"c1": deep})
    out = await graph.ainvoke(
        resume_command(out, answers={"c1": {key: fill(question.value["requests"][key])}}), cfg()
    )
    assert srv.events.counts["book_trip.commit"] == 1


async def gated_schema_graph(
    open_servers: OpenServers, transport: str, mode: str, wiring: str, tool: str, args: dict[str, Any]
) -> tuple[Any, Any, list[str]]:
    """A gated graph whose one call (``c1``) to ``schema_server``'s ``tool`` waits for approval: the graph, its
    output and the server's record of the calls it ran."""
    server, ran = schema_server()
    servers = open_servers({"schemas": await open_servers.enter(demo_entry(transport, mode, server=server))})
    graph = WIRINGS[wiring](servers, ApprovalPolicy(), [call(f"schemas_{tool}", "c1", **args)], StrictSaver())
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    return graph, out, ran


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_self_referencing_input_schema_gives_a_decision_error(
    open_servers: OpenServers, transport: str, mode: str, wiring: str
) -> None:
    graph, out, ran = await gated_schema_graph(open_servers, transport, mode, wiring, "self_ref", {"x": "a"})
    edit = {"type": "edit", "edited_action": {"name": "schemas_self_ref", "args": {"x": "b"}}}
    with pytest.raises(ResumeError, match=r"'c1'.*refers to itself"):
        resume_command(out, decisions={"c1": edit})
    [pending] = out["__interrupt__"]
    with pytest.raises(ValidationError, match="refers to itself"):
        await graph.ainvoke(Command(resume={pending.id: edit}), cfg())
    assert await pending_ids(graph) == [pending.id] and ran == []
    await graph.ainvoke(resume_command(out, decisions={"c1": {"type": "approve"}}), cfg())
    assert ran == ["self_ref"]


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_deeply_nested_edit_arguments_give_a_decision_error(
    open_servers: OpenServers, transport: str, mode: str, wiring: str
) -> None:
    graph, out, ran = await gated_schema_graph(open_servers, transport, mode, wiring, "tree", {"tree": {}})
    edit = {
        "type": "edit",
        "edited_action": {"name": "schemas_tree", "args": {"tree": nested(10_000, {})}},
    }
    with pytest.raises(ResumeError, match=r"'c1'.*deeper than"):
        resume_command(out, decisions={"c1": edit})
    [pending] = out["__interrupt__"]
    with pytest.raises(ValidationError, match="deeper than"):
        await graph.ainvoke(Command(resume={pending.id: edit}), cfg())
    assert await pending_ids(graph) == [pending.id] and ran == []
    ok = {"type": "edit", "edited_action": {"name": "schemas_tree", "args": {"tree": nested(10, {})}}}
    await graph.ainvoke(resume_command(out, decisions={"c1": ok}), cfg())
    assert ran == ["tree"]


# ------------------------------------------------------------------------------ 6. server regexes


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_server_pattern_in_a_form_is_not_run(
    open_servers: OpenServers, transport: str, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """``^(a+)+$`` against ``"a" * 28 + "!"`` would stall the loop for seconds: the pattern is not run at all
    (MCP's elicitation schema has no ``pattern``), so a value it would refuse is accepted and reaches the server."""
    srv, got = form_server()
    servers = open_servers({"forms": await open_servers.enter(demo_entry(transport, mode, server=srv))})
    graph = one_turn_graph(servers, [call("forms_enter_code", "c1")], checkpointer)
    out = await graph.ainvoke(start(), cfg())
    [question] = out["__interrupt__"]
    [key] = question.value["requests"]
    value = "a" * 28 + "!"
    out = await graph.ainvoke(
        resume_command(out, answers={"c1": {key: {"action": "accept", "content": {"code": value}}}}),
        cfg(),
    )
    assert got == [("accept", {"code": value})]


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_server_pattern_in_an_input_schema_is_not_run(
    open_servers: OpenServers, transport: str, mode: str, wiring: str
) -> None:
    graph, out, ran = await gated_schema_graph(
        open_servers, transport, mode, wiring, "patterned", {"code": "a"}
    )
    value = "a" * 28 + "!"
    edit = {"type": "edit", "edited_action": {"name": "schemas_patterned", "args": {"code": value}}}
    out = await graph.ainvoke(resume_command(out, decisions={"c1": edit}), cfg())
    assert ran == ["patterned"]
    bad = {"type": "edit", "edited_action": {"name": "schemas_patterned", "args": {"code": 1}}}
    payload: Any = {**_approval_payload(), "input_schema": _patterned_schema()}
    with pytest.raises(DecisionError, match="is not of type 'string'"):  # the rest of the schema holds
        validate_decision(payload, bad)


def _patterned_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}}


def _approval_payload() -> dict[str, Any]:
    return {
        "type": "mcp_approval",
        "tool_call_id": "c1",
        "server": "schemas",
        "tool": "patterned",
        "published_name": "schemas_patterned",
        "arguments": {},
        "hints": None,
        "reason": "r",
        "allowed_decisions": ["approve", "edit", "reject", "respond"],
        "description": "d",
    }
