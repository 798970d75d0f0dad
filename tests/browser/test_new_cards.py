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
    CHAT_GRAPH_ID,
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


NOTHING = "so nothing was sent"
"""The words of a card answered with nothing typed in its Decision box (``Decision is empty, so nothing was sent``;
``Decision holds only spaces, so ...`` when it holds only spaces: Agent Chat UI hides a toast that repeats the last)."""


def _refused(title: str, steps: list[dict[str, Any]], label: str) -> list[dict[str, Any]]:
    """``steps`` on the card of ``title`` end in a refusal that sent nothing (its toast), and the card stays."""
    return [
        {"do": "clear_toasts"},
        *steps,
        {"do": "toast", "text": NOTHING, "shot": f"nothing-{label}"},
        {"do": "card", "title": title},
    ]


def _no_controls(title: str, box: str, card: str) -> list[dict[str, Any]]:
    """Every control a person can use to say no on the card ``title``, the Decision box empty: Submit; Ctrl+Enter in
    the Decision box holding only whitespace; Ctrl+Enter in the field ``box`` after typing approve and pressing
    Reset; Mark as Resolved. Each sends nothing: the first three are refused in words and the card stays, Mark as
    Resolved gets the same card back. (Every box of the card has the same Ctrl+Enter handler, which submits
    what is selected: ``inbox-item-input.tsx``; ``tests/questions/test_cards.py`` covers each box's value.)"""
    steps = _refused(title, [{"do": "click", "button": "Submit"}], f"{card}-submit")
    blank = [
        {"do": "fill", "field": "Decision", "value": "  \n "},
        {"do": "key", "field": "Decision", "keys": "Control+Enter"},
    ]
    steps += _refused(title, blank, f"{card}-whitespace-ctrl-enter")
    reset = [
        {"do": "fill", "field": "Decision", "value": "approve"},
        {"do": "click", "button": "Reset", "shot": f"{card}-reset"},
        {"do": "key", "field": box, "keys": "Control+Enter"},
    ]
    steps += _refused(title, reset, f"{card}-reset-ctrl-enter")
    return [
        *steps,
        {"do": "clear_toasts"},
        {"do": "resolve"},
        {"do": "toast", "text": "Marked thread as resolved"},
        {"do": "card", "title": title, "shot": f"{card}-resolved"},
    ]


def _edit_only(step: dict[str, Any]) -> None:
    """The card a person sees: one Submit, no Approve button, no Reject box, an empty Decision box last."""
    text = step["text"]
    assert "Submit" in text and "Submit rejection" not in text and "Currently selected" not in text, text
    assert "\nApprove\n" not in text and "\nReject\n" not in text, text
    assert list(step["fields"])[-1] == "Decision" and step["fields"]["Decision"] == "", step["fields"]


def _nothing_sent(report: Any, card: str) -> None:
    """Every refusal of ``card``'s "no" controls said so in words, without pydantic's framing; Reset emptied the
    Decision box."""
    for step in report.steps:
        label = str(step["step"].get("shot", ""))
        if label.startswith(f"nothing-{card}-"):
            toasts = "\n".join(step["toasts"])
            assert NOTHING in toasts and "validation error" not in toasts, (label, toasts)
    assert report.after(f"{card}-reset")["fields"]["Decision"] == ""


def _done(n: int, shot: str) -> dict[str, Any]:
    return {"do": "count", "text": DONE, "n": n, "shot": shot}


def _result(text: str, tool: str, call_id: str) -> str:
    """What the page shows as the tool result of ``call_id`` (Agent Chat UI's "Tool Result" box)."""
    head = f"Tool Result: {tool}\n{call_id}\n"
    assert head in text, f"no tool result box for {call_id}:\n{text}"
    return text.split(head, 1)[1].split("\nTool Result:", 1)[0].split("\n\nHere is what happened", 1)[0]


