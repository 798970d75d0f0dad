"""Agent Chat UI mode (``agent_chat_ui=True`` on the gate, the router and the node), driven as that UI drives a graph.

At every pause the test reads the thread's interrupts, requires exactly one, requires the ``HITLRequest`` keys
on it, and resumes with a bare ``{"decisions": [...]}`` (no interrupt id), edited values sent as strings, as
the UI sends them. What ran is checked on the server's own event record.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import is_invalid_resume
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from langgraph_mcp import (
    ApprovalPolicy,
    McpServers,
    McpToolNode,
    ToolCallsDone,
    create_approval_gate,
    resume_command,
    route_through_gate,
)
from langgraph_mcp.errors import AnswerRefusedError, DecisionError
from langgraph_mcp.examples.demo_server import build_server
from langgraph_mcp.questions.cards import REDRAW_WARNING
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, OpenServers, OpenServersSync
from tests.support.node_support import call, in_process, one_turn_graph, text_of, tool_messages

pytestmark = pytest.mark.anyio
CFG: Any = {"configurable": {"thread_id": "t"}}


def chat_graph(
    servers: McpServers,
    calls: list[Any],
    policy: ApprovalPolicy | None = None,
    checkpointer: InMemorySaver | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The README's wiring with ``agent_chat_ui=True`` on all three parts."""
    policy = policy or ApprovalPolicy()

    def agent(state: MessagesState) -> dict[str, Any]:
        if not any(isinstance(m, AIMessage) for m in state["messages"]):
            return {"messages": [AIMessage("", tool_calls=calls, id="ai-1")]}
        return {"messages": [AIMessage("done", id="ai-2")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy, agent_chat_ui=True))
    builder.add_node("tools", McpToolNode(servers, agent_chat_ui=True))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", route_through_gate(servers, policy, agent_chat_ui=True), ["approval_gate", "tools", END]
    )
    builder.add_edge("approval_gate", "tools")
    builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])
    return builder.compile(checkpointer=checkpointer or StrictSaver())


async def the_one_interrupt(graph: CompiledStateGraph[Any, Any, Any, Any]) -> Any:
    """What Agent Chat UI renders: the thread's only interrupt (it must carry the HITLRequest keys)."""
    state = await graph.aget_state(CFG, subgraphs=True)
    interrupts = list(state.interrupts) + [
        i for task in state.tasks for i in (task.state.interrupts if task.state else ())
    ]
    ids = {i.id for i in interrupts}
    assert len(ids) == 1, f"expected one pending interrupt, got {[i.value.get('type') for i in interrupts]}"
    value = interrupts[0].value
    assert len(value["action_requests"]) == len(value["review_configs"]) >= 1
    return value


def fields(action: Any) -> dict[str, Any]:
    """A form card's field boxes (without its first box, the help text, and its last, the empty Decision)."""
    assert next(iter(action["args"])) == "how_to_answer"
    assert list(action["args"])[-1] == "decision" and action["args"]["decision"] == ""
    return {k: v for k, v in action["args"].items() if k not in ("how_to_answer", "decision")}


def decide(**decision: Any) -> Command[Any]:
    return Command(resume={"decisions": [decision]})


def edit(tool: str, args: dict[str, Any]) -> Command[Any]:
    return decide(type="edit", edited_action={"name": tool, "args": args})


