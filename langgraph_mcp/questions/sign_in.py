"""Signing in to an OAuth-protected server, as a question to a person: the ``mcp_authorization`` payload and its answer.

The payload shows the authorization URL and where a browser would really go (``host``, read the way URL
elicitation reads a URL). The answer is the full URL the browser was redirected to after signing in
(``{"callback_url": ...}``), or ``{"action": "decline"}``. A callback is checked before LangGraph saves it (the
interrupt's ``response_schema``): it must lead to the redirect URI the sign-in was made for and carry this very
sign-in's ``state`` and a ``code`` (or the authorization server's ``error``). A wrong or replayed ``state`` is
refused, and the same interrupt stays pending.

In Agent Chat UI mode the payload also carries a ``HITLRequest`` card (``edit`` only, see
:mod:`langgraph_mcp.questions.cards`): the URL to open, an empty **Callback URL** box and an empty **Decision** box.
``accept`` with the address pasted signs in; ``decline`` declines; anything else (an empty Decision included) is
refused in words with the card kept. Programs may still answer with a ``respond`` decision whose message is the
callback URL, or ``reject``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import parse_qs, urlparse

from langgraph_mcp.errors import AnswerError
from langgraph_mcp.payloads import (
    AUTHORIZATION_INTERRUPT_TYPE,
    ActionRequest,
    AuthorizationInterrupt,
    ReviewConfig,
    SignInAnswer,
)
from langgraph_mcp.questions.cards import DECISION_FIELD, HELP_KEY, Word, card_config, card_word, words_help
from langgraph_mcp.questions.inspection import inspect_url
from langgraph_mcp.questions.schemas import CheckedResponse, checked_response, refused_on_card

__all__ = [
    "MAX_SIGN_INS_PER_CALL",
    "SignInAnswerModel",
    "SignInResult",
    "authorization_payload",
    "check_sign_in_answer",
    "sign_in_card",
    "sign_in_response_schema",
    "sign_in_result",
]

MAX_SIGN_INS_PER_CALL = 3
"""Sign-ins one call may ask for (a code that fails to exchange asks again) before it ends with an error."""

SIGN_IN_ACTION = "sign_in"
"""The ``HITLRequest`` action name of a sign-in card (Agent Chat UI mode)."""

CALLBACK_FIELD = "callback_url"
"""The sign-in card's box (shown as "Callback Url") where a person pastes the address their browser landed on."""

_WORDS: dict[Word, str] = {"approve": "accept", "reject": "decline"}


def authorization_payload(
    *,
    server: str,
    authorization_url: str,
    principal: str,
    scopes: list[str],
    tool_call_id: str,
) -> AuthorizationInterrupt:
    """The ``mcp_authorization`` payload for one sign-in (Agent Chat UI mode adds its card: :func:`sign_in_card`)."""
    payload: AuthorizationInterrupt = {
        "type": AUTHORIZATION_INTERRUPT_TYPE,
        "server": server,
        "authorization_url": authorization_url,
        "host": inspect_url(authorization_url).host,
        "tool_call_id": tool_call_id,
        "principal": principal,
        "scopes": list(scopes),
    }
    return payload


def sign_in_card(payload: AuthorizationInterrupt) -> AuthorizationInterrupt:
    """``payload`` plus its ``HITLRequest`` card: the URL to open, an empty Callback URL box and an empty Decision
    box (see the module doc)."""
    server, authorization_url = payload["server"], payload["authorization_url"]
    where = payload["host"] or "the authorization server"
    lines = [
        f"Open the authorization URL yourself and sign in to {server!r} at {where}; then paste the full address "
        "your browser shows into Callback Url, type accept in the Decision box (at the bottom) and Submit.",
        "decline: no sign-in (the call ends). Nothing is sent until you type one of them.",
    ]
    action: ActionRequest = {
        "name": SIGN_IN_ACTION,
        "args": {
            HELP_KEY: words_help(lines),
            "server": server,
            "authorization_url": authorization_url,
            "host": payload["host"],
            CALLBACK_FIELD: "",
            DECISION_FIELD: "",
        },
        "description": "\n".join(lines),
    }
    config: ReviewConfig = card_config(SIGN_IN_ACTION)
    card: AuthorizationInterrupt = {**payload, "action_requests": [action], "review_configs": [config]}
    return card


def _query(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlparse(url).query).items() if values}


def _same_endpoint(url: str, redirect_uri: str) -> bool:
    got, want = urlparse(url), urlparse(redirect_uri)
    return (got.scheme.lower(), got.netloc.lower(), got.path or "/") == (
        want.scheme.lower(),
        want.netloc.lower(),
        want.path or "/",
    )


