"""A completion reviewed before it goes back to the server (``review_completion=True``), both eras: the human sees
the model's text and approves, edits or rejects it; the server gets exactly that text or a refusal. The completion
is kept in the checkpoint: a restart between the completion and the review (new ``McpServers``, new
``AsyncSqliteSaver`` on the same file) shows the same text, and the model is never called again."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
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

pytestmark = pytest.mark.anyio
NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
CALL = call("sampler_summarize", "c1", text="a long story")
FIRST = "[1] Scripted reply to: Summarize: a long story"


class NumberedModel(ScriptedSamplingModel):
    """Numbers its replies: a second call would give another text (``budgets`` counts the calls)."""

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        out = super()._generate(messages, stop, run_manager, **kwargs)
        text = f"[{len(self.budgets)}] {out.generations[0].message.content}"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def config() -> Any:
    return {"configurable": {"thread_id": "t"}}


def sampler(srv: Any, mode: str, model: Any, **options: Any) -> dict[str, Any]:
    return {"sampler": in_process(srv, mode, sampling_model=model, review_completion=True, **options)}


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("decision", "server_saw"),
    [
        ({"type": "approve"}, [FIRST]),
        ({"type": "edit", "text": "A story, shortly."}, ["A story, shortly."]),
        ({"type": "reject", "message": "too long"}, []),
    ],
)
async def test_the_review_shows_the_completion_and_the_server_gets_exactly_the_decided_text(
    open_servers: OpenServers, mode: str, decision: dict[str, Any], server_saw: list[str]
) -> None:
    srv, seen = build_server()
    model = NumberedModel()
    servers = open_servers(sampler(srv, mode, model, sampling_policy="allow", sampling_max_tokens=64))
    graph = one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS)
    out = await graph.ainvoke(start(), config())
    (pending,) = pending_interrupts(out)
    review = pending.sampling_review
    assert pending.kind == "sampling_review" and review["type"] == "mcp_sampling_review"
    assert review["completion"] == FIRST and review["model"] == "NumberedModel"
    assert review["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Summarize: a long story"}}
    ]
    assert (review["system_prompt"], review["max_tokens"]) == ("You write one-line summaries.", 64)
    assert seen == []  # nothing went back before the human said so
    with pytest.raises(ResumeError, match="'text'"):
        resume_command(out, decisions={"c1": {"type": "edit"}})
    with pytest.raises(ValidationError):  # sent raw: refused before it is saved
        await graph.ainvoke(Command(resume={pending.interrupt_id: {"type": "edit"}}), config())
    (again,) = pending_interrupts(await graph.aget_state(config(), subgraphs=True))
    assert again.interrupt_id == pending.interrupt_id and again.sampling_review["completion"] == FIRST
    out = await graph.ainvoke(resume_command(out, decisions={"c1": decision}), config())
    message = tool_messages(out)["c1"]
    assert [s["text"] for s in seen] == server_saw
    assert len(model.budgets) == 1  # the refused answer's re-run did not call the model again
    if server_saw:
        assert text_of(message) == f"summary: {server_saw[0]}"
    else:
        assert message.status == "error"


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ({"type": "approve"}, FIRST),
        ({"type": "edit", "text": "Edited after restart"}, "Edited after restart"),
        ({"type": "reject"}, None),
    ],
)
async def test_a_restart_between_the_completion_and_its_review_shows_the_same_text(
    open_servers: OpenServers, mode: str, decision: dict[str, Any], expected: str | None, tmp_path: Path
) -> None:
    srv, seen = build_server()
    db = str(tmp_path / "checkpoints.db")
    first_model = NumberedModel()
    first = open_servers(
        sampler(srv, mode, first_model)
    )  # sampling_policy "ask": the request is asked about first
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        graph = one_turn_graph(first, [CALL], saver, policy=NO_APPROVALS)
        (request,) = pending_interrupts(await graph.ainvoke(start(), config()))
        assert request.kind == "sampling"
        out = await graph.ainvoke(resume_command([request], decisions={"c1": {"type": "approve"}}), config())
        (review,) = pending_interrupts(out)
        assert review.sampling_review["completion"] == FIRST
    await first.aclose()
    # A new McpServers and a new saver on the same file: nothing of the first process is in memory.
    second_model = NumberedModel()
    second = open_servers(sampler(srv, mode, second_model))
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        graph = one_turn_graph(second, [CALL], saver, policy=NO_APPROVALS)
        out = await graph.ainvoke(None, config())  # a re-run without an answer shows the same review again
        (shown,) = pending_interrupts(out)
        assert shown.interrupt_id == review.interrupt_id and shown.sampling_review["completion"] == FIRST
        out = await graph.ainvoke(resume_command(out, decisions={"c1": decision}), config())
    if expected is None:  # rejected: the server got a refusal, never the completion
        assert tool_messages(out)["c1"].status == "error" and seen == []
    else:
        assert text_of(tool_messages(out)["c1"]) == f"summary: {expected}"
        assert [s["text"] for s in seen] == [expected]
    assert len(first_model.budgets) == 1 and second_model.budgets == []  # the model was called once in all


@pytest.mark.parametrize("mode", ERAS)
async def test_two_reviewed_completions_of_one_call_each_made_once(
    open_servers: OpenServers, mode: str
) -> None:
    srv, seen = build_server()
    model = NumberedModel()
    servers = open_servers(sampler(srv, mode, model, sampling_policy="allow"))
    two = call("sampler_summarize_with_title", "c1", text="a long story")
    graph = one_turn_graph(servers, [two], InMemorySaver(), policy=NO_APPROVALS)
    (first,) = pending_interrupts(await graph.ainvoke(start(), config()))
    assert first.sampling_review["completion"] == FIRST
    out = await graph.ainvoke(resume_command([first], decisions={"c1": {"type": "approve"}}), config())
    (second,) = pending_interrupts(out)
    title = second.sampling_review["completion"]
    assert title == "[2] Scripted reply to: Title: a long story"
    # The first review's interrupt is answered and gone; its completion is still kept for this re-run.
    out = await graph.ainvoke(
        resume_command(out, decisions={"c1": {"type": "edit", "text": "A Title"}}), config()
    )
    assert text_of(tool_messages(out)["c1"]) == f"summary: {FIRST} / title: A Title"
    assert [s["text"] for s in seen] == [FIRST, "A Title"]
    assert len(model.budgets) == 2


@pytest.mark.parametrize("mode", ERAS)
async def test_agent_chat_ui_mode_shows_the_completion_as_one_card(
    open_servers: OpenServers, mode: str
) -> None:
    srv, seen = build_server()
    servers = open_servers(sampler(srv, mode, NumberedModel(), sampling_policy="allow"))
    graph = one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS, agent_chat_ui=True)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    [card] = pending.value["action_requests"]
    assert card["name"] == "sampler_summarize" and card["args"]["completion"] == FIRST
    assert card["args"]["prompt"] == "Summarize: a long story"
    with pytest.raises(ValidationError):
        await graph.ainvoke(Command(resume={pending.id: {"decisions": [{"type": "edit"}]}}), config())
    edit = {
        "type": "edit",
        "edited_action": {"name": "sampler_summarize", "args": {"completion": "Shorter."}},
    }
    out = await graph.ainvoke(Command(resume={pending.id: {"decisions": [edit]}}), config())
    assert text_of(tool_messages(out)["c1"]) == "summary: Shorter."
    assert [s["text"] for s in seen] == ["Shorter."]


@pytest.mark.parametrize("mode", ERAS)
async def test_an_agent_chat_ui_edit_of_the_reviewed_prompt_is_refused_and_the_card_stays(
    open_servers: OpenServers, mode: str
) -> None:
    """The completion card shows the prompt the model answered in an editable box; an edit of it was silently
    dropped (the server got the completion anyway): now it is refused before it is saved, saying what to edit."""
    srv, seen = build_server()
    servers = open_servers(sampler(srv, mode, NumberedModel(), sampling_policy="allow"))
    graph = one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS, agent_chat_ui=True)
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]

    def edit(**args: str) -> dict[str, Any]:
        return {"decisions": [{"type": "edit", "edited_action": {"name": "sampler_summarize", "args": args}}]}

    changed = edit(completion=FIRST, prompt="Summarize: a short story")
    with pytest.raises(
        AnswerRefusedError,
        match="prompt was already answered by the model and can't be edited: edit 'completion'",
    ) as refused:
        await graph.ainvoke(Command(resume={pending.id: changed}), config())
    # Words only (Agent Chat UI shows the text as it is), not pydantic's framing of a ValidationError.
    assert "validation error for" not in str(refused.value)
    assert "errors.pydantic.dev" not in str(refused.value)
    assert is_invalid_resume(refused.value)
    with pytest.raises(ResumeError, match="edit 'completion'"):
        resume_command(
            pending_interrupts(await graph.aget_state(config(), subgraphs=True)), decisions={"c1": changed}
        )
    (again,) = pending_interrupts(await graph.aget_state(config(), subgraphs=True))
    assert again.interrupt_id == pending.id and seen == []
    kept = edit(completion="Shorter.", prompt="Summarize: a long story")
    out = await graph.ainvoke(Command(resume={pending.id: kept}), config())
    assert text_of(tool_messages(out)["c1"]) == "summary: Shorter."
    assert [s["text"] for s in seen] == ["Shorter."]


@pytest.mark.parametrize("mode", ERAS)
def test_a_sync_graph_refuses_a_review_it_could_not_keep(mode: str) -> None:
    """A sync run can't call the async ``@task`` that keeps the completion: refused, saying why."""
    srv, seen = build_server()
    model = NumberedModel()
    servers = McpServers(sampler(srv, mode, model, sampling_policy="allow"))
    try:
        graph = one_turn_graph(servers, [CALL], InMemorySaver(), policy=NO_APPROVALS)
        out = graph.invoke(start(), config())
    finally:
        servers.close()
    message = tool_messages(out)["c1"]
    assert message.status == "error" and seen == [] and model.budgets == []
    if mode != "legacy":  # a legacy server is sent the refusal (-1) and words its own error
        assert "review_completion" in text_of(message) and "async" in text_of(message)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_completion_whose_task_write_was_lost_is_found_in_its_pending_review(
    open_servers: OpenServers, mode: str, tmp_path: Path
) -> None:
    """A crash after the review interrupt was saved but before the ``@task``'s write landed (both are written in
    the background): the next process finds the text the human is shown in the pending review."""
    srv, seen = build_server()
    db = tmp_path / "checkpoints.db"
    first_model = NumberedModel()
    first = open_servers(sampler(srv, mode, first_model, sampling_policy="allow"))
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        graph = one_turn_graph(first, [CALL], saver, policy=NO_APPROVALS)
        (review,) = pending_interrupts(await graph.ainvoke(start(), config()))
    await first.aclose()
    with sqlite3.connect(db) as conn:
        lost = conn.execute("DELETE FROM writes WHERE channel = '__return__'").rowcount
    assert lost >= 1  # the completion's @task write was there, and is gone now
    second_model = NumberedModel()
    second = open_servers(sampler(srv, mode, second_model, sampling_policy="allow"))
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        graph = one_turn_graph(second, [CALL], saver, policy=NO_APPROVALS)
        out = await graph.ainvoke(resume_command([review], decisions={"c1": {"type": "approve"}}), config())
    assert text_of(tool_messages(out)["c1"]) == f"summary: {FIRST}"
    assert [s["text"] for s in seen] == [FIRST] and second_model.budgets == []


