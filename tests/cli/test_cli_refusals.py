"""The CLI's run loop when a graph refuses an answer before saving it: the refusal in words, then asked again.

An Agent Chat UI-mode graph (the demo graph with ``agent_chat_ui=True``) refuses a card's bad answer with an
``AnswerRefusedError`` that LangGraph marks as a refused resume: the same interrupt stays pending. The CLI's
``drive`` shows that refusal as words (no traceback) and asks again; an answer the graph refused already is not
sent in a loop. What ran is read from the demo server's own record (``DEMO_EVENTS_FILE``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from rich.console import Console

from langgraph_mcp import ApprovalPolicy
from langgraph_mcp.cli.pending import PendingMcpInterrupt, Reply
from langgraph_mcp.cli.render import RunView
from langgraph_mcp.cli.runner import Session, drive
from langgraph_mcp.errors import CliError
from langgraph_mcp.examples.demo_graph import build_graph
from langgraph_mcp.examples.demo_state import EVENTS_FILE_ENV


def BAD(item: PendingMcpInterrupt) -> dict[str, Any]:
    """The card sent back as shown, its Decision box empty (Submit, Ctrl+Enter or Reset in Agent Chat UI)."""
    (action,) = item.payload["action_requests"]
    return {"type": "edit", "edited_action": {"name": action["name"], "args": dict(action["args"])}}


class Scripted:
    """Answers the approval with each of ``answers`` in turn (the last one again when they run out)."""

    how = "script"

    def __init__(self, *answers: dict[str, Any] | Callable[[PendingMcpInterrupt], dict[str, Any]]) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def reply(self, item: PendingMcpInterrupt) -> Reply | None:
        if item.kind != "approval":
            return None  # the trip's form stays pending: this test is about the approval
        self.asked.append(item.interrupt_id)
        answer = self.answers[min(len(self.asked), len(self.answers)) - 1]
        return Reply(answer(item) if callable(answer) else answer, self.how)


def run(tmp_path: Path, responder: Scripted) -> tuple[Any, str]:
    db = tmp_path / "threads.sqlite"
    out = io.StringIO()
    console = Console(file=out, width=200, no_color=True)
    with Session() as session:
        servers = session.open_servers(None, db=db)
        graph = build_graph(
            servers, policy=ApprovalPolicy(), checkpointer=session.checkpointer(db), agent_chat_ui=True
        )
        view = RunView(console, transcript=False, policy=ApprovalPolicy(), tools=[])
        try:
            outcome = drive(
                session,
                graph,
                {"configurable": {"thread_id": "t1"}},
                {"messages": [HumanMessage("delete todo.txt and book a trip to Rome")]},
                view,
                [responder],
            )
        except CliError as exc:
            outcome = exc
    return outcome, out.getvalue()


def deletes(events: Path) -> int:
    if not events.exists():
        return 0
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    return sum(1 for e in lines if e.get("tool") == "delete_file" and e.get("event") == "enter")


def test_a_card_answer_the_graph_refuses_is_shown_in_words_and_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv(EVENTS_FILE_ENV, str(events))
    responder = Scripted(BAD, {"type": "reject", "message": "not now"})

    outcome, printed = run(tmp_path, responder)

    assert not isinstance(outcome, CliError), outcome
    assert "Traceback" not in printed
    assert "refused that answer (nothing was saved)" in printed
    assert "Decision is empty, so nothing was sent" in printed
    assert len(responder.asked) == 2 and responder.asked[0] == responder.asked[1]  # the same interrupt, again
    assert "rejected this call" in printed
    assert deletes(events) == 0


def test_the_same_refused_answer_again_ends_with_an_error_instead_of_a_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv(EVENTS_FILE_ENV, str(events))
    responder = Scripted(BAD)

    outcome, printed = run(tmp_path, responder)

    assert isinstance(outcome, CliError) and "Traceback" not in printed
    assert "refused these answers before" in str(outcome)
    assert len(responder.asked) == 2
    assert deletes(events) == 0
