"""Round 3's new cards in the real Agent Chat UI, in a real browser: the completion review (``review_completion=True``:
approve / edit / reject the model's text before the server gets it) and the approval card's ``Remember`` box (a
remembered decision: the next identical call in the thread runs without a card).

The same machinery as ``test_agent_chat_ui.py`` (``langgraph dev`` + ``next dev`` + chromium via playwright-core),
serving the two graphs of ``tests/browser/cards_graph.py``. Each scenario checks what the person saw (the card's
title and boxes), does what a person does (types in a box, clicks a button, sends the next message), and checks the
outcome on the server's side: the sampling server's own record of the completions it received, the demo server's
own record of what it ran. Every wait is on the page (a card, a line appearing n times), never on time.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from tests.browser.agent_chat_ui import (
    Browser,
    BrowserUnavailable,
    artifacts_dir,
    chromium_ready,
    installed_driver,
    installed_ui,
    langgraph_dev,
    next_dev,
    unavailable,
)
from tests.browser.cards_graph import (
    DEMO_EVENTS_ENV,
    GRAPHS,
    REMEMBER_GRAPH_ID,
    REVIEW_GRAPH_ID,
    SAMPLING_SEEN_ENV,
    SUMMARIZED,
)

pytestmark = pytest.mark.slow

OPEN_TIMEOUT_MS = 240_000  # the first request makes next dev compile the page
DONE = "Here is what happened"  # the scripted agent's last message of a turn: the run is over
COMPLETION = f"Scripted reply to: Summarize: {SUMMARIZED}"  # what the scripted sampling model writes


class Served:
    """The two servers and the records their MCP servers keep."""

    def __init__(self, browser: Browser, workdir: Path) -> None:
        self.browser = browser
        self.events = workdir / "demo-events.jsonl"
        self.seen = workdir / "sampling-seen.jsonl"

    def page(self, graph_id: str) -> Browser:
        """The browser pointed at ``graph_id``."""
        base = self.browser.page_url.split("?", 1)[0]
        query = urllib.parse.urlencode({"apiUrl": self.browser.api_url, "assistantId": graph_id})
        b = self.browser
        return Browser(f"{base}?{query}", b.api_url, b.driver, b.artifacts, b.workdir)

    def demo_events(self, event: str) -> list[dict[str, Any]]:
        lines = self.events.read_text().splitlines() if self.events.exists() else []
        return [e for e in map(json.loads, lines) if f"{e['tool']}.{e['event']}" == event]

    def completions_seen(self) -> list[str]:
        lines = self.seen.read_text().splitlines() if self.seen.exists() else []
        return [json.loads(line)["text"] for line in lines]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    try:
        chromium_ready()
        ui = installed_ui()
        driver = installed_driver()
    except BrowserUnavailable as error:
        unavailable(str(error))
    workdir = tmp_path_factory.mktemp("cards")
    env = {
        DEMO_EVENTS_ENV: str(workdir / "demo-events.jsonl"),
        SAMPLING_SEEN_ENV: str(workdir / "sampling-seen.jsonl"),
    }
    with langgraph_dev(workdir, graphs=GRAPHS, extra_env=env) as api_url, next_dev(ui, workdir) as ui_url:
        yield Served(Browser(f"{ui_url}/", api_url, driver, artifacts_dir(), workdir), workdir)


def _done(n: int, shot: str) -> dict[str, Any]:
    return {"do": "count", "text": DONE, "n": n, "shot": shot}


def _result(text: str, tool: str, call_id: str) -> str:
    """What the page shows as the tool result of ``call_id`` (Agent Chat UI's "Tool Result" box)."""
    head = f"Tool Result: {tool}\n{call_id}\n"
    assert head in text, f"no tool result box for {call_id}:\n{text}"
    return text.split(head, 1)[1].split("\nTool Result:", 1)[0].split("\n\nHere is what happened", 1)[0]


def test_review_a_completion_approve_edit_reject(served: Served) -> None:
    """Three turns of one thread, one review card each: the person approves the model's text, then replaces it,
    then edits the Prompt box (refused: the model already answered it; the card stays) and rejects; the server got
    exactly the approved and the edited text, and nothing the third time."""
    report = served.page(REVIEW_GRAPH_ID).run(
        "review",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "summarize the notes"},
            {"do": "card", "title": "notes_summarize", "selected": "Approve", "shot": "review-card"},
            {"do": "click", "button": "Approve"},
            _done(1, "approved"),
            {"do": "send", "text": "summarize them again"},
            {"do": "card", "title": "notes_summarize", "selected": "Approve"},
            {"do": "fill", "field": "Completion", "value": "Two decisions, one owner."},
            {"do": "shot", "shot": "edited-card"},
            {"do": "click", "button": "Submit"},
            _done(2, "edited"),
            {"do": "send", "text": "and once more"},
            {"do": "card", "title": "notes_summarize"},
            # the Prompt box is what the model already answered: an edit of it is refused, the card stays
            {"do": "fill", "field": "Prompt", "value": "Summarize kindly: the meeting notes"},
            {"do": "click", "button": "Submit"},
            {"do": "text", "text": "An error occurred", "shot": "prompt-refused"},
            {"do": "card", "title": "notes_summarize"},
            {"do": "reject", "reason": "do not send this"},
            _done(3, "rejected"),
        ],
    )
    card = report.after("review-card")
    # What the person is shown: the model's text and the prompt it answers, in boxes, with the three choices.
    assert card["fields"]["Completion"] == COMPLETION
    assert card["fields"]["Prompt"] == f"Summarize: {SUMMARIZED}"
    for shown in ("notes_summarize", "Edit/Approve", "Approve", "Reject", "Submit rejection"):
        assert shown in card["text"], shown
    refused = report.after("prompt-refused")
    assert "the card's prompt was already answered by the model and can't be edited" in "\n".join(
        refused["toasts"]
    ), refused["toasts"]
    for framing in ("validation error for", "errors.pydantic.dev"):  # words only, not pydantic's framing
        assert framing not in "\n".join(refused["toasts"]), refused["toasts"]
    assert "Submit rejection" in refused["text"]  # still answerable
    assert served.completions_seen() == [COMPLETION, "Two decisions, one owner."]  # the server's own record

    text = report.after("rejected")["text"]
    assert _result(text, "notes_summarize", "call_summarize_1") == f"summary: {COMPLETION}"
    assert _result(text, "notes_summarize", "call_summarize_2") == "summary: Two decisions, one owner."
    refused = _result(text, "notes_summarize", "call_summarize_3")
    assert refused.startswith("Error: MCP server 'notes': Sampling request refused: do not send this"), (
        refused
    )
    assert "Mark as Resolved" not in report.after("rejected")["text"]  # no card left


