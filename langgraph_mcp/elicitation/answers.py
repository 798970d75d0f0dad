"""Elicitation questions and answers in one import: the form a question becomes, and checking answers to it.

The concepts live in their own modules: :mod:`~langgraph_mcp.elicitation.forms` (a server's request as the payload
a UI renders, field descriptions, the answer's JSON schema), :mod:`~langgraph_mcp.elicitation.validation`
(checking answers before LangGraph saves them: :func:`validate_answers`, :func:`answers_response_schema`) and
:mod:`~langgraph_mcp.elicitation.inspection` (where a URL really goes, which fields ask for secrets). This module
keeps the names callers have always imported from here.
"""

from __future__ import annotations

from langgraph_mcp.elicitation.forms import question_key, request_from_params
from langgraph_mcp.elicitation.inspection import sensitive_fields, url_host
from langgraph_mcp.elicitation.validation import (
    MAX_ANSWER_DEPTH,
    ElicitationAnswersModel,
    answers_fit,
    answers_response_schema,
    to_elicit_result,
    validate_answers,
)

__all__ = [
    "MAX_ANSWER_DEPTH",
    "ElicitationAnswersModel",
    "answers_fit",
    "answers_response_schema",
    "question_key",
    "request_from_params",
    "sensitive_fields",
    "to_elicit_result",
    "url_host",
    "validate_answers",
]
