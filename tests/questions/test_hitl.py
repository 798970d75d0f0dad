"""The HITL cards of elicitation questions and how their decisions map back to MCP answers (no graph needed)."""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_mcp.errors import AnswerError
from langgraph_mcp.payloads import ElicitationInterrupt
from langgraph_mcp.questions.agent_chat_ui import answers_from_decisions, elicitation_card, stored_answers
from langgraph_mcp.questions.cards import REDRAW_WARNING


def payload(requests: dict[str, Any]) -> ElicitationInterrupt:
    return {
        "type": "mcp_elicitation",
        "tool_call_id": "c1",
        "server": "srv",
        "tool": "t",
        "published_name": "srv_t",
        "arguments": {},
        "round": 1,
        "requests": requests,
    }


URL = {
    "mode": "url",
    "message": "Consent",
    "url": "https://pay.example/x",
    "host": "pay.example",
    "openable": True,
}
SCRIPT = {
    "mode": "url",
    "message": "Click",
    "url": "javascript:alert(1)",
    "host": "",
    "openable": False,
    "warning": "not an http(s) link",
}
FORM = {
    "mode": "form",
    "message": "Log in",
    "requested_schema": {
        "type": "object",
        "properties": {"user": {"type": "string"}, "password": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["user", "password"],
    },
    "sensitive": ["password"],
    "asks_for_secrets": True,
}


def _boxes(action: Any, **typed: str) -> dict[str, Any]:
    """What Agent Chat UI sends for a card: its boxes as shown, with ``typed`` typed in."""
    return {
        "decisions": [
            {"type": "edit", "edited_action": {"name": "srv_t", "args": {**action["args"], **typed}}}
        ]
    }


def test_a_url_that_is_not_a_web_link_can_only_be_declined() -> None:
    card = elicitation_card(payload({"k": SCRIPT}))
    (action,) = card["action_requests"]
    assert card["review_configs"] == [{"action_name": "srv_t", "allowed_decisions": ["edit"]}]
    assert "must not be opened" in action["description"] and "not an http(s) link" in action["description"]
    assert action["args"] == {  # what Agent Chat UI shows on the card (the description is behind a button)
        "how_to_answer": "This URL must not be opened: type decline (or cancel) in the Decision box and Submit.\n"
        + REDRAW_WARNING,
        "message": "Click",
        "url": "javascript:alert(1)",
        "why": "not an http(s) link",
        "decision": "",
    }
    with pytest.raises(AnswerError, match="not a web link"):
        answers_from_decisions({"k": SCRIPT}, {"decisions": [{"type": "approve"}]})
    with pytest.raises(AnswerError, match=r"'accept' is not a choice here: type decline or cancel"):
        answers_from_decisions({"k": SCRIPT}, _boxes(action, decision="accept"))
    assert answers_from_decisions({"k": SCRIPT}, {"decisions": [{"type": "reject"}]}) == {
        "k": {"action": "decline"}
    }
    assert answers_from_decisions({"k": SCRIPT}, _boxes(action, decision="Decline ")) == {
        "k": {"action": "decline"}
    }


def test_a_web_link_shows_url_and_host_and_approve_is_accept() -> None:
    (action,) = elicitation_card(payload({"k": URL}))["action_requests"]
    assert "https://pay.example/x" in action["description"] and "Host: pay.example" in action["description"]
    assert answers_from_decisions({"k": URL}, {"decisions": [{"type": "approve"}]}) == {
        "k": {"action": "accept"}
    }


def test_a_form_card_warns_about_secrets_and_maps_an_edit_to_coerced_content() -> None:
    (action,) = elicitation_card(payload({"k": FORM}))["action_requests"]
    assert list(action["args"]) == ["how_to_answer", "user", "password", "n", "decision"]
    assert {k: v for k, v in action["args"].items() if k != "how_to_answer"} == {
        "user": "",
        "password": "",
        "n": "",
        "decision": "",
    }
    assert "asks for secrets" in action["description"]
    assert "- Password, required: text; secret: this UI shows what you type" in action["description"]
    assert "Password, required: text; secret: this UI shows what you type" in action["args"]["how_to_answer"]

    edit = {
        "type": "edit",
        "edited_action": {"name": "srv_t", "args": {"user": "ada", "password": "pw", "n": "4"}},
    }
    assert answers_from_decisions({"k": FORM}, {"decisions": [edit]}, name="srv_t") == {
        "k": {"action": "accept", "content": {"user": "ada", "password": "pw", "n": 4}}
    }
    empty_optional = {
        "type": "edit",
        "edited_action": {"name": "srv_t", "args": {"user": "a", "password": "p", "n": ""}},
    }
    assert answers_from_decisions({"k": FORM}, {"decisions": [empty_optional]})["k"] == {
        "action": "accept",
        "content": {"user": "a", "password": "p"},
    }


def test_wrong_count_wrong_type_or_renamed_tool_are_refused() -> None:
    with pytest.raises(AnswerError, match="1 decision"):
        answers_from_decisions({"k": FORM}, {"decisions": []})
    with pytest.raises(AnswerError, match=r"'edit' .* or 'reject'"):
        answers_from_decisions({"k": FORM}, {"decisions": [{"type": "respond", "message": "x"}]})
    renamed = {"type": "edit", "edited_action": {"name": "other_tool", "args": {}}}
    with pytest.raises(AnswerError, match="must stay 'srv_t'"):
        answers_from_decisions({"k": FORM}, {"decisions": [renamed]}, name="srv_t")


def test_stored_values_map_back_only_when_they_are_decisions() -> None:
    plain = {"k": {"action": "decline"}}
    assert stored_answers({"k": URL}, plain) is plain
    assert stored_answers({"k": URL}, {"decisions": [{"type": "reject"}]}) == {"k": {"action": "decline"}}
    odd = {"decisions": [{"type": "approve"}, {"type": "approve"}]}
    assert stored_answers({"k": URL}, odd) is odd  # does not map: left for the validator to judge


REGISTRATION = {
    "mode": "form",
    "message": "Please fill in the registration form.",
    "requested_schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2, "description": "Your full name"},
            "age": {"type": "integer", "title": "Age", "minimum": 18, "maximum": 120},
            "plan": {"type": "string", "title": "Plan", "enum": ["free", "pro"]},
            "newsletter": {"type": "boolean", "title": "Newsletter", "default": False},
            "start": {"type": "string", "title": "Start", "format": "date"},
        },
        "required": ["name", "age", "plan", "start"],
    },
}


