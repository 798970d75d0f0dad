"""Sampling under human review, both eras: a server's ``sampling/createMessage`` is refused without a model,
answered by the configured chat model (``allow``), or reviewed (``ask``: approve / edit / reject) through an
``mcp_sampling`` interrupt; caps apply; a restart between the question and the answer loses nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.errors import is_invalid_resume
from langgraph.types import Command
from pydantic import ValidationError

from langgraph_mcp import ApprovalPolicy, McpServers, pending_interrupts, resume_command
from langgraph_mcp.errors import AnswerRefusedError, ResumeError
from langgraph_mcp.examples.scripted_model import ScriptedSamplingModel
from tests.support.helpers import ERAS, OpenServers
from tests.support.node_support import call, in_process, one_turn_graph, start, text_of, tool_messages
from tests.support.servers.sampling_server import build_server

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
"""These tests are about tasks and sampling, not approvals: the tool node runs every call unasked (the tasks
server's tools carry no annotations, which the default policy asks about)."""


pytestmark = pytest.mark.anyio
CALL = call("sampler_summarize", "c1", text="a long story")
PROMPT = "Summarize: a long story"


def config(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("mode", ERAS)
async def test_without_a_model_sampling_is_refused_clearly(open_servers: OpenServers, mode: str) -> None:
    srv, seen = build_server()
    servers = open_servers({"sampler": in_process(srv, mode)})
    out = await one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS).ainvoke(
        start(), config()
    )
    message = tool_messages(out)["c1"]
    assert message.status == "error"
    assert seen == []


@pytest.mark.parametrize("mode", ERAS)
async def test_allow_answers_with_the_model_capped(open_servers: OpenServers, mode: str) -> None:
    srv, seen = build_server()
    model = ScriptedSamplingModel()
    servers = open_servers(
        {
            "sampler": in_process(
                srv, mode, sampling_model=model, sampling_policy="allow", sampling_max_tokens=64
            )
        }
    )
    out = await one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS).ainvoke(
        start(), config()
    )
    assert text_of(tool_messages(out)["c1"]) == f"summary: Scripted reply to: {PROMPT}"
    assert seen == [{"text": f"Scripted reply to: {PROMPT}", "model": "ScriptedSamplingModel"}]
    assert model.budgets == [64]  # the server asked for 5000


async def ask_graph(servers: McpServers, saver: Any) -> tuple[Any, Any]:
    graph = one_turn_graph(servers, [CALL], saver, policy=NO_APPROVALS)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    return graph, pending


@pytest.mark.parametrize("mode", ERAS)
async def test_ask_shows_the_request_and_approve_runs_the_model(open_servers: OpenServers, mode: str) -> None:
    srv, seen = build_server()
    model = ScriptedSamplingModel()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=model, sampling_max_tokens=100)})
    graph, pending = await ask_graph(servers, InMemorySaver())
    payload = pending.value
    assert (
        payload["type"] == "mcp_sampling"
        and payload["tool_call_id"] == "c1"
        and payload["server"] == "sampler"
    )
    assert payload["messages"] == [{"role": "user", "content": {"type": "text", "text": PROMPT}}]
    assert payload["system_prompt"] == "You write one-line summaries."
    assert payload["model_preferences"] == {"hints": [{"name": "small"}]}
    assert (payload["max_tokens"], payload["requested_max_tokens"]) == (100, 5000)
    assert seen == [] and model.budgets == []  # nothing ran before the human said so
    with pytest.raises(ValidationError):  # a wrong decision is refused before it is saved
        await graph.ainvoke(Command(resume={pending.id: {"type": "edit"}}), config())
    out = await graph.ainvoke(Command(resume={pending.id: {"type": "approve"}}), config())
    assert text_of(tool_messages(out)["c1"]) == f"summary: Scripted reply to: {PROMPT}"
    assert [s["text"] for s in seen] == [f"Scripted reply to: {PROMPT}"]


@pytest.mark.parametrize("mode", ERAS)
async def test_edit_sends_exactly_the_edited_prompt(open_servers: OpenServers, mode: str) -> None:
    srv, seen = build_server()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    graph, pending = await ask_graph(servers, InMemorySaver())
    edited = [{"role": "user", "content": {"type": "text", "text": "Summarize politely"}}]
    out = await graph.ainvoke(Command(resume={pending.id: {"type": "edit", "messages": edited}}), config())
    assert text_of(tool_messages(out)["c1"]) == "summary: Scripted reply to: Summarize politely"
    assert [s["text"] for s in seen] == ["Scripted reply to: Summarize politely"]


