"""McpToolNode: tool calls as graph steps, one task per call, elicitation as typed interrupts in both eras."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langgraph_mcp import McpServers
from langgraph_mcp.examples.demo_server import DemoServer, build_server
from tests.support.helpers import ERAS, OpenServers, OpenServersSync
from tests.support.node_support import (
    TOMORROW,
    accept_all,
    by_call,
    call,
    fill,
    in_process,
    one_turn_graph,
    start,
    text_of,
    tool_messages,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def pair(open_servers: OpenServers) -> tuple[McpServers, DemoServer, DemoServer]:
    """Two demo servers: ``new`` speaks 2026-07-28, ``old`` is forced onto the legacy handshake."""
    new, old = build_server("new"), build_server("old")
    servers = open_servers({"new": in_process(new, "modern"), "old": in_process(old, "legacy")})
    return servers, new, old


def config(thread: str = "t1") -> Any:
    return {"configurable": {"thread_id": thread}}


async def test_parallel_calls_in_both_eras_pause_and_resume_with_one_command(
    pair: tuple[McpServers, DemoServer, DemoServer],
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    servers, new, old = pair
    calls = [
        call("new_book_trip", "modern", destination="Rome"),
        call("old_two_questions_commit", "legacy", destination="Oslo"),
        call("new_add", "plain", a=2, b=3),
    ]
    graph = one_turn_graph(servers, calls, checkpointer)
    out = await graph.ainvoke(start(), config())
    pending = by_call(out["__interrupt__"])
    assert set(pending) == {"modern", "legacy"}
    assert pending["modern"].id != pending["legacy"].id
    assert pending["legacy"].value["round"] == 1
    assert new.events.counts["add.enter"] == 1

    out = await graph.ainvoke(Command(resume={i.id: accept_all(i) for i in out["__interrupt__"]}), config())
    # The legacy tool asks a second question on the same (parked) call.
    (second,) = out["__interrupt__"]
    assert second.value["tool_call_id"] == "legacy" and second.value["round"] == 2
    out = await graph.ainvoke(Command(resume={second.id: accept_all(second)}), config())

    messages = tool_messages(out)
    assert text_of(messages["modern"]) == f"Booked Rome on {TOMORROW}"
    assert text_of(messages["legacy"]).startswith(f"Booked Oslo on {TOMORROW}")
    assert text_of(messages["plain"]) == "5"
    assert new.events.counts["book_trip.commit"] == 1
    assert old.events.counts["two_questions_commit.commit"] == 1
    assert old.events.counts["two_questions_commit.enter"] == 1  # parked, never replayed
    assert new.events.counts["add.enter"] == 1  # the finished sibling did not run again


@pytest.mark.parametrize("mode", ERAS)
async def test_two_questions_in_one_round(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = one_turn_graph(servers, [call("demo_book_two", "c1", destination="Oslo")], checkpointer)
    out = await graph.ainvoke(start(), config())
    rounds = 0
    while "__interrupt__" in out:
        (pending,) = out["__interrupt__"]
        rounds += 1
        if mode == "modern":
            assert len(pending.value["requests"]) == 2  # both questions in one round
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert rounds == (1 if mode == "modern" else 2)
    assert "Oslo" in text_of(tool_messages(out)["c1"])


@pytest.mark.parametrize("mode", ERAS)
async def test_three_round_tool_pauses_once_per_round(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = one_turn_graph(servers, [call("demo_book_three_rounds", "c1", destination="Lima")], checkpointer)
    out = await graph.ainvoke(start(), config())
    rounds = []
    while "__interrupt__" in out:
        (pending,) = out["__interrupt__"]
        rounds.append(pending.value["round"])
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert rounds == [1, 2, 3]
    assert tool_messages(out)["c1"].status == "success"
    assert srv.events.counts["book_three_rounds.commit"] == 1


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(("action", "expected"), [("decline", "User declined"), ("cancel", "User cancelled")])
async def test_decline_and_cancel_reach_the_tool(
    open_servers: OpenServers, mode: str, action: str, expected: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = one_turn_graph(servers, [call("demo_book_trip_outcome", "c1", destination="Rome")], checkpointer)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    answer = {key: {"action": action} for key in pending.value["requests"]}
    out = await graph.ainvoke(Command(resume={pending.id: answer}), config())
    assert text_of(tool_messages(out)["c1"]) == expected


@pytest.mark.parametrize("mode", ERAS)
async def test_url_request_carries_the_host_and_takes_consent(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = one_turn_graph(servers, [call("demo_pay_deposit", "c1", amount=42)], checkpointer)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    (request,) = pending.value["requests"].values()
    assert request["mode"] == "url"
    assert request["host"] == "pay.example.com"
    assert "42" in request["url"]
    answer = {key: {"action": "accept"} for key in pending.value["requests"]}
    out = await graph.ainvoke(Command(resume={pending.id: answer}), config())
    assert text_of(tool_messages(out)["c1"]) == "payment consent: accept"


@pytest.mark.parametrize("mode", ERAS)
async def test_round_cap_ends_a_runaway_server_with_an_error(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode, max_elicitation_rounds=3)})
    graph = one_turn_graph(servers, [call("demo_runaway", "c1")], checkpointer)
    out = await graph.ainvoke(start(), config())
    answered = 0
    while "__interrupt__" in out:
        (pending,) = out["__interrupt__"]
        answered += 1
        assert answered <= 3
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
    message = tool_messages(out)["c1"]
    assert message.status == "error"
    assert "max_elicitation_rounds" in text_of(message)


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("field", "bad", "needle"),
    [
        ("age", None, "age"),  # missing required field
        ("age", "thirty", "age"),  # wrong type
        ("plan", "gold", "plan"),  # outside the enum
        ("age", 7, "age"),  # below the minimum
        ("start", "2026-13-45", "start"),  # not a date
    ],
)
async def test_wrong_answer_is_refused_before_saving_and_the_same_interrupt_takes_a_fix(
    open_servers: OpenServers,
    mode: str,
    field: str,
    bad: Any,
    needle: str,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = one_turn_graph(servers, [call("demo_register", "c1")], checkpointer)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    (key,) = pending.value["requests"]
    good = {"name": "Ada", "age": 36, "email": "ada@example.com", "plan": "pro", "start": TOMORROW}
    wrong = dict(good)
    if bad is None:
        del wrong[field]
    else:
        wrong[field] = bad
    with pytest.raises(pydantic.ValidationError) as refused:
        await graph.ainvoke(
            Command(resume={pending.id: {key: {"action": "accept", "content": wrong}}}), config()
        )
    assert needle in str(refused.value) and key in str(refused.value)
    snapshot = await graph.aget_state(config())
    assert [i.id for i in snapshot.interrupts] == [pending.id]
    out = await graph.ainvoke(
        Command(resume={pending.id: {key: {"action": "accept", "content": good}}}), config()
    )
    message = tool_messages(out)["c1"]
    assert message.status == "success", text_of(message)
    assert "Ada" in text_of(message)
    assert srv.events.counts["register.commit"] == 1


async def test_content_on_a_url_answer_is_refused(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = one_turn_graph(servers, [call("demo_pay_deposit", "c1", amount=5)], checkpointer)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    (key,) = pending.value["requests"]
    with pytest.raises(pydantic.ValidationError):
        await graph.ainvoke(
            Command(resume={pending.id: {key: {"action": "accept", "content": {"x": "1"}}}}), config()
        )
    out = await graph.ainvoke(Command(resume={pending.id: {key: {"action": "decline"}}}), config())
    assert text_of(tool_messages(out)["c1"]) == "payment consent: decline"


async def test_sensitive_fields_are_listed(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = one_turn_graph(servers, [call("demo_login", "c1", service="mail")], checkpointer)
    out = await graph.ainvoke(start(), config())
    (request,) = out["__interrupt__"][0].value["requests"].values()
    assert request["sensitive"] == ["password"]


@pytest.mark.parametrize("mode", ERAS)
async def test_batch_of_calls_in_one_task_never_reruns_a_finished_sibling(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    calls = [
        call("demo_book_trip", "c1", destination="Rome"),
        call("demo_delete_file", "c2", path="todo.txt"),
        call("demo_book_trip", "c3", destination="Oslo"),
    ]
    graph = one_turn_graph(servers, calls, checkpointer, fan_out=False)
    out = await graph.ainvoke(start(), config())
    pending = by_call(out["__interrupt__"])
    assert set(pending) == {"c1", "c2", "c3"}  # c2 is destructive: the node asks (no gate judged it)
    assert pending["c2"].value["type"] == "mcp_approval" and srv.events.counts["delete_file.request"] == 0
    assert len({i.id for i in pending.values()}) == 3
    answers = {i.id: accept_all(i) for c, i in pending.items() if c != "c2"}
    out = await graph.ainvoke(Command(resume={**answers, pending["c2"].id: {"type": "approve"}}), config())
    messages = tool_messages(out)
    assert [text_of(messages[c]) for c in ("c1", "c2", "c3")] == [
        f"Booked Rome on {TOMORROW}",
        "Deleted todo.txt",
        f"Booked Oslo on {TOMORROW}",
    ]
    assert srv.events.counts["delete_file.commit"] == 1


async def test_without_a_checkpointer_a_question_becomes_an_error_message(open_servers: OpenServers) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], None)
    out = await graph.ainvoke(start())
    message = tool_messages(out)["c1"]
    assert message.status == "error"
    assert "checkpointer" in text_of(message)


async def test_unknown_tool_names_close_matches(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = one_turn_graph(servers, [call("demo_delete_fil", "c1", path="x")], checkpointer)
    out = await graph.ainvoke(start(), config())
    message = tool_messages(out)["c1"]
    assert message.status == "error"
    assert "demo_delete_file" in text_of(message)


async def test_progress_reaches_the_custom_stream(
    open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = one_turn_graph(servers, [call("demo_slow", "p1", seconds=0.2, steps=4)], checkpointer)
    events = [
        chunk
        async for chunk in graph.astream(start(), config(), stream_mode="custom")
        if isinstance(chunk, dict) and chunk.get("type") == "mcp_progress"
    ]
    assert [e["progress"] for e in events] == [1, 2, 3, 4]
    assert {e["tool_call_id"] for e in events} == {"p1"} and events[-1]["total"] == 4


@pytest.mark.parametrize("mode", ERAS)
def test_sync_invoke_pauses_and_resumes(
    open_servers_sync: OpenServersSync, mode: str, sync_checkpointer: BaseCheckpointSaver[Any]
) -> None:
    srv = build_server()
    servers = open_servers_sync({"demo": in_process(srv, mode)})
    graph = one_turn_graph(servers, [call("demo_book_trip", "c1", destination="Rome")], sync_checkpointer)
    out = graph.invoke(start(), config())
    (pending,) = out["__interrupt__"]
    out = graph.invoke(Command(resume={pending.id: accept_all(pending)}), config())
    assert text_of(tool_messages(out)["c1"]) == f"Booked Rome on {TOMORROW}"
    assert srv.events.counts["book_trip.commit"] == 1


def test_fill_helper_builds_valid_answers() -> None:
    request = {
        "mode": "form",
        "message": "m",
        "requested_schema": {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}},
        "sensitive": [],
    }
    assert fill(request) == {"action": "accept", "content": {"d": TOMORROW}}


async def test_legacy_url_required_error_becomes_a_url_interrupt_then_the_call_is_retried(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "legacy")})
    graph = one_turn_graph(servers, [call("demo_url_required", "c1", amount=7)], checkpointer)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]  # the -32042 error, as a URL question
    (request,) = pending.value["requests"].values()
    assert request["mode"] == "url" and request["host"] == "pay.example.com"
    answer = {key: {"action": "accept"} for key in pending.value["requests"]}
    out = await graph.ainvoke(Command(resume={pending.id: answer}), config())
    message = tool_messages(out)["c1"]
    assert message.status == "success", text_of(message)
    assert "paid" in text_of(message)
    assert srv.events.counts["url_required.request"] == 2  # refused once, then retried after the user's visit