def check_sign_in_answer(payload: Mapping[str, Any], value: object) -> SignInAnswer:
    """``value`` as a sign-in answer to ``payload``, normalized; raises ``AnswerError`` saying what is wrong.

    Accepts ``{"callback_url": url}``, ``{"action": "decline"}``, and in Agent Chat UI mode
    ``{"decisions": [{"type": "respond", "message": url}]}`` or ``[{"type": "reject"}]``.
    """
    if isinstance(value, Mapping) and "decisions" in value:
        value = _from_decisions(value["decisions"])
    if isinstance(value, Mapping) and value.get("action") == "decline" and set(value) == {"action"}:
        return {"action": "decline"}
    if (
        not isinstance(value, Mapping)
        or set(value) != {"callback_url"}
        or not isinstance(value["callback_url"], str)
    ):
        raise AnswerError(
            'a sign-in is answered with {"callback_url": "<the full address the browser landed on after '
            'signing in>"} or {"action": "decline"}'
        )
    url = value["callback_url"].strip()
    wanted = _query(str(payload.get("authorization_url", "")))
    redirect_uri = wanted.get("redirect_uri", "")
    if redirect_uri and not _same_endpoint(url, redirect_uri):
        raise AnswerError(
            f"the callback URL must be the address the browser was sent to ({redirect_uri}?code=...&state=...); "
            f"got an address on {urlparse(url).netloc or 'no host'}"
        )
    got = _query(url)
    state = got.get("state")
    if state is None or not secrets.compare_digest(state, wanted.get("state", "")):
        raise AnswerError(
            "the callback URL's state does not match this sign-in (an old or another sign-in's address): "
            "open the authorization URL of this request and paste the address it leads to"
        )
    if "code" not in got and "error" not in got:
        raise AnswerError("the callback URL carries no code: paste the full address, with its ?code=...")
    return {"callback_url": url}


def _from_decisions(decisions: object) -> object:
    if not isinstance(decisions, list) or len(decisions) != 1 or not isinstance(decisions[0], Mapping):
        raise AnswerError("a sign-in card is answered with exactly one decision: respond (the URL) or reject")
    decision = decisions[0]
    action = decision.get("edited_action") if decision.get("type") == "edit" else None
    boxes = action.get("args") if isinstance(action, Mapping) else None
    if isinstance(boxes, Mapping) and DECISION_FIELD in boxes:  # the card's boxes: the Decision word decides
        try:
            word = card_word(boxes[DECISION_FIELD], _WORDS)
        except AnswerError as error:
            raise AnswerError(str(error), field=DECISION_FIELD) from None
        if word == "reject":
            return {"action": "decline"}
        pasted = boxes.get(CALLBACK_FIELD)
        if not isinstance(pasted, str) or not pasted.strip():
            raise AnswerError(
                "Callback Url is empty: paste the full address your browser shows after signing in, then Submit",
                field=CALLBACK_FIELD,
            )
        return {"callback_url": pasted}
    if decision.get("type") == "reject":
        return {"action": "decline"}
    if decision.get("type") == "respond" and isinstance(decision.get("message"), str):
        return {"callback_url": decision["message"]}
    raise AnswerError(
        "a sign-in card is answered with 'respond' (message: the address the browser landed on) or 'reject'"
    )


@dataclass(frozen=True)
class SignInResult:
    """What a checked callback says: the code (and issuer) to exchange, or the server's refusal."""

    code: str | None
    state: str
    iss: str | None
    error: str | None
    """The authorization server's ``error`` (``access_denied``, ...) with its description, if it refused."""


def sign_in_result(answer: SignInAnswer) -> SignInResult | None:
    """The code of a checked callback answer; ``None`` for a decline."""
    if "callback_url" not in answer:
        return None
    query = _query(cast(dict[str, str], answer)["callback_url"])
    error = query.get("error")
    if error is not None and query.get("error_description"):
        error = f"{error}: {query['error_description']}"
    return SignInResult(query.get("code"), query.get("state", ""), query.get("iss"), error)


class SignInAnswerModel(CheckedResponse):
    """The ``response_schema`` of an ``mcp_authorization`` interrupt (see :func:`sign_in_response_schema`)."""

    def answer(self) -> SignInAnswer:
        return cast(SignInAnswer, self.root)


_SHOWN_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "properties": {"callback_url": {"type": "string", "format": "uri"}},
            "required": ["callback_url"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"action": {"const": "decline"}},
            "required": ["action"],
            "additionalProperties": False,
        },
    ]
}


def sign_in_response_schema(payload: Mapping[str, Any]) -> type[SignInAnswerModel]:
    """A model that takes only an answer to this very sign-in (its state), before LangGraph saves it."""

    def check(value: object) -> object:
        try:
            return check_sign_in_answer(payload, value)
        except AnswerError as error:
            if isinstance(value, Mapping) and "decisions" in value:  # a person on a card: words only
                raise refused_on_card([(error.field, str(error))], error) from None
            raise

    return checked_response(SignInAnswerModel, "McpSignInAnswer", check, _SHOWN_SCHEMA)