@pytest.mark.parametrize("mode", ERAS)
async def test_reject_gives_the_server_no_completion(open_servers: OpenServers, mode: str) -> None:
    srv, seen = build_server()
    model = ScriptedSamplingModel()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=model)})
    graph, pending = await ask_graph(servers, InMemorySaver())
    out = await graph.ainvoke(
        Command(resume={pending.id: {"type": "reject", "message": "not now"}}), config()
    )
    message = tool_messages(out)["c1"]
    assert message.status == "error"
    assert seen == [] and model.budgets == []
    if mode != "legacy":
        assert "Sampling request refused: not now" in text_of(message)


@pytest.mark.parametrize("mode", ERAS)
async def test_deny_and_the_request_cap_refuse(open_servers: OpenServers, mode: str) -> None:
    srv, seen = build_server()
    model = ScriptedSamplingModel()
    servers = open_servers(
        {
            "sampler": in_process(
                srv, mode, sampling_model=model, sampling_policy="allow", sampling_max_requests=1
            ),
        }
    )
    calls = [CALL, call("sampler_summarize", "c2", text="another story")]
    out = await one_turn_graph(servers, calls, InMemorySaver(), policy=NO_APPROVALS).ainvoke(
        start(), config("one")
    )
    statuses = sorted(m.status for m in tool_messages(out).values())
    assert statuses == ["error", "success"]  # one thread, one request allowed
    assert len(seen) == 1 and len(model.budgets) == 1
    denied_srv, denied_seen = build_server()
    denied = open_servers(
        {"sampler": in_process(denied_srv, mode, sampling_model=model, sampling_policy="deny")}
    )
    out = await one_turn_graph(denied, [CALL], InMemorySaver(), policy=NO_APPROVALS).ainvoke(
        start(), config()
    )
    assert tool_messages(out)["c1"].status == "error" and denied_seen == []


@pytest.mark.parametrize("mode", ERAS)
async def test_a_restart_between_the_question_and_the_answer_loses_nothing(
    open_servers: OpenServers, mode: str, tmp_path: Path
) -> None:
    srv, seen = build_server()
    db = str(tmp_path / "checkpoints.db")
    first = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        _, pending = await ask_graph(first, saver)
    await first.aclose()
    # A new McpServers and a new saver on the same database: nothing of the first run is in memory.
    second = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        graph = one_turn_graph(second, [CALL], saver, policy=NO_APPROVALS)
        edited = [{"role": "user", "content": {"type": "text", "text": "Summarize after restart"}}]
        out = await graph.ainvoke(
            Command(resume={pending.id: {"type": "edit", "messages": edited}}), config()
        )
    assert text_of(tool_messages(out)["c1"]) == "summary: Scripted reply to: Summarize after restart"
    assert [s["text"] for s in seen] == ["Scripted reply to: Summarize after restart"]