def test_review_a_completion_approve_edit_reject(served: Served) -> None:
    """Three turns of one thread, one review card each: first every "no" control on the card (Submit, Ctrl+Enter,
    Reset, Mark as Resolved) sends nothing, then the person approves the model's text by typing approve
    in Decision; then replaces it; then edits the Prompt box (refused: the model already answered it; the card
    stays) and rejects; the server got exactly the approved and the edited text, and nothing the third time."""
    report = served.page(REVIEW_GRAPH_ID).run(
        "review",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "summarize the notes"},
            {"do": "settled"},  # the redraw 4 s after a new thread has happened: what is typed now stays
            {"do": "card", "title": "notes_summarize", "shot": "review-card"},
            *_no_controls("notes_summarize", "Completion", "review"),
            {"do": "fill", "field": "Decision", "value": "approve"},
            {"do": "click", "button": "Submit"},
            _done(1, "approved"),
            {"do": "send", "text": "summarize them again"},
            {"do": "card", "title": "notes_summarize"},
            {"do": "fill", "field": "Completion", "value": "Two decisions, one owner."},
            {"do": "fill", "field": "Decision", "value": "approve"},
            {"do": "shot", "shot": "edited-card"},
            {"do": "click", "button": "Submit"},
            _done(2, "edited"),
            {"do": "send", "text": "and once more"},
            {"do": "card", "title": "notes_summarize"},
            # the Prompt box is what the model already answered: an edit of it is refused, the card stays
            {"do": "fill", "field": "Prompt", "value": "Summarize kindly: the meeting notes"},
            {"do": "fill", "field": "Decision", "value": "approve"},
            {"do": "clear_toasts"},
            {"do": "click", "button": "Submit"},
            {"do": "toast", "text": "already answered by the model", "shot": "prompt-refused"},
            {"do": "card", "title": "notes_summarize"},
            {"do": "fill", "field": "Reason", "value": "do not send this"},
            {"do": "fill", "field": "Decision", "value": "reject"},
            {"do": "click", "button": "Submit"},
            _done(3, "rejected"),
        ],
        budget_s=1200,
    )
    card = report.after("review-card")
    # What the person is shown: the model's text and the prompt it answers, in boxes, with the three choices.
    assert card["fields"]["Completion"] == COMPLETION
    assert card["fields"]["Prompt"] == f"Summarize: {SUMMARIZED}"
    assert card["fields"]["Decision"] == "" and card["fields"]["Reason"] == ""
    _edit_only(card)
    refused = report.after("prompt-refused")
    assert "the card's prompt was already answered by the model and can't be edited" in "\n".join(
        refused["toasts"]
    ), refused["toasts"]
    for framing in ("validation error for", "errors.pydantic.dev"):  # words only, not pydantic's framing
        assert framing not in "\n".join(refused["toasts"]), refused["toasts"]
    assert "Decision" in refused["fields"]  # still answerable
    _nothing_sent(report, "review")
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
            {"do": "settled"},
            {"do": "card", "title": "demo_delete_file", "shot": "approval-card"},
            {"do": "fill", "field": "Remember", "value": "thread"},
            {"do": "fill", "field": "Decision", "value": "approve"},
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
    _edit_only(card)
    not_asked = report.after("not-asked")["text"]
    assert _result(not_asked, "demo_delete_file", "call_delete_file_1") == "Deleted todo.txt"
    assert _result(not_asked, "demo_delete_file", "call_delete_file_2") == (  # the model is told why
        "Deleted todo.txt (Ran under a remembered approval on this thread; nobody was asked this time.)"
    )
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
            {"do": "card", "title": "demo_delete_file", "shot": "asked-again"},
        ],
    )
    assert "Mark as Resolved" in fresh.after("asked-again")["text"]
    assert len(served.demo_events("delete_file.commit")) == 2


def test_a_remember_word_it_does_not_offer_is_refused_in_words_and_the_card_stays(served: Served) -> None:
    """The person types ``yes`` in the approval card's Remember box and approve in Decision: refused in the
    decision's words (the call, the box, what it takes), not pydantic's framing; the card stays, and approve (the
    box redrawn as shown) then runs the call."""
    commits = len(served.demo_events("delete_file.commit"))  # the scenarios before this one ran it too
    report = served.page(REMEMBER_GRAPH_ID).run(
        "remember-refused",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "delete todo.txt"},
            {"do": "settled"},
            {"do": "card", "title": "demo_delete_file"},
            {"do": "fill", "field": "Remember", "value": "yes"},
            {"do": "fill", "field": "Decision", "value": "approve"},
            {"do": "click", "button": "Submit"},
            {"do": "text", "text": "An error occurred", "shot": "remember-refused"},
            {"do": "card", "title": "demo_delete_file"},
            {"do": "fill", "field": "Decision", "value": "approve"},
            {"do": "click", "button": "Submit"},
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
    assert "Decision" in report.after("remember-refused")["fields"]  # still answerable
    assert (
        _result(report.after("approved")["text"], "demo_delete_file", "call_delete_file_1")
        == "Deleted todo.txt"
    )
    assert (
        len(served.demo_events("delete_file.commit")) == commits + 1
    )  # the server's own record: it ran once