def test_the_card_shows_each_field_s_type_requirement_values_bounds_and_format_in_its_first_box() -> None:
    """Agent Chat UI shows only the args on the card: the first box says what each field takes."""
    card = elicitation_card(payload({"k": REGISTRATION}))
    (action,) = card["action_requests"]
    assert next(iter(action["args"])) == "how_to_answer"
    assert action["args"]["how_to_answer"].splitlines() == [
        "Nothing is sent until you type accept (sends the boxes as they stand), decline or cancel in the Decision "
        "box (at the bottom), then Submit.",
        "Name (Your full name), required: text of at least 2 characters",
        "Age, required: a whole number between 18 and 120",
        "Plan, required: one of free, pro",
        "Newsletter, optional: true or false; default false",
        "Start, required: a date as YYYY-MM-DD",
        REDRAW_WARNING,
    ]
    assert action["args"]["newsletter"] is False  # defaults are the values shown


def test_a_form_card_offers_edit_only_and_sends_nothing_until_a_word_is_typed_in_decision() -> None:
    """Agent Chat UI sends the selected decision whatever button is pressed, and an empty "Submit rejection" on a
    card that allows approve sends approve: so the card allows edit only, and its Decision box decides."""
    card = elicitation_card(payload({"k": REGISTRATION}))
    assert card["review_configs"] == [{"action_name": "srv_t", "allowed_decisions": ["edit"]}]
    (action,) = card["action_requests"]
    assert list(action["args"])[-1] == "decision" and action["args"]["decision"] == ""
    filled = {"name": "Ada", "age": "36", "plan": "pro", "start": "2026-12-24"}
    for typed in (
        "",
        "   ",
        "\n",
        "ok",
        "approve please",
    ):  # as shown (Submit, Ctrl+Enter, Reset), or a stray word
        with pytest.raises(AnswerError, match="Decision"):
            answers_from_decisions({"k": REGISTRATION}, _boxes(action, **filled, decision=typed))
    for typed, action_word in (
        ("decline", "decline"),
        ("No", "decline"),
        ("reject", "decline"),
        ("cancel", "cancel"),
    ):
        assert answers_from_decisions({"k": REGISTRATION}, _boxes(action, **filled, decision=typed)) == {
            "k": {"action": action_word}
        }
    assert answers_from_decisions({"k": REGISTRATION}, _boxes(action, **filled, decision=" Accept"))["k"] == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "plan": "pro", "newsletter": False, "start": "2026-12-24"},
    }
    # A program's plain decisions keep their meaning: approve accepts the form as shown.
    defaults = {
        "mode": "form",
        "message": "Confirm",
        "requested_schema": {
            "type": "object",
            "properties": {
                "seats": {"type": "integer", "default": 2},
                "window": {"type": "boolean", "default": True},
            },
            "required": ["seats"],
        },
    }
    assert answers_from_decisions({"k": defaults}, {"decisions": [{"type": "approve"}]}) == {
        "k": {"action": "accept", "content": {"seats": 2, "window": True}}
    }
    # approving a form whose shown values are not a valid answer is an accept that the validator then refuses
    assert answers_from_decisions({"k": REGISTRATION}, {"decisions": [{"type": "approve"}]})["k"] == {
        "action": "accept",
        "content": {"name": "", "age": "", "plan": "", "newsletter": False, "start": ""},
    }


