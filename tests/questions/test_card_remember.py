"""The Agent Chat UI approval card's ``Remember`` box: the card allows ``edit`` only (its Decision box decides), so a
person asks for ``remember`` by typing a scope in the box and approve (or reject) in Decision, and pressing Submit.
Answered the way Agent Chat UI answers (``{"decisions": [...]}``, the edited args as strings); what ran is read from
the server's own record. The same card in a real browser: ``tests/browser/test_new_cards.py``."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from langgraph_mcp.approval.memory import list_approvals
from langgraph_mcp.errors import AnswerRefusedError
from tests.support.helpers import OpenServers
from tests.support.memory_support import cfg, deletes, demo, turn, wired

pytestmark = pytest.mark.anyio

CARD_WIRINGS = ("gate-router-agent-chat-ui", "middleware")


def _edit(args: dict[str, Any]) -> dict[str, Any]:
    return {"decisions": [{"type": "edit", "edited_action": {"name": "demo_delete_file", "args": args}}]}


def _typed(pending: Any, **typed: str) -> dict[str, Any]:
    """What Agent Chat UI sends: the card's boxes as shown, with ``typed`` typed in."""
    return _edit({**_card(pending)["args"], **typed})


def _card(pending: Any) -> dict[str, Any]:
    [request] = pending.value["action_requests"]
    return dict(request)


@pytest.mark.parametrize("wiring", CARD_WIRINGS)
async def test_typing_thread_in_the_remember_box_remembers_the_call_as_shown(
    open_servers: OpenServers, wiring: str
) -> None:
    servers, srv = demo(open_servers)
    graph = await wired(servers, wiring, store=InMemoryStore())
    out = await turn(graph, cfg("t1", "ann"))
    [pending] = out["__interrupt__"]
    card = _card(pending)
    assert {k: v for k, v in card["args"].items() if k != "how_to_answer"} == {
        "path": "todo.txt",
        "remember": "no - type thread (on this thread) or principal (of this user, on any thread) to decide "
        "later calls of this tool the same way without asking",
        "reason": "",
        "decision": "",
    }
    assert (
        "type thread (on this thread) or principal (of this user, on any thread) in the Remember box (and approve "
        "or reject in Decision)" in card["description"]
    )
    # a scope typed, but no decision: nothing is sent, nothing remembered
    with pytest.raises(AnswerRefusedError, match="Decision is empty"):
        await graph.ainvoke(
            Command(resume={pending.id: _typed(pending, remember="thread")}), cfg("t1", "ann")
        )
    assert deletes(srv) == 0 and list_approvals(graph.store) == []  # type: ignore[arg-type]

    out = await graph.ainvoke(
        Command(resume={pending.id: _typed(pending, remember=" Thread ", decision="approve")}),
        cfg("t1", "ann"),
    )
    assert "__interrupt__" not in out and deletes(srv) == 1
    [kept] = list_approvals(graph.store)  # type: ignore[arg-type]
    assert (kept.scope, kept.owner, kept.entry["decision"]) == ("thread", "t1", "approve")
    out = await turn(graph, cfg("t1", "ann"), "again")  # the same thread, the same call: no card, and it ran
    assert "__interrupt__" not in out and deletes(srv) == 2
    out = await turn(graph, cfg("t2", "ann"))  # another thread: asked
    assert "__interrupt__" in out and deletes(srv) == 2


@pytest.mark.parametrize("wiring", CARD_WIRINGS)
async def test_no_in_the_box_is_a_plain_answer_and_a_wrong_word_is_refused(
    open_servers: OpenServers, wiring: str
) -> None:
    servers, srv = demo(open_servers)
    graph = await wired(servers, wiring, store=InMemoryStore())
    out = await turn(graph, cfg("t1", "ann"))
    [pending] = out["__interrupt__"]

    for typed, why in (
        ("yes", r"Remember: 'yes' is not one of no, thread, principal"),
        ("thread", r"an edited call cannot be remembered; set Remember back to no"),
    ):
        path = "todo.txt" if typed == "yes" else "notes.txt"
        answer = _typed(pending, path=path, remember=typed, decision="approve")
        with pytest.raises(AnswerRefusedError, match=why):  # a card's answer: refused in words
            await graph.ainvoke(Command(resume={pending.id: answer}), cfg("t1", "ann"))
        state = await graph.aget_state(cfg("t1", "ann"))
        assert [i.id for i in state.interrupts] == [pending.id]  # still answerable, nothing ran
        assert deletes(srv) == 0

    # an edit with the box left as shown: the edited call runs, nothing is remembered
    out = await graph.ainvoke(
        Command(resume={pending.id: _typed(pending, path="notes.txt", decision="approve")}), cfg("t1", "ann")
    )
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.text.endswith("Deleted notes.txt") for m in results] == [True] and deletes(srv) == 1
    assert list_approvals(graph.store) == []  # type: ignore[arg-type]
    out = await turn(graph, cfg("t1", "ann"), "again")
    assert "__interrupt__" in out and deletes(srv) == 1


async def test_no_box_where_nothing_is_offered(open_servers: OpenServers) -> None:
    """A locked rule's ask offers no memory: the card shows the tool's arguments only."""
    servers, _ = demo(open_servers)
    graph = await wired(servers, "gate-router-agent-chat-ui", [("reset_stats", {})], store=InMemoryStore())
    out = await turn(graph, cfg("t1", "ann"))
    [pending] = out["__interrupt__"]
    assert "remember" not in pending.value
    assert "remember" not in _card(pending)["args"] and "Remember box" not in _card(pending)["description"]
