"""The real Agent Chat UI, in a real browser, against the repository's ``langgraph dev``: what a person sees.

``langgraph dev`` serves the repository's ``langgraph.json``; Agent Chat UI (its upstream source, vendored at a
pinned commit, ``npm install``-ed into a cache) runs under ``next dev``; Debian's chromium, driven by
playwright-core (``tests/browser/drive.cjs``), opens the page pointed at graph ``mcp_agent_chat`` by its query
string and does what a person does: types a message, reads the cards, fills the boxes, clicks the buttons.
Every assertion is on what the page showed (its visible text, its toasts, the card's text boxes). Screenshots
of each step named by its ``shot`` go to ``tests/browser/artifacts/`` (or ``$LANGGRAPH_MCP_ARTIFACTS/browser``),
with a JSON report per scenario.

Locally the tier skips, saying what is missing, when chromium, node/npm or the UI's source are absent;
``.ci/run`` installs them and sets ``LANGGRAPH_MCP_REQUIRE_BROWSER=1``, which turns every skip into a failure.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from langgraph_mcp.examples.studio import CHAT_GRAPH_ID
from langgraph_mcp.questions.cards import REDRAW_WARNING
from tests.browser.agent_chat_ui import (
    REQUIRE_ENV,
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

pytestmark = pytest.mark.slow

# The first request makes next dev compile the page (30 s, up to minutes on a loaded 2-core box).
OPEN_TIMEOUT_MS = 240_000

REGISTRATION = {
    "Name": "Ada Lovelace",
    "Email": "ada@example.com",
    "Plan": "pro",
    "Newsletter": "true",
    "Start": "2026-12-24",
}


def test_a_missing_part_skips_locally_and_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    """Locally the tier skips saying what is missing; with LANGGRAPH_MCP_REQUIRE_BROWSER=1 (CI) it fails."""
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        unavailable("no chromium")
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=r"required .* unavailable: no chromium"):
        unavailable("no chromium")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    try:
        chromium_ready()
        ui = installed_ui()
        driver = installed_driver()
    except BrowserUnavailable as error:
        unavailable(str(error))
    workdir = tmp_path_factory.mktemp("browser")
    with langgraph_dev(workdir) as api_url, next_dev(ui, workdir) as ui_url:
        query = urllib.parse.urlencode({"apiUrl": api_url, "assistantId": CHAT_GRAPH_ID})
        yield Browser(f"{ui_url}/?{query}", api_url, driver, artifacts_dir(), workdir)


def _start(message: str = "go") -> list[dict[str, Any]]:
    """Open the page, send ``message``, and wait until Agent Chat UI has redrawn the card after the new thread (it
    fetches the thread list 4 s after a new thread id, which redraws the card and empties what was typed)."""
    return [
        {"do": "open", "timeout_ms": OPEN_TIMEOUT_MS},
        {"do": "send", "text": message},
        {"do": "settled"},
    ]


def _fill(fields: dict[str, str]) -> list[dict[str, Any]]:
    return [{"do": "fill", "field": label, "value": value} for label, value in fields.items()]


def _toast(step: dict[str, Any]) -> str:
    return "\n".join(step["toasts"])


def _result(text: str, tool: str, call_id: str) -> str:
    """What the page shows as the tool result of ``call_id`` (Agent Chat UI's "Tool Result" box)."""
    head = f"Tool Result: {tool}\n{call_id}\n"
    assert head in text, f"no tool result box for {call_id}:\n{text}"
    return text.split(head, 1)[1].split("\nTool Result:", 1)[0].split("\n\nHere is what happened", 1)[0]


def _finished(text: str) -> None:
    """Every result reads as text, and no card is left: the turn is over."""
    assert "[object Object]" not in text
    assert "Mark as Resolved" not in text
    # One string of file names, no [object Object]. The runs share one demo server (module-scope McpServers in
    # langgraph_mcp/examples/studio_servers.py), so what is left depends on what earlier tests deleted.
    listing = _result(text, "demo_list_files", "call_list_files_1")
    # none left: the server returns no text, only its structured {"result": []}, which the UI shows as a table
    assert listing == "result\t[]" or set(listing.split()) <= {"notes.txt", "todo.txt"}, listing


def _decide(word: str) -> list[dict[str, Any]]:
    """Type ``word`` in the card's Decision box and Submit (the only way a card of this package answers)."""
    return [{"do": "fill", "field": "Decision", "value": word}, {"do": "click", "button": "Submit"}]


def test_approve_then_a_form_answered_wrong_then_right(browser: Browser) -> None:
    """Approve the destructive call; fill the form with a bad age (refused, the card stays), then a good one."""
    report = browser.run(
        "approve-form",
        [
            *_start(),
            {"do": "card", "title": "demo_delete_file", "shot": "approval"},
            *_decide("approve"),
            {"do": "card", "title": "demo_register", "shot": "form"},
            *_fill({**REGISTRATION, "Age": "abc"}),
            *_decide("accept"),
            {"do": "text", "text": "An error occurred", "shot": "refused"},
            {"do": "card", "title": "demo_register"},
            *_fill({**REGISTRATION, "Age": "36"}),
            *_decide("accept"),
            {"do": "card", "title": "demo_pay_deposit", "shot": "url"},
            *_decide("accept"),
            {"do": "text", "text": "Here is what happened", "shot": "finished"},
        ],
    )
    form = report.after("form")
    assert "Edit" in form["text"] and "Currently selected" not in form["text"]
    assert "Submit rejection" not in form["text"] and form["fields"]["Decision"] == ""
    help_box = form["fields"]["How To Answer"].splitlines()
    assert help_box == [
        "Nothing is sent until you type accept (sends the boxes as they stand), decline or cancel in the Decision "
        "box (at the bottom), then Submit.",
        "Name (Your full name), required: text of at least 2 characters",
        "Age (Age in years), required: a whole number between 18 and 120",
        "Email (E-mail address), required: an e-mail address",
        "Plan (Subscription plan), required: one of free, pro",
        "Newsletter (Subscribe to the newsletter?), optional: true or false; default false",
        "Start (Start date (YYYY-MM-DD)), required: a date as YYYY-MM-DD",
        REDRAW_WARNING,
    ]
    assert form["fields"]["Newsletter"] == "false"  # the default is the value shown

    refused = report.after("refused")
    toast = _toast(refused)
    assert (
        "Error: Age: 'abc' is not a whole number between 18 and 120" in toast
    )  # words only, the field's title
    for framing in (
        "validation error",
        "pydantic",
        "HitlAnswers",
        "langgraph_mcp",
        "value_error",
        "field 'age'",
    ):
        assert framing not in toast
    assert "demo_register" in refused["text"] and "Decision" in refused["fields"]  # still answerable

    finished = report.after("finished")["text"]
    _finished(finished)
    assert _result(finished, "demo_delete_file", "call_delete_file_1") == "Deleted todo.txt"
    registered = _result(finished, "demo_register", "call_register_1")
    assert "age\t36\n" in registered and "plan\tpro\n" in registered  # JSON text: the UI shows it as a table
    url = report.after("url")
    # the card's boxes are all Agent Chat UI shows of an edit-only card (its description is behind a button)
    assert url["fields"]["How To Answer"].startswith(
        "Open the URL yourself (it is not opened for you), then type accept in the Decision box"
    ), url["fields"]
    assert url["fields"]["Message"] == "Please confirm the deposit of 20 EUR on the payment page."
    assert url["fields"]["Url"] == "https://pay.example.com/checkout/20"
    assert url["fields"]["Host"] == "pay.example.com" and url["fields"]["Decision"] == "", url["fields"]
    assert _result(finished, "demo_pay_deposit", "call_pay_deposit_1") == "payment consent: accept"


def test_edit_an_approval_then_reject_the_form_with_a_reason(browser: Browser) -> None:
    """Edit the destructive call's path and approve; decline the form; say no to the payment page."""
    report = browser.run(
        "edit-reject",
        [
            *_start(),
            {"do": "card", "title": "demo_delete_file"},
            {"do": "fill", "field": "Path", "value": "notes.txt"},
            *_decide("approve"),
            {"do": "card", "title": "demo_register", "shot": "form"},
            *_decide("decline"),
            {"do": "card", "title": "demo_pay_deposit"},
            *_decide("no"),
            {"do": "text", "text": "Here is what happened", "shot": "finished"},
        ],
    )
    finished = report.after("finished")["text"]
    _finished(finished)
    assert _result(finished, "demo_delete_file", "call_delete_file_1") == "Deleted notes.txt"
    assert _result(finished, "demo_register", "call_register_1").startswith(
        "The user declined the form 'register'."
    )
    assert _result(finished, "demo_pay_deposit", "call_pay_deposit_1") == "payment consent: decline"


def test_reject_an_approval_with_a_reason(browser: Browser) -> None:
    """Reject the destructive call with a reason; accept the empty form (refused, saying which fields); decline it
    and the URL."""
    report = browser.run(
        "reject",
        [
            *_start(),
            {"do": "card", "title": "demo_delete_file"},
            {"do": "fill", "field": "Reason", "value": "keep todo.txt"},
            *_decide("reject"),
            {"do": "card", "title": "demo_register"},
            *_decide("accept"),
            {"do": "text", "text": "An error occurred", "shot": "approved-empty"},
            {"do": "card", "title": "demo_register"},
            *_decide("decline"),
            {"do": "card", "title": "demo_pay_deposit"},
            *_decide("decline"),
            {"do": "text", "text": "Here is what happened", "shot": "finished"},
        ],
    )
    approved_empty = _toast(
        report.after("approved-empty")
    )  # accept = the form as it stands: nothing filled in
    assert "Error: Name: required (text of at least 2 characters); Age: required" in approved_empty
    finished = report.after("finished")["text"]
    _finished(finished)
    assert "keep todo.txt" in _result(finished, "demo_delete_file", "call_delete_file_1")
    assert "Deleted todo.txt" not in finished