@pytest.mark.parametrize("mode", ERAS)
async def test_agent_chat_ui_mode_shows_one_card_whose_decision_box_decides_and_approve_sends_the_edit(
    open_servers: OpenServers, mode: str
) -> None:
    srv, seen = build_server()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    graph = one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS, agent_chat_ui=True)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    [card] = pending.value["action_requests"]
    assert card["name"] == "sampler_summarize" and card["args"]["prompt"] == PROMPT
    assert pending.value["review_configs"][0]["allowed_decisions"] == ["edit"]  # its Decision box decides
    assert card["args"]["decision"] == "" and card["args"]["reason"] == ""
    with pytest.raises(ValidationError):
        await graph.ainvoke(Command(resume={pending.id: {"decisions": [{"type": "edit"}]}}), config())

    def typed(
        **boxes: str,
    ) -> dict[str, Any]:  # what Agent Chat UI sends: the card's boxes, with these typed in
        args = {**card["args"], **boxes}
        return {"decisions": [{"type": "edit", "edited_action": {"name": "sampler_summarize", "args": args}}]}

    for nothing in (typed(), typed(decision="  "), typed(prompt="Summarize in French"), typed(reason="no")):
        with pytest.raises(AnswerRefusedError, match=r"(is empty|holds only spaces), so nothing was sent"):
            await graph.ainvoke(Command(resume={pending.id: nothing}), config())
    with pytest.raises(AnswerRefusedError, match="Decision says approve but Reason holds text"):
        await graph.ainvoke(Command(resume={pending.id: typed(decision="approve", reason="no")}), config())
    assert seen == []
    out = await graph.ainvoke(
        Command(resume={pending.id: typed(prompt="Summarize in French", decision="approve")}), config()
    )
    assert text_of(tool_messages(out)["c1"]) == "summary: Scripted reply to: Summarize in French"
    assert [s["text"] for s in seen] == ["Scripted reply to: Summarize in French"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_program_s_plain_edit_of_a_sampling_card_is_the_edited_prompt(
    open_servers: OpenServers, mode: str
) -> None:
    srv, seen = build_server()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    graph = one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS, agent_chat_ui=True)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    edit = {
        "type": "edit",
        "edited_action": {"name": "sampler_summarize", "args": {"prompt": "Summarize in French"}},
    }
    out = await graph.ainvoke(Command(resume={pending.id: {"decisions": [edit]}}), config())
    assert text_of(tool_messages(out)["c1"]) == "summary: Scripted reply to: Summarize in French"
    assert [s["text"] for s in seen] == ["Scripted reply to: Summarize in French"]


@pytest.mark.parametrize("mode", ERAS)
async def test_an_agent_chat_ui_edit_of_the_system_prompt_is_refused_and_the_card_stays(
    open_servers: OpenServers, mode: str
) -> None:
    """The card shows the server's system prompt in an editable box; an edit of it was silently dropped (the
    model got the server's prompt): now it is refused before it is saved, saying what to edit instead."""
    srv, seen = build_server()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    graph = one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS, agent_chat_ui=True)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    [card] = pending.value["action_requests"]
    assert card["args"]["system_prompt"] == "You write one-line summaries."

    def edit(**args: str) -> dict[str, Any]:
        return {"decisions": [{"type": "edit", "edited_action": {"name": "sampler_summarize", "args": args}}]}

    changed = edit(prompt=PROMPT, system_prompt="Answer in French.")
    with pytest.raises(
        AnswerRefusedError, match="system_prompt is the server's and can't be edited: edit 'prompt'"
    ) as refused:
        await graph.ainvoke(Command(resume={pending.id: changed}), config())
    # Words only (Agent Chat UI shows the text as it is), not pydantic's framing of a ValidationError.
    assert "validation error for" not in str(refused.value)
    assert "errors.pydantic.dev" not in str(refused.value)
    assert is_invalid_resume(refused.value)
    with pytest.raises(ResumeError, match="system_prompt is the server's"):
        resume_command(
            pending_interrupts(await graph.aget_state(config(), subgraphs=True)), decisions={"c1": changed}
        )
    (again,) = pending_interrupts(await graph.aget_state(config(), subgraphs=True))
    assert again.interrupt_id == pending.id and seen == []
    kept = edit(prompt="Summarize in French", system_prompt="You write one-line summaries.")
    out = await graph.ainvoke(Command(resume={pending.id: kept}), config())
    assert text_of(tool_messages(out)["c1"]) == "summary: Scripted reply to: Summarize in French"
    assert [s["text"] for s in seen] == ["Scripted reply to: Summarize in French"]