async def test_a_destructive_an_eliciting_and_a_read_only_call_complete_with_bare_resumes(
    open_servers: OpenServers,
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = chat_graph(
        servers,
        [
            call("demo_list_files", "ls"),
            call("demo_delete_file", "rm", path="todo.txt"),
            call("demo_register", "reg"),
        ],
    )
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)

    # 1. The approval comes first, alone; nothing ran yet (allowed calls wait for the gate in this mode).
    approval = await the_one_interrupt(graph)
    assert approval["type"] == "mcp_approval" and approval["tool_call_id"] == "rm"
    assert approval["allowed_decisions"] == ["approve", "edit", "reject", "respond"]  # the policy's
    assert approval["review_configs"][0]["allowed_decisions"] == [
        "edit"
    ]  # the card's: its Decision box decides
    assert srv.events.counts["list_files.enter"] == 0
    await graph.ainvoke(edit("demo_delete_file", {"path": "notes.txt"}), CFG)

    # 2. Then the form, as an editable card: its fields with defaults filled in.
    card = await the_one_interrupt(graph)
    assert card["type"] == "mcp_elicitation" and card["tool_call_id"] == "reg"
    (action,) = card["action_requests"]
    assert action["name"] == "demo_register"
    assert fields(action) == {
        "name": "",
        "age": "",
        "email": "",
        "plan": "",
        "newsletter": False,
        "start": "",
    }
    assert card["review_configs"] == [{"action_name": "demo_register", "allowed_decisions": ["edit"]}]
    assert "Please fill in the registration form." in action["description"]
    form = {
        "name": "Ada Lovelace",
        "age": "36",
        "email": "ada@example.com",
        "plan": "pro",
        "newsletter": "true",
    }
    out = await graph.ainvoke(edit("demo_register", {**form, "start": "2026-12-24"}), CFG)

    assert "__interrupt__" not in out
    messages = tool_messages(out)
    assert text_of(messages["rm"]) == "Deleted notes.txt"
    (registered,) = [e["data"] for e in messages["reg"].artifact if e["type"] == "mcp_structured_content"]
    assert (
        registered["age"] == 36 and registered["newsletter"] is True and registered["start"] == "2026-12-24"
    )
    assert messages["ls"].status == "success"
    assert out["messages"][-1].content == "done"
    assert srv.events.counts["delete_file.commit"] == 1 and srv.events.counts["register.commit"] == 1
    assert srv.events.counts["list_files.enter"] == 1


async def test_approvals_come_one_at_a_time_then_questions_one_at_a_time(open_servers: OpenServers) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = chat_graph(
        servers,
        [
            call("demo_delete_file", "rm1", path="todo.txt"),
            call("demo_book_trip", "trip1", destination="Rome"),
            call("demo_delete_file", "rm2", path="notes.txt"),
            call("demo_book_trip", "trip2", destination="Oslo"),
        ],
    )
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    seen = []
    for _ in range(4):
        value = await the_one_interrupt(graph)
        seen.append(value["tool_call_id"])
        if value["type"] == "mcp_approval":
            await graph.ainvoke(decide(type="approve"), CFG)
        else:
            await graph.ainvoke(edit(value["published_name"], {"date": "2026-12-24"}), CFG)

    state = await graph.aget_state(CFG)
    assert not state.next and not state.interrupts
    assert seen == ["rm1", "rm2", "trip1", "trip2"]
    assert srv.events.counts["delete_file.commit"] == 2 and srv.events.counts["book_trip.commit"] == 2