async def test_a_decision_never_answers_a_completion_nobody_was_shown(open_servers: OpenServers) -> None:
    """Legacy: a resume re-issues the call, and this server then asks with another prompt; its new completion is
    asked about anew (the stored approval was for the text shown before), never sent on that approval."""
    srv, seen = build_server()
    model = NumberedModel()
    servers = open_servers(sampler(srv, "legacy", model, sampling_policy="allow"))
    anew = call("sampler_summarize_anew", "c1", text="a long story")
    graph = one_turn_graph(servers, [anew], InMemorySaver(), policy=NO_APPROVALS)
    (first,) = pending_interrupts(await graph.ainvoke(start(), config()))
    shown = re.fullmatch(
        r"\[1\] Scripted reply to: Summarize \(attempt (\d+)\): a long story",
        first.sampling_review["completion"],
    )
    assert shown is not None
    attempt = int(shown[1])
    out = await graph.ainvoke(resume_command([first], decisions={"c1": {"type": "approve"}}), config())
    (second,) = pending_interrupts(out)
    assert second.interrupt_id != first.interrupt_id
    assert second.sampling_review["completion"] == (
        f"[2] Scripted reply to: Summarize (attempt {attempt + 1}): a long story"
    )
    assert seen == []  # the approval of the first text did not send the second