@pytest.mark.parametrize("mode", ERAS)
async def test_resume_command_answers_a_sampling_request_with_an_approval_in_one_command(
    open_servers: OpenServers, mode: str
) -> None:
    srv, seen = build_server()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    policy = ApprovalPolicy(tools={"sampler_summarize": "allow", "sampler_echo": "ask"})
    graph = one_turn_graph(
        servers, [CALL, call("sampler_echo", "c2", text="hi")], InMemorySaver(), policy=policy
    )
    out = await graph.ainvoke(start(), config())
    kinds = {p.tool_call_id: p.kind for p in pending_interrupts(out)}
    assert kinds == {"c1": "sampling", "c2": "approval"}
    with pytest.raises(ResumeError) as refused:  # checked before anything is sent, naming what was wrong
        resume_command(out, decisions={"c1": {"type": "edit"}, "c2": {"type": "approve"}})
    assert (
        "'c1'" in str(refused.value) and "sampler" in str(refused.value) and "messages" in str(refused.value)
    )
    with pytest.raises(ResumeError, match="no pending"):
        resume_command(out, answers={"c1": {"k": {"action": "accept"}}})
    edited = [{"role": "user", "content": {"type": "text", "text": "Summarize briefly"}}]
    command = resume_command(
        out, decisions={"c1": {"type": "edit", "messages": edited}, "c2": {"type": "approve"}}
    )
    assert seen == []
    out = await graph.ainvoke(command, config())
    messages = tool_messages(out)
    assert text_of(messages["c1"]) == "summary: Scripted reply to: Summarize briefly"
    assert text_of(messages["c2"]) == "echo: hi"
    assert [s["text"] for s in seen] == ["Scripted reply to: Summarize briefly"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_wrong_sampling_decision_leaves_the_same_interrupt_answerable(
    open_servers: OpenServers, mode: str
) -> None:
    srv, seen = build_server()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=ScriptedSamplingModel())})
    graph, pending = await ask_graph(servers, InMemorySaver())
    with pytest.raises(ResumeError, match="only a 'reject' decision takes a 'message'"):
        resume_command([pending], decisions={"c1": {"type": "approve", "message": "why"}})
    with pytest.raises(ValidationError):  # sent raw, LangGraph refuses it before saving it
        await graph.ainvoke(Command(resume={pending.id: {"type": "approve", "message": "why"}}), config())
    (again,) = pending_interrupts(await graph.aget_state(config(), subgraphs=True))
    assert again.interrupt_id == pending.id and again.sampling["tool_call_id"] == "c1"
    out = await graph.ainvoke(resume_command([again], decisions={pending.id: {"type": "reject"}}), config())
    assert tool_messages(out)["c1"].status == "error" and seen == []


async def answer_everything(graph: Any, out: dict[str, Any], tone: str) -> tuple[dict[str, Any], list[str]]:
    """Answer each pending question (the tone) and sampling review (approve) until the run ends."""
    kinds: list[str] = []
    for _ in range(6):
        pending = pending_interrupts(out)
        if not pending:
            return out, kinds
        resume: dict[str, Any] = {}
        for item in pending:
            kinds.append(item.kind)
            if item.kind == "elicitation":
                [key] = item.elicitation["requests"]
                resume[item.interrupt_id] = {key: {"action": "accept", "content": {"tone": tone}}}
            else:
                resume[item.interrupt_id] = {"type": "approve"}
        out = await graph.ainvoke(Command(resume=resume), config())
    raise AssertionError(f"still asking after six answers: {kinds}")


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("tool", ["summarize_asking", "summarize_in_tone"])
async def test_sampling_inside_an_elicitation_round_is_reviewed_and_the_tool_runs_once(
    open_servers: OpenServers, mode: str, tool: str
) -> None:
    """A question and a completion in the same round (``summarize_asking``), or a completion asked for with the
    person's answer (``summarize_in_tone``): each is asked once, and the server gets one completion."""
    srv, seen = build_server()
    model = ScriptedSamplingModel()
    servers = open_servers({"sampler": in_process(srv, mode, sampling_model=model, sampling_max_tokens=100)})
    graph = one_turn_graph(
        servers, [call(f"sampler_{tool}", "c1", text="a long story")], InMemorySaver(), policy=NO_APPROVALS
    )
    out = await graph.ainvoke(start(), config())
    out, kinds = await answer_everything(graph, out, "cheerful")

    assert sorted(kinds) == ["elicitation", "sampling"]  # each asked once
    text = text_of(tool_messages(out)["c1"])
    assert tool_messages(out)["c1"].status == "success", text
    [got] = seen  # the tool body ran once, with one completion
    assert got["model"] == "ScriptedSamplingModel"
    if tool == "summarize_in_tone":
        assert got["text"] == "Scripted reply to: Summarize in a cheerful tone: a long story"
    else:
        assert got["tone"] == "cheerful" and text.startswith("cheerful summary: Scripted reply to: Summarize")
    assert len(model.budgets) == 1