async def test_a_bad_card_answer_is_refused_and_the_same_interrupt_stays_answerable(
    open_servers: OpenServers,
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = chat_graph(servers, [call("demo_register", "reg")])
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    before = (await graph.aget_state(CFG)).interrupts[0].id

    with pytest.raises(AnswerRefusedError) as refused:
        await graph.ainvoke(
            edit(
                "demo_register",
                {"name": "Ada", "age": "forty", "email": "a@b.co", "plan": "pro", "start": "2026-12-24"},
            ),
            CFG,
        )
    # what Agent Chat UI shows (the run's error text): words only, the field by its title
    assert str(refused.value) == "Age: 'forty' is not a whole number between 18 and 120"
    assert is_invalid_resume(refused.value)
    with pytest.raises(
        AnswerRefusedError, match=r"^Name: required \(text of at least 2 characters\); Age: req"
    ):
        await graph.ainvoke(decide(type="approve"), CFG)  # approve = the form as shown: empty
    with pytest.raises(AnswerRefusedError, match=r"'edit' .* or 'reject'"):
        await graph.ainvoke(decide(type="respond", message="x"), CFG)

    assert (await graph.aget_state(CFG)).interrupts[0].id == before
    out = await graph.ainvoke(decide(type="reject"), CFG)  # reject = decline
    assert tool_messages(out)["reg"].status == "error"
    assert srv.events.counts["register.commit"] == 0


async def pending_ids(graph: CompiledStateGraph[Any, Any, Any, Any]) -> list[str]:
    """The ids of the thread's pending interrupts, the gate's (a subgraph's) included."""
    state = await graph.aget_state(CFG, subgraphs=True)
    tasks = [i for task in state.tasks for i in (task.state.interrupts if task.state else ())]
    return sorted({i.id for i in [*state.interrupts, *tasks]})


@pytest.mark.parametrize("wiring", ["gate", "node"])
async def test_a_refused_approval_card_answer_reads_as_words_and_the_same_card_takes_a_good_one(
    open_servers: OpenServers, wiring: str
) -> None:
    """The approval card, the gate's or the tool node's own: a decision it refuses is an AnswerRefusedError in
    the DecisionError's words (the LangGraph API server shows them as they are); the same interrupt takes the next."""
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    policy = ApprovalPolicy.load(
        {"tools": {"demo_add": "ask"}, "default_decisions": ["approve", "edit", "reject"]}
    )
    calls = [call("demo_add", "sum", a=1, b=2)]
    graph = (
        chat_graph(servers, calls, policy)
        if wiring == "gate"
        else one_turn_graph(servers, calls, StrictSaver(), policy=policy, agent_chat_ui=True)
    )
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    card = await the_one_interrupt(graph)
    assert card["type"] == "mcp_approval" and card["tool_call_id"] == "sum"
    before = await pending_ids(graph)

    who = "tool call 'sum' (demo_add)"
    refusals = [
        (
            f"{who}: edited arguments do not match the tool's inputSchema: args.a: 'x' is not of type 'integer'",
            edit("demo_add", {"a": "x", "b": "2"}),
        ),
        (
            f"{who}: decision type 'respond' is not allowed; allowed: approve, edit, reject",
            decide(type="respond", message="it is 3"),
        ),
    ]
    boxes = card["action_requests"][0]["args"]
    refusals.append(
        (
            f"{who}: Decision is empty, so nothing was sent: type approve or reject in the Decision box, then Submit",
            edit("demo_add", boxes),  # the card as shown: Submit, Ctrl+Enter, Reset
        )
    )
    if wiring == "gate":  # the gate's card offers thread memory in its Remember box
        refusals.append(
            (
                f"{who}: Remember: 'yes' is not one of no, thread; type one of them (or leave it at no)",
                edit("demo_add", {**boxes, "remember": "yes", "decision": "approve"}),
            )
        )
    for words, answer in refusals:
        with pytest.raises(AnswerRefusedError) as refused:
            await graph.ainvoke(answer, CFG)
        assert str(refused.value) == words  # what Agent Chat UI shows: no model or error-type names
        assert is_invalid_resume(refused.value)
        assert isinstance(refused.value.error, DecisionError) and str(refused.value.error) == words
        assert refused.value.problems == [(None, words)]
        assert await pending_ids(graph) == before  # the same interrupt, still answerable
    assert srv.events.counts["add.enter"] == 0

    out = await graph.ainvoke(edit("demo_add", {"a": "20", "b": "22"}), CFG)
    assert text_of(tool_messages(out)["sum"]) == "42"
    assert srv.events.counts["add.enter"] == 1 and await pending_ids(graph) == []


@pytest.mark.parametrize("mode", ERAS)
async def test_a_url_request_shows_url_and_host_and_accept_typed_in_decision_means_accepted(
    open_servers: OpenServers, mode: str
) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = chat_graph(servers, [call("demo_pay_deposit", "pay", amount=20)])
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)

    card = await the_one_interrupt(graph)
    ((_key, request),) = card["requests"].items()
    (action,) = card["action_requests"]
    assert request["url"] in action["description"] and f"Host: {request['host']}" in action["description"]
    assert action["args"] == {
        "how_to_answer": "Open the URL yourself (it is not opened for you), then type accept in the Decision box "
        "(at the bottom) and Submit; decline or cancel says no. Nothing is sent until you type one.\n"
        + REDRAW_WARNING,
        "message": request["message"],
        "url": request["url"],
        "host": request["host"],
        "decision": "",
    }
    assert card["review_configs"][0]["allowed_decisions"] == ["edit"]
    with pytest.raises(AnswerRefusedError, match="Decision is empty"):  # the card as shown
        await graph.ainvoke(edit("demo_pay_deposit", action["args"]), CFG)
    assert srv.events.counts["pay_deposit.commit"] == 0
    out = await graph.ainvoke(edit("demo_pay_deposit", {**action["args"], "decision": "accept"}), CFG)

    assert text_of(tool_messages(out)["pay"]) == "payment consent: accept"
    assert srv.events.counts["pay_deposit.commit"] == 1


