"""A 2026-07-28 round of input requests: the questions it asks a human, and the responses that go back with it.

A round (an ``InputRequiredResult``, or a task's ``input_required`` status) may hold elicitations (asked as one
``mcp_elicitation`` interrupt), sampling requests (answered by :mod:`.sampling`) and ``roots/list`` requests
(answered from the server's ``roots`` option without asking anyone). Anything else can't be answered: the call stops
with :class:`~langgraph_mcp.errors.UnsupportedRequestError`.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types

from langgraph_mcp.connection.connection import ServerConnection, roots_result
from langgraph_mcp.errors import UnsupportedRequestError
from langgraph_mcp.payloads import ElicitationAnswers, ElicitationRequest
from langgraph_mcp.questions.answers import to_elicit_result
from langgraph_mcp.questions.elicitation import request_from_params

__all__ = ["round_questions", "round_responses", "sampling_requests"]


def _method(request: Any) -> Any:
    return request.get("method") if isinstance(request, dict) else getattr(request, "method", None)


def sampling_requests(raw: dict[str, Any]) -> dict[str, types.CreateMessageRequestParams]:
    """The round's sampling requests, by request key."""
    out: dict[str, types.CreateMessageRequestParams] = {}
    for key, request in raw.items():
        if _method(request) == "sampling/createMessage":
            parsed = (
                request
                if isinstance(request, types.CreateMessageRequest)
                else types.CreateMessageRequest.model_validate(request)
            )
            out[key] = parsed.params
    return out


def round_questions(
    conn: ServerConnection, raw: dict[str, Any], *, sampling: bool = True
) -> dict[str, ElicitationRequest]:
    """The elicitation questions of a round (roots requests are answered without asking anyone; sampling
    requests by the driver when ``sampling``, else they can't be answered)."""
    requests: dict[str, ElicitationRequest] = {}
    for key, request in raw.items():
        method = _method(request)
        if method == "elicitation/create":
            elicit = (
                request
                if isinstance(request, types.ElicitRequest)
                else types.ElicitRequest.model_validate(request)
            )
            requests[key] = request_from_params(elicit.params)
        elif method == "sampling/createMessage" and sampling:
            continue
        elif method == "roots/list":
            if conn.spec.roots is None:
                raise UnsupportedRequestError(
                    conn.name, "asked for roots; configure the server's 'roots' option to answer"
                )
        else:
            raise UnsupportedRequestError(
                conn.name,
                f"asked the client to {method!r} (sampling); langgraph-mcp does not serve sampling requests",
            )
    return requests


def round_responses(
    conn: ServerConnection,
    requests: dict[str, ElicitationRequest],
    answers: ElicitationAnswers,
    raw: dict[str, Any],
    sampled: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``inputResponses`` of a round: the human's answers, the completions ``sampled``, and the roots."""
    responses: dict[str, Any] = {key: to_elicit_result(answers[key]) for key in requests}
    responses.update(sampled or {})
    for key in raw:
        if key not in responses:  # roots/list
            responses[key] = roots_result(conn.spec.roots)
    return responses