def test_the_help_and_decision_boxes_sent_back_with_an_edit_are_not_fields() -> None:
    (action,) = elicitation_card(payload({"k": REGISTRATION}))["action_requests"]
    args = {
        **action["args"],
        "name": "Ada",
        "age": "36",
        "plan": "pro",
        "start": "2026-12-24",
        "decision": "accept",
    }
    edit = {"type": "edit", "edited_action": {"name": "srv_t", "args": args}}
    assert answers_from_decisions({"k": REGISTRATION}, {"decisions": [edit]})["k"] == {
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "plan": "pro", "newsletter": False, "start": "2026-12-24"},
    }


def test_a_refused_card_answer_reads_as_words_naming_fields_by_title() -> None:
    """What Agent Chat UI shows after a refused resume is the error's text: no pydantic framing, no request key."""
    from pydantic import TypeAdapter

    from langgraph_mcp.errors import AnswerRefusedError
    from langgraph_mcp.questions.agent_chat_ui import hitl_answers_response_schema

    model = hitl_answers_response_schema(payload({"srv:ask_registration": REGISTRATION}))
    args = {"name": "A", "age": "abc", "plan": "gold", "newsletter": "true", "start": "24.12.2026"}
    edit = {"type": "edit", "edited_action": {"name": "srv_t", "args": args}}
    with pytest.raises(AnswerRefusedError) as refused:
        TypeAdapter(model).validate_python({"decisions": [edit]})
    assert str(refused.value) == (
        "Name: 'A' is not text of at least 2 characters; Age: 'abc' is not a whole number between 18 and 120; "
        "Plan: 'gold' is not one of free, pro; Start: '24.12.2026' is not a date as YYYY-MM-DD"
    )
    assert [field for field, _ in refused.value.problems] == ["name", "age", "plan", "start"]
    assert refused.value.error.key == "srv:ask_registration"  # for code; never in the words

    secret = {
        "type": "edit",
        "edited_action": {"name": "srv_t", "args": {"user": "ada", "password": "pw", "n": "x"}},
    }
    with pytest.raises(AnswerRefusedError, match=r"^N: 'x' is not a whole number$"):
        TypeAdapter(hitl_answers_response_schema(payload({"k": FORM}))).validate_python(
            {"decisions": [secret]}
        )
    pin_form = {
        "mode": "form",
        "message": "PIN",
        "requested_schema": {
            "type": "object",
            "properties": {"pin": {"type": "integer"}},
            "required": ["pin"],
        },
        "sensitive": ["pin"],
    }
    pin = {"type": "edit", "edited_action": {"name": "srv_t", "args": {"pin": "12ab"}}}
    with pytest.raises(
        AnswerRefusedError, match=r"^Pin: the value is not a whole number$"
    ):  # a secret unshown
        TypeAdapter(hitl_answers_response_schema(payload({"k": pin_form}))).validate_python(
            {"decisions": [pin]}
        )