async def test_string_typed_approval_edits_are_coerced_by_the_input_schema(open_servers: OpenServers) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    policy = ApprovalPolicy.load({"tools": {"demo_add": "ask"}})
    graph = chat_graph(servers, [call("demo_add", "sum", a=1, b=2)], policy)
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    await the_one_interrupt(graph)

    out = await graph.ainvoke(edit("demo_add", {"a": "20", "b": "22"}), CFG)

    assert text_of(tool_messages(out)["sum"]) == "42"


async def test_results_are_plain_strings_and_non_text_stays_in_the_artifact(
    open_servers: OpenServers,
) -> None:
    """Agent Chat UI renders only string ToolMessage content (a list shows as ``[object Object]``)."""
    servers = open_servers({"demo": in_process(build_server(), "auto")})
    graph = chat_graph(servers, [call("demo_list_files", "ls"), call("demo_mixed_content", "mix")])
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    messages = tool_messages(out)
    assert messages["ls"].content == "notes.txt\ntodo.txt"
    mixed = messages["mix"]
    assert isinstance(mixed.content, str) and mixed.content.startswith("Here is one of each content type.\n")
    assert "[image content (image/png): in the artifact]" in mixed.content
    kept = [e["block"] for e in mixed.artifact if e["type"] == "mcp_content"]
    assert [b["type"] for b in kept] == ["image", "audio", "file", "text", "file"]
    assert kept[0]["mime_type"] == "image/png" and kept[0]["base64"]


async def test_resume_command_answers_a_compat_question_with_plain_answers(open_servers: OpenServers) -> None:
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = chat_graph(servers, [call("demo_book_trip", "trip", destination="Rome")])
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    ((key, _),) = out["__interrupt__"][0].value["requests"].items()

    command = resume_command(
        out, answers={"trip": {key: {"action": "accept", "content": {"date": "2026-12-24"}}}}
    )
    out = await graph.ainvoke(command, CFG)

    assert text_of(tool_messages(out)["trip"]) == "Booked Rome on 2026-12-24"


@pytest.mark.parametrize("mode", ERAS)
async def test_after_a_restart_the_stored_card_answers_replay_and_the_next_round_is_a_card(
    mode: str, open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    saver = checkpointer
    calls = [call("demo_book_three_rounds", "trip", destination="Rome")]
    first_srv = build_server()
    first = open_servers({"demo": in_process(first_srv, mode)})
    graph = chat_graph(first, calls, checkpointer=saver)
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    assert (await the_one_interrupt(graph))["round"] == 1
    await graph.ainvoke(edit("demo_book_three_rounds", {"date": "2026-12-24"}), CFG)
    seats = await the_one_interrupt(graph)
    assert seats["round"] == 2 and fields(seats["action_requests"][0]) == {"seats": "", "window": False}
    await first.aclose()  # the first process ends

    # A new process: new servers (no paused call survives), the same checkpoints.
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, mode)})
    graph = chat_graph(servers, calls, checkpointer=saver)
    await graph.ainvoke(edit("demo_book_three_rounds", {"seats": "2", "window": "true"}), CFG)
    meal = await the_one_interrupt(graph)
    assert meal["round"] == 3
    out = await graph.ainvoke(edit("demo_book_three_rounds", {"meal": "veg"}), CFG)

    (booking,) = [
        e["data"] for e in tool_messages(out)["trip"].artifact if e["type"] == "mcp_structured_content"
    ]
    assert booking == {"destination": "Rome", "date": "2026-12-24", "seats": 2, "window": True, "meal": "veg"}
    assert srv.events.counts["book_three_rounds.commit"] == 1