def test_every_no_control_on_the_approval_form_and_url_cards_sends_nothing_and_no_means_no(
    served: Served,
) -> None:
    """On each card of the Agent Chat UI demo turn (the approval of ``demo_delete_file``, the registration form, the
    payment URL), every control a person can use to say no, with the Decision box empty, sends nothing: Submit, a
    whitespace Decision with Ctrl+Enter, Reset after typing approve then Ctrl+Enter in a field, Mark as Resolved
    (LangGraph ignores its ``goto: END``; the same card comes back). Then reject / decline / decline typed in Decision are the answers
    that go. The demo server's own record: nothing was deleted, registered or paid."""
    before = {
        e: len(served.demo_events(e)) for e in ("delete_file.commit", "register.commit", "pay_deposit.commit")
    }
    report = served.page(CHAT_GRAPH_ID).run(
        "no-controls",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "go"},
            {"do": "settled"},
            {"do": "card", "title": "demo_delete_file", "shot": "approval-card"},
            *_no_controls("demo_delete_file", "Path", "approval"),
            {"do": "fill", "field": "Reason", "value": "keep todo.txt"},
            {"do": "fill", "field": "Decision", "value": "reject"},
            {"do": "click", "button": "Submit"},
            {"do": "card", "title": "demo_register", "shot": "form-card"},
            *_no_controls("demo_register", "Age", "form"),
            {"do": "fill", "field": "Decision", "value": "decline"},
            {"do": "click", "button": "Submit"},
            {"do": "card", "title": "demo_pay_deposit", "shot": "url-card"},
            *_no_controls("demo_pay_deposit", "Url", "url"),
            {"do": "fill", "field": "Decision", "value": "decline"},
            {"do": "click", "button": "Submit"},
            _done(1, "finished"),
        ],
        timeout_ms=120_000,
        budget_s=2400,
    )
    for card in ("approval", "form", "url"):
        _edit_only(report.after(f"{card}-card"))
        _nothing_sent(report, card)
    form = report.after("form-card")["fields"]["How To Answer"]
    assert form.startswith("Nothing is sent until you type accept"), form
    text = report.after("finished")["text"]
    assert "keep todo.txt" in _result(text, "demo_delete_file", "call_delete_file_1")
    registered = _result(text, "demo_register", "call_register_1")
    assert registered.startswith("The user declined the form 'register'. The server said: "), registered
    assert _result(text, "demo_pay_deposit", "call_pay_deposit_1") == "payment consent: decline"
    # The server's own record: nothing was deleted, registered or paid.
    for event, count in before.items():
        assert len(served.demo_events(event)) == count, event


def test_an_edit_typed_at_once_is_the_edit_that_runs_or_nothing_runs(served: Served) -> None:
    """The person types a new Path and approve the moment the card appears; Agent Chat UI may redraw the card in
    its first seconds (when it fetches the thread list, 4 s after a new thread): once the page has settled, what
    the card holds is either what was typed (and Submit deletes notes.txt) or the card as shown, Decision empty
    (and Submit sends nothing; typed again, it deletes notes.txt). todo.txt, the unedited call, is never deleted."""
    deleted = {c.get("path") for c in served.demo_events("delete_file.commit")}
    page = served.page(CHAT_GRAPH_ID)
    report = page.run(
        "typed-at-once",
        [
            {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
            {"do": "send", "text": "go"},
            {"do": "type_at_once", "title": "demo_delete_file", "field": "Path", "value": "notes.txt"},
            {"do": "fill", "field": "Decision", "value": "approve"},
            {"do": "settled", "shot": "settled"},
            {"do": "clear_toasts"},
            {"do": "click", "button": "Submit"},
            {"do": "shot", "shot": "submitted"},
        ],
        timeout_ms=120_000,
    )
    kept = report.after("settled")["fields"]
    if kept.get("Path") == "notes.txt":  # the typed edit survived: it is what ran
        assert kept["Decision"] == "approve"
    else:  # redrawn as shown: the Submit sent nothing, and the edit typed again runs
        assert kept == {**kept, "Path": "todo.txt", "Decision": ""}, kept
        assert NOTHING in "\n".join(report.after("submitted")["toasts"])
        thread_page = report.after("submitted")["url"]  # the same thread (its id is in the page's address)
        b = page
        again = Browser(thread_page, b.api_url, b.driver, b.artifacts, b.workdir).run(
            "typed-again",
            [
                {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
                {"do": "card", "title": "demo_delete_file"},
                {"do": "fill", "field": "Path", "value": "notes.txt"},
                {"do": "fill", "field": "Decision", "value": "approve"},
                {"do": "click", "button": "Submit"},
            ],
        )
        assert again.steps
    commits = [c for c in served.demo_events("delete_file.commit") if c.get("path") not in deleted]
    assert [c.get("path") for c in commits] == ["notes.txt"], commits