def test_remember_for_the_thread_then_the_same_call_runs_without_a_card(served: Served) -> None:
    """The person types ``thread`` in the approval card's Remember box and submits; the next turn proposes the same
    call, which runs without a card; the server ran it both times, and a new thread is asked again."""
    page = served.page(REMEMBER_GRAPH_ID)
    report = page.run(
        "remember",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "delete todo.txt"},
            {"do": "card", "title": "demo_delete_file", "selected": "Approve", "shot": "approval-card"},
            {"do": "fill", "field": "Remember", "value": "thread"},
            {"do": "click", "button": "Submit"},
            _done(1, "remembered"),
            {"do": "send", "text": "delete todo.txt again"},
            _done(2, "not-asked"),
        ],
    )
    card = report.after("approval-card")
    assert card["fields"]["Path"] == "todo.txt"
    box = card["fields"]["Remember"]
    assert box.startswith("no - type thread (on this thread)") and "without asking" in box, box
    not_asked = report.after("not-asked")["text"]
    for call_id in ("call_delete_file_1", "call_delete_file_2"):
        assert _result(not_asked, "demo_delete_file", call_id) == "Deleted todo.txt"
    assert "Mark as Resolved" not in not_asked  # the second call was not asked about
    # The server's own record: the tool body committed its delete once per turn, in two server processes.
    commits = served.demo_events("delete_file.commit")
    assert len(commits) == 2 and len({c["pid"] for c in commits}) == 2, commits
    # What the server remembered: one signed thread entry, the approval.
    client = get_sync_client(url=served.browser.api_url)
    [thread] = client.threads.search(metadata={"graph_id": REMEMBER_GRAPH_ID})
    items = client.store.search_items(("langgraph_mcp", "approvals", "thread"))["items"]
    assert [(i["namespace"][-1], i["key"], i["value"]["decision"]) for i in items] == [
        (thread["thread_id"], "demo/delete_file", "approve")
    ]

    # Another thread (a fresh page): asked again, and nothing more ran.
    fresh = page.run(
        "remember-other-thread",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "delete todo.txt"},
            {"do": "card", "title": "demo_delete_file", "selected": "Approve", "shot": "asked-again"},
        ],
    )
    assert "Mark as Resolved" in fresh.after("asked-again")["text"]
    assert len(served.demo_events("delete_file.commit")) == 2


def test_a_remember_word_it_does_not_offer_is_refused_in_words_and_the_card_stays(served: Served) -> None:
    """The person types ``yes`` in the approval card's Remember box and submits: refused in the decision's words
    (the call, the box, what it takes), not pydantic's framing; the card stays, and Approve then runs the call."""
    commits = len(served.demo_events("delete_file.commit"))  # the scenarios before this one ran it too
    report = served.page(REMEMBER_GRAPH_ID).run(
        "remember-refused",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "delete todo.txt"},
            {"do": "card", "title": "demo_delete_file", "selected": "Approve"},
            {"do": "fill", "field": "Remember", "value": "yes"},
            {"do": "click", "button": "Submit"},
            {"do": "text", "text": "An error occurred", "shot": "remember-refused"},
            {"do": "card", "title": "demo_delete_file"},
            {"do": "click", "button": "Approve"},
            _done(1, "approved"),
        ],
    )
    toasts = "\n".join(report.after("remember-refused")["toasts"])
    words = "tool call 'call_delete_file_1' (demo_delete_file): Remember: 'yes' is not one of no, thread"
    assert words in toasts, toasts
    for framing in (
        "validation error",
        "errors.pydantic.dev",
        "ApprovalDecision",
        "value_error",
        "internal error",
    ):
        assert framing not in toasts, toasts
    assert "Submit rejection" in report.after("remember-refused")["text"]  # still answerable
    assert (
        _result(report.after("approved")["text"], "demo_delete_file", "call_delete_file_1")
        == "Deleted todo.txt"
    )
    assert (
        len(served.demo_events("delete_file.commit")) == commits + 1
    )  # the server's own record: it ran once