async def test_plain_unkeyed_resumes_carry_a_call_through_its_rounds_without_compat(
    open_servers: OpenServers,
    checkpointer: BaseCheckpointSaver[Any],
) -> None:
    """A bare ``Command(resume=answers)`` (no interrupt id) answers each round once, also outside compat mode."""
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = one_turn_graph(
        servers, [call("demo_book_three_rounds", "trip", destination="Rome")], checkpointer
    )
    out = await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)
    contents = [{"date": "2026-12-24"}, {"seats": 2}, {"meal": "vegan"}]
    for expected_round, content in enumerate(contents, start=1):
        (pending,) = out["__interrupt__"]
        assert pending.value["round"] == expected_round
        ((key, _),) = pending.value["requests"].items()
        out = await graph.ainvoke(Command(resume={key: {"action": "accept", "content": content}}), CFG)

    assert "__interrupt__" not in out
    assert srv.events.counts["book_three_rounds.commit"] == 1


@pytest.mark.parametrize("restart", [False, True], ids=["same-process", "after-restart"])
async def test_a_round_of_two_questions_is_asked_one_card_at_a_time(
    restart: bool, open_servers: OpenServers, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """A 2026-07-28 server asks date and seats in one round; Agent Chat UI shows one card, so one per question."""
    saver = checkpointer
    calls = [call("demo_book_two", "two", destination="Rome")]
    srv = build_server()
    servers = open_servers({"demo": in_process(srv, "auto")})
    graph = chat_graph(servers, calls, checkpointer=saver)
    await graph.ainvoke({"messages": [HumanMessage("go")]}, CFG)

    date = await the_one_interrupt(graph)
    assert date["round"] == 1 and len(date["requests"]) == 1
    assert fields(date["action_requests"][0]) == {"date": ""}
    await graph.ainvoke(edit("demo_book_two", {"date": "2026-12-24"}), CFG)
    seats = await the_one_interrupt(graph)
    assert seats["round"] == 1 and fields(seats["action_requests"][0]) == {"seats": "", "window": False}
    if restart:  # a new process: the round's requestState is gone, the call is re-issued
        await servers.aclose()
        srv = build_server()
        servers = open_servers({"demo": in_process(srv, "auto")})
        graph = chat_graph(servers, calls, checkpointer=saver)
    out = await graph.ainvoke(edit("demo_book_two", {"seats": "3", "window": "true"}), CFG)

    assert "__interrupt__" not in out
    (booking,) = [
        e["data"] for e in tool_messages(out)["two"].artifact if e["type"] == "mcp_structured_content"
    ]
    assert booking == {"destination": "Rome", "date": "2026-12-24", "seats": 3, "window": True, "meal": None}
    assert srv.events.counts["book_two.commit"] == 1


def test_a_synchronous_graph_in_compat_mode_asks_one_question_at_a_time(
    open_servers_sync: OpenServersSync,
) -> None:
    srv = build_server()
    servers = open_servers_sync({"demo": in_process(srv, "auto")})
    graph = chat_graph(
        servers,
        [
            call("demo_book_trip", "rome", destination="Rome"),
            call("demo_book_trip", "oslo", destination="Oslo"),
        ],
    )
    out = graph.invoke({"messages": [HumanMessage("go")]}, CFG)
    asked = []
    while "__interrupt__" in out:
        (pending,) = out["__interrupt__"]
        asked.append(pending.value["tool_call_id"])
        out = graph.invoke(edit("demo_book_trip", {"date": "2026-12-24"}), CFG)

    assert asked == ["rome", "oslo"]
    messages = tool_messages(out)
    assert text_of(messages["rome"]) == "Booked Rome on 2026-12-24"
    assert text_of(messages["oslo"]) == "Booked Oslo on 2026-12-24"
    assert srv.events.counts["book_trip.commit"] == 2
