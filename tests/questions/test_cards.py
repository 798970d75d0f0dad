"""Every Agent Chat UI card the package emits allows ``edit`` only, and nothing is sent until a word is typed in its
empty Decision box (see :mod:`langgraph_mcp.questions.cards`): what the UI sends for each "no" control (Submit,
Ctrl/Cmd+Enter, Reset: the card's boxes as shown; a whitespace Decision) is refused in words, and a yes takes the word
``approve``/``accept``. The same cards in a real browser: ``tests/browser/test_new_cards.py``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from langgraph_mcp.approval.oversight import Oversight, resolve
from langgraph_mcp.errors import AnswerRefusedError, DecisionError
from langgraph_mcp.payloads import DecisionType
from langgraph_mcp.policy.verdicts import Verdict
from langgraph_mcp.questions.agent_chat_ui import AGENT_CHAT_UI, PLAIN, shapes_of
from langgraph_mcp.questions.approval import approval_payload, with_remember_field
from langgraph_mcp.questions.decisions import card_decision_response_schema
from langgraph_mcp.questions.sampling import (
    review_card,
    review_card_model,
    sampling_card,
    sampling_card_model,
)
from langgraph_mcp.questions.sign_in import authorization_payload, sign_in_response_schema

NOTHING = r"Decision (is empty|holds only spaces), so nothing was sent"
BLANKS = ("", "   ", "\n\t")


def _sent(card: Any, name: str, **typed: str) -> dict[str, Any]:
    """What Agent Chat UI sends for ``card``: one edit holding its boxes, as strings, with ``typed`` typed in."""
    shown = card["action_requests"][0]["args"]
    boxes = {k: v if isinstance(v, str) else str(v).lower() for k, v in shown.items()}
    return {"decisions": [{"type": "edit", "edited_action": {"name": name, "args": {**boxes, **typed}}}]}


def _approval(allowed: list[DecisionType], **args: Any) -> Any:
    call = {"name": "srv_pay", "args": args or {"amount": 20, "note": "rent"}, "id": "c1"}
    verdict = Verdict.ask("because", allowed_decisions=allowed)
    return AGENT_CHAT_UI.approval(approval_payload(call, None, verdict))  # type: ignore[arg-type]


def _decide(payload: Any, value: object) -> Any:
    return card_decision_response_schema(payload).model_validate(value).decision()


def test_every_card_allows_edit_only_and_ends_with_an_empty_decision_box() -> None:
    payload = _approval(["approve", "edit", "reject", "respond"])
    assert payload["review_configs"] == [{"action_name": "srv_pay", "allowed_decisions": ["edit"]}]
    assert payload["allowed_decisions"] == ["approve", "edit", "reject", "respond"]  # the policy's, kept
    boxes = payload["action_requests"][0]["args"]
    assert (
        list(boxes) == ["how_to_answer", "amount", "note", "reason", "decision"] and boxes["decision"] == ""
    )
    assert boxes["how_to_answer"].startswith("Nothing runs until you type your decision in the Decision box")
    sign_in = AGENT_CHAT_UI.sign_in(
        authorization_payload(
            server="s",
            authorization_url="https://auth.example/a?state=x",
            principal="p",
            scopes=[],
            tool_call_id="c",
        )
    )
    sampling: Any = {
        "type": "mcp_sampling",
        "tool_call_id": "c",
        "server": "s",
        "tool": "t",
        "published_name": "s_t",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "system_prompt": None,
        "model_preferences": None,
        "max_tokens": 10,
        "requested_max_tokens": 10,
    }
    review: Any = {
        **sampling,
        "type": "mcp_sampling_review",
        "completion": "hello",
        "model": "m",
        "completion_key": "k",
    }
    for card in (sign_in, sampling_card(sampling), review_card(review)):
        assert card["review_configs"][0]["allowed_decisions"] == ["edit"]
        assert list(card["action_requests"][0]["args"])[-1] == "decision"


@pytest.mark.parametrize("typed", BLANKS)
def test_an_approval_card_as_shown_or_with_a_blank_decision_sends_nothing(typed: str) -> None:
    payload = _approval(["approve", "edit", "reject", "respond"])
    for value in (
        _sent(payload, "srv_pay", decision=typed),  # Submit / Ctrl+Enter / Reset: the card as shown
        _sent(payload, "srv_pay", decision=typed, reason="too much"),  # a reason, but no word
        _sent(payload, "srv_pay", decision=typed, amount="5"),  # an edit, but no word
    ):
        with pytest.raises(AnswerRefusedError, match=NOTHING):
            _decide(payload, value)


def test_an_approval_card_s_words_are_the_decisions_the_policy_allows() -> None:
    payload = _approval(["approve", "edit", "reject", "respond"])
    assert _decide(payload, _sent(payload, "srv_pay", decision="approve")) == {"type": "approve"}
    assert _decide(payload, _sent(payload, "srv_pay", decision=" Yes ")) == {"type": "approve"}
    assert _decide(payload, _sent(payload, "srv_pay", decision="approve", amount="5")) == {
        "type": "edit",
        "edited_action": {"name": "srv_pay", "args": {"amount": "5", "note": "rent"}},
    }
    assert _decide(payload, _sent(payload, "srv_pay", decision="no", reason=" not today ")) == {
        "type": "reject",
        "message": "not today",
    }
    assert _decide(payload, _sent(payload, "srv_pay", decision="reject", amount="5")) == {"type": "reject"}
    assert _decide(payload, _sent(payload, "srv_pay", decision="respond", reason="paid already")) == {
        "type": "respond",
        "message": "paid already",
    }
    with pytest.raises(AnswerRefusedError, match="Decision says approve but Reason holds text"):
        _decide(payload, _sent(payload, "srv_pay", decision="approve", reason="no"))
    with pytest.raises(
        AnswerRefusedError, match="'maybe' is not a choice here: type approve, reject or respond"
    ):
        _decide(payload, _sent(payload, "srv_pay", decision="maybe"))

    only_as_shown = _approval(["approve", "reject"])  # no edit: the boxes may not change
    assert "respond" not in only_as_shown["action_requests"][0]["args"]["how_to_answer"]
    with pytest.raises(AnswerRefusedError, match="may run only as shown, and its boxes were changed"):
        _decide(only_as_shown, _sent(only_as_shown, "srv_pay", decision="approve", amount="5"))
    with pytest.raises(AnswerRefusedError, match="'respond' is not a choice here: type approve or reject"):
        _decide(only_as_shown, _sent(only_as_shown, "srv_pay", decision="respond", reason="x"))
    reject_only = _approval(["reject"])
    with pytest.raises(AnswerRefusedError, match="'approve' is not a choice here: type reject"):
        _decide(reject_only, _sent(reject_only, "srv_pay", decision="approve"))
    assert _decide(reject_only, _sent(reject_only, "srv_pay", decision="reject")) == {"type": "reject"}


def test_a_box_sent_back_as_shown_is_the_value_shown_without_a_schema() -> None:
    """The UI turns 20 into "20" and an object into compact JSON: sent back untouched, it is not an edit."""
    payload = _approval(["approve", "reject"], amount=20, rate=2.5, ok=True, tags={"a": [1, 2]})
    sent = _sent(payload, "srv_pay", decision="approve", ok="true", tags='{"a":[1,2]}')
    assert _decide(payload, sent) == {"type": "approve"}


def test_remember_goes_with_a_word_and_a_program_s_plain_decision_is_read_as_it_is() -> None:
    payload = _approval(["approve", "edit", "reject"])
    payload["remember"] = ["thread"]
    with_remember_field(payload)
    assert list(payload["action_requests"][0]["args"])[-3:] == ["remember", "reason", "decision"]
    with pytest.raises(AnswerRefusedError, match=NOTHING):
        _decide(payload, _sent(payload, "srv_pay", remember="thread"))
    assert _decide(payload, _sent(payload, "srv_pay", remember="thread", decision="approve")) == {
        "type": "approve",
        "remember": "thread",
    }
    assert _decide(payload, _sent(payload, "srv_pay", remember="thread", decision="reject")) == {
        "type": "reject",
        "remember": "thread",
    }
    assert _decide(payload, {"decisions": [{"type": "approve"}]}) == {
        "type": "approve"
    }  # resume_command, the CLI


@pytest.mark.parametrize("typed", BLANKS)
def test_sign_in_sampling_and_review_cards_send_nothing_without_a_word(typed: str) -> None:
    sign_in = AGENT_CHAT_UI.sign_in(
        authorization_payload(
            server="s",
            authorization_url="https://auth.example/a?state=st&redirect_uri=http://127.0.0.1:9/cb",
            principal="p",
            scopes=[],
            tool_call_id="c",
        )
    )
    model = sign_in_response_schema(sign_in)
    pasted = "http://127.0.0.1:9/cb?code=abc&state=st"
    with pytest.raises(AnswerRefusedError, match=NOTHING):
        TypeAdapter(model).validate_python(_sent(sign_in, "sign_in", callback_url=pasted, decision=typed))
    with pytest.raises(AnswerRefusedError, match="Callback Url is empty"):
        TypeAdapter(model).validate_python(_sent(sign_in, "sign_in", decision="accept"))
    assert model.model_validate(
        _sent(sign_in, "sign_in", callback_url=pasted, decision="accept")
    ).answer() == {"callback_url": pasted}
    assert model.model_validate(_sent(sign_in, "sign_in", decision="decline")).answer() == {
        "action": "decline"
    }

    sampling: Any = {
        "type": "mcp_sampling",
        "tool_call_id": "c",
        "server": "s",
        "tool": "t",
        "published_name": "s_t",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "system_prompt": None,
        "model_preferences": None,
        "max_tokens": 10,
        "requested_max_tokens": 10,
    }
    card = sampling_card(sampling)
    decide = sampling_card_model(card)
    with pytest.raises(AnswerRefusedError, match=NOTHING):
        decide.model_validate(_sent(card, "s_t", decision=typed, prompt="other"))
    assert decide.model_validate(_sent(card, "s_t", decision="approve")).decision() == {"type": "approve"}
    assert decide.model_validate(_sent(card, "s_t", decision="reject", reason="no")).decision() == {
        "type": "reject",
        "message": "no",
    }
    review: Any = {
        **sampling,
        "type": "mcp_sampling_review",
        "completion": "hello",
        "model": "m",
        "completion_key": "k",
    }
    card = review_card(review)
    decide_review = review_card_model(card)
    with pytest.raises(AnswerRefusedError, match=NOTHING):
        decide_review.model_validate(_sent(card, "s_t", decision=typed))
    assert decide_review.model_validate(
        _sent(card, "s_t", decision="approve", completion="bye")
    ).decision() == {
        "type": "edit",
        "text": "bye",
    }


def test_a_graph_asks_every_kind_in_the_shapes_chosen_once_plain_as_is_or_with_only_its_card_added() -> None:
    assert resolve(None, None, False)[1] is PLAIN and resolve(None, None, True)[1] is AGENT_CHAT_UI
    assert resolve(Oversight(agent_chat_ui=True), None, False)[1] is AGENT_CHAT_UI
    approval = approval_payload(
        {"name": "srv_pay", "args": {"amount": 20}, "id": "c1"}, None, Verdict.ask("why")
    )
    sign_in = authorization_payload(
        server="s",
        authorization_url="https://auth.example/a?state=x",
        principal="p",
        scopes=[],
        tool_call_id="c",
    )
    sampling: Any = {
        "type": "mcp_sampling",
        "tool_call_id": "c",
        "server": "s",
        "tool": "t",
        "published_name": "s_t",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "system_prompt": None,
        "model_preferences": None,
        "max_tokens": 10,
        "requested_max_tokens": 10,
    }
    review: Any = {**sampling, "type": "mcp_sampling_review", "completion": "hello", "model": "m"}
    for ask, payload in (
        ("approval", approval),
        ("sign_in", sign_in),
        ("sampling", sampling),
        ("review", review),
    ):
        assert getattr(PLAIN, ask)(payload) is payload and shapes_of(payload) is PLAIN
        card = getattr(AGENT_CHAT_UI, ask)(payload)
        assert {k: v for k, v in card.items() if k not in ("action_requests", "review_configs")} == payload
        assert (
            len(card["action_requests"]) == len(card["review_configs"]) == 1
            and shapes_of(card) is AGENT_CHAT_UI
        )
    card = AGENT_CHAT_UI.approval(approval)
    assert PLAIN.decision(approval, {"type": "approve"}) == {"type": "approve"}
    assert AGENT_CHAT_UI.decision(card, {"decisions": [{"type": "approve"}]}) == {"type": "approve"}
    with pytest.raises(DecisionError):  # a card's answer is never guessed from a bare decision's shape
        AGENT_CHAT_UI.decision(card, {"type": "approve"})
    assert AGENT_CHAT_UI.answer({"type": "approve"}) == {"decisions": [{"type": "approve"}]}
    assert PLAIN.answer({"type": "approve"}) == {"type": "approve"}
