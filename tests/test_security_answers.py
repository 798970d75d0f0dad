"""Issue 9, the answer contract: a wrong answer is refused before it is saved and the same interrupt stays pending.

4. Wrong-shaped elicitation answers and approval decisions are refused by ``response_schema`` (same id).
5. Deep answers, deep edit arguments and self-referential inputSchemas give clear errors, never recursion.
6. A server-chosen regex is never run (elicitation forms and edited arguments).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import is_invalid_resume
from langgraph.types import Command
from pydantic import ValidationError

from langgraph_mcp import ApprovalPolicy, DecisionError, McpServers, ResumeError, _compat, resume_command
from langgraph_mcp.approval.decisions import validate_decision
from langgraph_mcp.examples.demo_server import build_server
from tests.helpers import ERAS, OpenServers, http_demo_server
from tests.node_support import call, fill, one_turn_graph, start, tool_messages
from tests.security_support import (
    WIRINGS,
    form_server,
    nested,
    schema_server,
)

pytestmark = pytest.mark.anyio


def cfg(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


@asynccontextmanager
async def demo_servers(transport: str, mode: str) -> AsyncIterator[tuple[Any, McpServers]]:
    srv = build_server()
    if transport == "http":
        async with http_demo_server(srv) as url:
            servers = McpServers({"demo": {"transport": "http", "url": url, "mode": mode}})
            try:
                yield srv, servers
            finally:
                await servers.aclose()
    else:
        servers = McpServers({"demo": {"transport": "in_process", "server": srv, "mode": mode}})
        try:
            yield srv, servers
        finally:
            await servers.aclose()


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


@pytest.mark.parametrize("transport", ["in_process", "http"])
@pytest.mark.parametrize("mode", ERAS)
async def test_wrong_shaped_answers_are_refused_and_the_same_question_stays_pending(
    transport: str, mode: str
) -> None:
    async with demo_servers(transport, mode) as (srv, servers):
        graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], InMemorySaver())
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


async def test_a_wrong_plain_resume_is_refused_too() -> None:
    async with demo_servers("in_process", "auto") as (srv, servers):
        graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], InMemorySaver())
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
async def test_wrong_shaped_decisions_are_refused_and_the_same_approval_stays_pending(
    open_servers: OpenServers, compat: bool
) -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import tools_condition

    from langgraph_mcp import McpToolNode, ToolCallRouter, create_approval_gate
    from tests.security_support import scripted

    srv = build_server()
    servers = open_servers({"demo": {"transport": "in_process", "server": srv}})
    builder = StateGraph(MessagesState)
    builder.add_node("agent", scripted([call("demo_delete_file", "rm", path="todo.txt")]))
    builder.add_node("approval_gate", create_approval_gate(servers, compat=compat))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=InMemorySaver())
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
    [pending] = out["__interrupt__"]
    for bad in WRONG_COMPAT_DECISIONS if compat else WRONG_DECISIONS:
        with pytest.raises(ValidationError):
            await graph.ainvoke(Command(resume={pending.id: bad}), cfg())
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
async def test_a_10000_deep_answer_is_refused_before_saving(mode: str) -> None:
    async with demo_servers("in_process", mode) as (srv, servers):
        graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], InMemorySaver())
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


@asynccontextmanager
async def gated_schema_graph(
    wiring: str, tool: str, args: dict[str, Any]
) -> AsyncIterator[tuple[Any, Any, list[str]]]:
    server, ran = schema_server()
    servers = McpServers({"schemas": {"transport": "in_process", "server": server}})
    try:
        graph = WIRINGS[wiring](
            servers, ApprovalPolicy(), [call(f"schemas_{tool}", "c1", **args)], InMemorySaver()
        )
        out = await graph.ainvoke({"messages": [HumanMessage("go")]}, cfg())
        yield graph, out, ran
    finally:
        await servers.aclose()


@pytest.mark.parametrize("wiring", sorted(WIRINGS))
async def test_a_self_referencing_input_schema_gives_a_decision_error(wiring: str) -> None:
    async with gated_schema_graph(wiring, "self_ref", {"x": "a"}) as (graph, out, ran):
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
async def test_deeply_nested_edit_arguments_give_a_decision_error(wiring: str) -> None:
    async with gated_schema_graph(wiring, "tree", {"tree": {}}) as (graph, out, ran):
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
async def test_a_server_pattern_in_a_form_is_not_run(open_servers: OpenServers, mode: str) -> None:
    """``^(a+)+$`` against ``"a" * 28 + "!"`` would stall the loop for seconds: the pattern is not run at all
    (MCP's elicitation schema has no ``pattern``), so a value it would refuse is accepted and reaches the server."""
    srv, got = form_server()
    servers = open_servers({"forms": {"transport": "in_process", "server": srv, "mode": mode}})
    graph = one_turn_graph(servers, [call("forms_enter_code", "c1")], InMemorySaver())
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
async def test_a_server_pattern_in_an_input_schema_is_not_run(wiring: str) -> None:
    async with gated_schema_graph(wiring, "patterned", {"code": "a"}) as (graph, out, ran):
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
