"""Agent Chat UI mode, chosen once per graph (:class:`QuestionShapes`), and the elicitation cards it asks with.

Agent Chat UI renders an interrupt only when it carries LangChain's ``HITLRequest`` keys (``action_requests``,
``review_configs``) and answers it with a bare ``{"decisions": [...]}``. A graph asks every question in one of two
shapes, :data:`PLAIN` or :data:`AGENT_CHAT_UI` (``agent_chat_ui=True`` on the constructors, or in an ``Oversight``);
the object says, per question kind, how a payload gets its card, which answer shape its ``response_schema`` takes
and how a stored answer is read back, so the modules that ask never branch on the mode themselves. Each kind's card
is its own module's (:mod:`~langgraph_mcp.questions.approval`, :mod:`~langgraph_mcp.questions.sign_in`,
:mod:`~langgraph_mcp.questions.sampling`; the elicitation cards are below).

In Agent Chat UI mode an ``mcp_elicitation`` payload keeps all its own keys and also carries one action request per
question in ``requests`` (the asker puts one question in each interrupt: a round of several is asked one at a time,
see :class:`~langgraph_mcp.calls.asker.InterruptAsker`):

Every card allows ``edit`` only, and what a person decides is the word they type in the card's empty **Decision**
box (last on the card); see :mod:`langgraph_mcp.questions.cards` for why (a card that allows ``approve`` or
``reject`` lets an empty "Submit rejection" send a "yes"):

* **form** — ``args`` are a help box (:data:`HELP_KEY`: what to type, then one line per field with its title,
  whether it is required, what it takes — type, allowed values, bounds, date format — and its default), then the
  form's fields, defaults filled in (``""`` where there is none), then Decision: ``accept`` sends the fields as they
  stand, ``decline`` and ``cancel`` send that answer, and anything else (an empty box included) is refused in words
  with the card kept;
* **URL** — ``args`` are ``how_to_answer`` (what to type), the server's ``message``, the ``url`` and its ``host``
  (a ``warning`` when there is one; ``why`` instead of the host when it is not a web link), then Decision:
  ``accept`` (after the person visited it themselves), ``decline`` or ``cancel``. A URL that is not offered as a
  link (not ``http``/``https`` with a host: ``openable`` is false) takes only ``decline`` or ``cancel``, and the
  card says why.

A form that asks for secrets says so in its description: Agent Chat UI cannot mask what is typed.

The resume value maps back to the MCP answers, ``{request_key: {"action": ...}}``: form content is first
coerced by the requested schema (:func:`~langgraph_mcp.questions.coercion.coerce_to_schema`: the UI sends every edited
value as a string), optional fields left empty are dropped, and then the answers are validated against the
requested schema exactly like any other answer
(:func:`~langgraph_mcp.questions.answers.validate_answers`). A plain ``ElicitationAnswers`` value is accepted
too, so :func:`~langgraph_mcp.questions.resume.resume_command` and the CLI answer Agent Chat UI questions unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit

from pydantic import BaseModel

from langgraph_mcp.errors import AnswerError, AnswerRefusedError
from langgraph_mcp.payloads import (
    ActionRequest,
    ApprovalInterrupt,
    AuthorizationInterrupt,
    Decision,
    ElicitationAnswer,
    ElicitationAnswers,
    ElicitationInterrupt,
    ElicitationRequest,
    FormRequest,
    ReviewConfig,
    SamplingInterrupt,
    SamplingReviewInterrupt,
    UrlRequest,
)
from langgraph_mcp.questions.answers import ElicitationAnswersModel, answers_response_schema, validate_answers
from langgraph_mcp.questions.approval import approval_card
from langgraph_mcp.questions.cards import (
    DECISION_FIELD,
    HELP_KEY,
    Word,
    card_config,
    card_word,
    free_key,
    words_help,
)
from langgraph_mcp.questions.coercion import coerce_to_schema
from langgraph_mcp.questions.decisions import (
    DecisionResponse,
    card_decision_response_schema,
    decision_response_schema,
    only_decision,
    validate_decision,
)
from langgraph_mcp.questions.elicitation import describe_field, field_options, show_value
from langgraph_mcp.questions.sampling import (
    CompletionDecisionModel,
    SamplingDecisionModel,
    review_card,
    review_card_model,
    sampling_card,
    sampling_card_model,
)
from langgraph_mcp.questions.schemas import checked_response, refused_on_card
from langgraph_mcp.questions.sign_in import sign_in_card

__all__ = [
    "AGENT_CHAT_UI",
    "PLAIN",
    "QuestionShapes",
    "answers_from_decisions",
    "elicitation_card",
    "hitl_answers_response_schema",
    "shapes_for",
    "shapes_of",
    "stored_answers",
]


def help_key(form: FormRequest) -> str:
    """The key of the form card's help box (:data:`HELP_KEY`, made unique among the form's fields)."""
    return free_key(HELP_KEY, _properties(form))


def decision_key(request: ElicitationRequest) -> str:
    """The key of a card's Decision box (``decision``, made unique among a form's fields and its help box)."""
    if request.get("mode") == "url":
        return DECISION_FIELD
    form = cast(FormRequest, request)
    return free_key(DECISION_FIELD, {*_properties(form), help_key(form)})


def _properties(form: FormRequest) -> dict[str, Any]:
    properties = (form.get("requested_schema") or {}).get("properties") or {}
    return dict(properties) if isinstance(properties, Mapping) else {}


_FORM_WORDS: dict[Word, str] = {"approve": "accept", "reject": "decline", "cancel": "cancel"}
_CLOSED_URL_WORDS: dict[Word, str] = {"reject": "decline", "cancel": "cancel"}


def _title(name: str, prop: object) -> str:
    """A field as a person reads it: its schema title, else its name in words (``start_date`` → ``Start date``)."""
    title = prop.get("title") if isinstance(prop, Mapping) else None
    if isinstance(title, str) and title.strip():
        return title.strip()
    words = name.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else name


def _between(prop: Mapping[str, Any], low: str, high: str, unit: str = "") -> str:
    lo, hi = prop.get(low), prop.get(high)
    if lo is not None and hi is not None:
        return f" between {lo} and {hi}{unit}"
    if lo is not None:
        return f" of at least {lo}{unit}"
    if hi is not None:
        return f" of at most {hi}{unit}"
    return ""


def expected_in_words(prop: object) -> str:
    """What a field takes, for a person: ``a whole number between 18 and 120``, ``a date as YYYY-MM-DD``."""
    if not isinstance(prop, Mapping):
        return "any value"
    options = field_options(prop)
    if options is not None:
        return "one of " + ", ".join(str(title or value) for value, title in options)
    kind = prop.get("type")
    if kind == "string":
        return _text_in_words(prop)
    if kind in ("integer", "number"):
        return _number_in_words(kind, prop)
    if kind == "boolean":
        return "true or false"
    return describe_field(prop)


_FORMAT_WORDS = {
    "date": "a date as YYYY-MM-DD",
    "date-time": "a date and time, e.g. 2026-01-31T09:30:00Z",
    "email": "an e-mail address",
    "uri": "a web address, e.g. https://example.com/page",
}


def _text_in_words(prop: Mapping[str, Any]) -> str:
    fmt = prop.get("format")
    if isinstance(fmt, str) and fmt in _FORMAT_WORDS:
        return _FORMAT_WORDS[fmt]
    lo, hi = prop.get("minLength"), prop.get("maxLength")
    if lo is not None and hi is not None:
        return f"text of {lo} to {hi} characters"
    if lo is not None or hi is not None:
        return f"text of at {'least' if lo is not None else 'most'} {lo if lo is not None else hi} characters"
    return "text"


def _number_in_words(kind: str, prop: Mapping[str, Any]) -> str:
    text = "a whole number" if kind == "integer" else "a number"
    bounds = _between(prop, "minimum", "maximum")
    if prop.get("exclusiveMinimum") is not None:
        bounds += f" greater than {prop['exclusiveMinimum']}"
    if prop.get("exclusiveMaximum") is not None:
        bounds += f" less than {prop['exclusiveMaximum']}"
    return text + bounds


def _form_args(form: FormRequest) -> dict[str, Any]:
    properties = (form.get("requested_schema") or {}).get("properties") or {}
    return {
        name: prop["default"] if isinstance(prop, Mapping) and "default" in prop else ""
        for name, prop in properties.items()
    }


def _field_line(name: str, prop: Any, required: bool, secret: bool) -> str:
    prop = prop if isinstance(prop, Mapping) else {}
    words = [expected_in_words(prop)]
    if "default" in prop:
        words.append(f"default {json.dumps(prop['default'])}")
    if secret:
        words.append("secret: this UI shows what you type")
    about = str(prop.get("description") or "")
    title = _title(name, prop)
    about = f" ({about})" if about and about != title else ""
    return f"{title}{about}, {'required' if required else 'optional'}: {'; '.join(words)}"


FORM_BUTTONS = (
    "Nothing is sent until you type accept (sends the boxes as they stand), decline or cancel in the Decision box "
    "(at the bottom), then Submit."
)
"""The first line of a form card's help box."""


def _who(payload: ElicitationInterrupt) -> str:
    return (
        f"MCP server {payload['server']!r} asks, for the call to {payload['published_name']!r} "
        f"({payload['tool_call_id']}), round {payload['round']}."
    )


def _form_card(payload: ElicitationInterrupt, form: FormRequest) -> tuple[ActionRequest, ReviewConfig]:
    schema = form.get("requested_schema") or {}
    required = set(schema.get("required") or [])
    secret = set(form.get("sensitive") or [])
    fields = [
        _field_line(name, prop, name in required, name in secret)
        for name, prop in (schema.get("properties") or {}).items()
    ]
    warning = (
        ["Warning: this form asks for secrets (MCP servers must not); this UI shows what you type."]
        if form.get("asks_for_secrets", bool(secret))
        else []
    )
    description = "\n".join(
        [form.get("message", ""), "", _who(payload), *warning, FORM_BUTTONS, *(f"- {f}" for f in fields)]
    )
    name = payload["published_name"]
    args = {
        help_key(form): words_help([FORM_BUTTONS, *warning, *fields]),
        **_form_args(form),
        decision_key(form): "",
    }
    return {"name": name, "args": args, "description": description}, card_config(name)


def _openable(request: UrlRequest) -> bool:
    """Whether the URL may be offered as a link (payloads saved before ``openable`` existed: http(s) only)."""
    if "openable" in request:
        return bool(request["openable"])
    return urlsplit(request.get("url", "")).scheme.lower() in ("http", "https")


def _url_card(payload: ElicitationInterrupt, request: UrlRequest) -> tuple[ActionRequest, ReviewConfig]:
    lines = [request.get("message", ""), "", _who(payload)]
    if _openable(request):
        lines += [
            f"Open this URL yourself (it is not opened for you): {request['url']}",
            f"Host: {request['host']}",
            "Open the URL yourself (it is not opened for you), then type accept in the Decision box (at the "
            "bottom) and Submit; decline or cancel says no. Nothing is sent until you type one.",
        ]
    else:  # fail closed: nothing to visit, so nothing to accept
        lines += [
            f"This URL is not a web link and must not be opened: {request['url']}",
            f"Why: {request.get('warning') or 'only http(s) URLs with a host are offered'}",
            "This URL must not be opened: type decline (or cancel) in the Decision box and Submit.",
        ]
    if request.get("warning") and _openable(request):
        lines.append(f"Warning: {request['warning']}")
    name = payload["published_name"]
    # Agent Chat UI shows an approve-only card's args (read-only) and hides the description: what a person needs
    # to decide goes in the args too.
    args: dict[str, Any] = {HELP_KEY: words_help([lines[5]]), "message": request.get("message", "")}
    args["url"] = request["url"]
    if _openable(request):
        args["host"] = request["host"]
        if request.get("warning"):
            args["warning"] = request["warning"]
    else:
        args["why"] = request.get("warning") or "only http(s) URLs with a host are offered"
    args[DECISION_FIELD] = ""
    return {"name": name, "args": args, "description": "\n".join(lines)}, card_config(name)


def elicitation_card(payload: ElicitationInterrupt) -> ElicitationInterrupt:
    """``payload`` plus the ``HITLRequest`` keys: one action request and review config per question."""
    actions: list[ActionRequest] = []
    configs: list[ReviewConfig] = []
    for request in payload["requests"].values():
        if request.get("mode") == "url":
            action, config = _url_card(payload, cast(UrlRequest, request))
        else:
            action, config = _form_card(payload, cast(FormRequest, request))
        actions.append(action)
        configs.append(config)
    card: ElicitationInterrupt = {**payload, "action_requests": actions, "review_configs": configs}
    return card


def _is_hitl_response(value: object, requests: Mapping[str, ElicitationRequest]) -> bool:
    return isinstance(value, Mapping) and "decisions" in value and "decisions" not in requests


def _form_content(form: FormRequest, args: Mapping[str, Any]) -> dict[str, Any]:
    schema = form.get("requested_schema") or {}
    required = set(schema.get("required") or [])
    boxes = (help_key(form), decision_key(form))
    fields = {k: v for k, v in args.items() if k not in boxes}  # the help and Decision boxes are not fields
    content = coerce_to_schema(fields, schema)
    # an optional field the user left empty was not given (a form UI has no way to say "absent")
    return {k: v for k, v in content.items() if k in required or (v != "" and v is not None)}


def _card_answer(key: str, request: ElicitationRequest, args: Mapping[str, Any]) -> ElicitationAnswer:
    """The answer an Agent Chat UI card's boxes stand for: the word typed in its Decision box decides."""
    url = request.get("mode") == "url"
    words = _CLOSED_URL_WORDS if url and not _openable(cast(UrlRequest, request)) else _FORM_WORDS
    try:
        word = card_word(args.get(decision_key(request)), words)
    except AnswerError as error:
        raise AnswerError(str(error), key=key) from None
    if word == "reject":
        return {"action": "decline"}
    if word == "cancel":
        return {"action": "cancel"}
    if url:
        return {"action": "accept"}
    return {"action": "accept", "content": _form_content(cast(FormRequest, request), args)}


def _card_args(decision: object) -> Mapping[str, Any] | None:
    """The boxes of an ``edit`` decision (``None`` for any other shape)."""
    if not isinstance(decision, Mapping) or decision.get("type") != "edit":
        return None
    action = decision.get("edited_action")
    args = action.get("args") if isinstance(action, Mapping) else None
    return args if isinstance(args, Mapping) else None


def _answer(key: str, request: ElicitationRequest, decision: object, name: str) -> ElicitationAnswer:
    kind = decision.get("type") if isinstance(decision, Mapping) else None
    boxes = _card_args(decision)
    if boxes is not None and decision_key(request) in boxes:  # the card's boxes: the Decision word decides
        action = cast(Mapping[str, Any], decision).get("edited_action")
        if name and isinstance(action, Mapping) and action.get("name") not in (None, name):
            raise AnswerError(
                f"decision for {key!r}: edited_action.name must stay {name!r}, got {action.get('name')!r}",
                key=key,
            )
        return _card_answer(key, request, boxes)
    if request.get("mode") == "url":
        if kind == "approve" and not _openable(cast(UrlRequest, request)):
            raise AnswerError(
                f"decision for {key!r}: this URL is not a web link, so it can't have been visited; only "
                "'reject' (decline) is allowed",
                key=key,
            )
        if kind == "approve":
            return {"action": "accept"}
        if kind == "reject":
            return {"action": "decline"}
        raise AnswerError(
            f"decision for {key!r}: a URL request is answered with 'approve' (visited), 'reject' (declined) "
            f"or the card's boxes with a word in {DECISION_FIELD!r}, got {kind!r}",
            key=key,
        )
    if kind == "reject":
        return {"action": "decline"}
    if kind == "approve":  # accept the form as it was shown (its defaults)
        form = cast(FormRequest, request)
        return {"action": "accept", "content": _form_content(form, _form_args(form))}
    if kind != "edit":
        raise AnswerError(
            f"decision for {key!r}: a form is answered with 'approve' (as shown), 'edit' (the filled-in "
            f"fields) or 'reject' (decline), got {kind!r}",
            key=key,
        )
    action = cast(Mapping[str, Any], decision).get("edited_action")
    args = action.get("args") if isinstance(action, Mapping) else None
    if not isinstance(args, Mapping):
        raise AnswerError(
            f"decision for {key!r}: an 'edit' needs edited_action.args, the form's fields", key=key
        )
    if name and isinstance(action, Mapping) and action.get("name") not in (None, name):
        raise AnswerError(
            f"decision for {key!r}: edited_action.name must stay {name!r}, got {action.get('name')!r}",
            key=key,
        )
    return {"action": "accept", "content": _form_content(cast(FormRequest, request), args)}


def answers_from_decisions(
    requests: Mapping[str, ElicitationRequest], value: object, *, name: str = ""
) -> ElicitationAnswers:
    """The MCP answers for a ``{"decisions": [...]}`` resume value (one decision per request, in order), not
    yet validated. Raises :class:`~langgraph_mcp.errors.AnswerError` for the wrong count or decision type."""
    decisions = cast(Mapping[str, Any], value).get("decisions")
    if not isinstance(decisions, list) or len(decisions) != len(requests):
        got = f"{len(decisions)} decision(s)" if isinstance(decisions, list) else type(decisions).__name__
        raise AnswerError(
            f"expected {{'decisions': [...]}} with {len(requests)} decision(s), one per question in the order "
            f"of action_requests, got {got}"
        )
    return {
        key: _answer(key, request, decision, name)
        for (key, request), decision in zip(requests.items(), decisions, strict=True)
    }


def stored_answers(requests: Mapping[str, ElicitationRequest], stored: object, *, name: str = "") -> object:
    """A stored resume value as answers keyed by request key (a ``{"decisions": ...}`` value is mapped;
    anything else, or a value that does not map, is returned as it is)."""
    if not _is_hitl_response(stored, requests):
        return stored
    try:
        return answers_from_decisions(requests, stored, name=name)
    except AnswerError:
        return stored


def _field_problem(form: FormRequest, name: str, value: object) -> str | None:
    """What is wrong with one field's value, in words (``None``: nothing)."""
    schema = form.get("requested_schema") or {}
    prop = (schema.get("properties") or {}).get(name)
    required = name in (schema.get("required") or [])
    if value is None or value == "":
        return f"required ({expected_in_words(prop)})" if required else None
    one = {"type": "object", "properties": {name: prop}, "required": [name]}
    probe: FormRequest = {**form, "requested_schema": one}
    try:
        validate_answers({"k": probe}, {"k": {"action": "accept", "content": {name: value}}})
    except AnswerError:
        secret = name in (form.get("sensitive") or [])
        shown = "the value" if secret else show_value(value)
        return f"{shown} is not {expected_in_words(prop)}"
    return None


def refused(
    requests: Mapping[str, ElicitationRequest], answers: object, error: AnswerError
) -> AnswerRefusedError:
    """The words a person reads when an answer given on a card is refused: each field by its title and what it
    takes, no request keys or model names. Falls back to the error's own detail when no field is at fault."""
    problems: list[tuple[str | None, str]] = []
    if isinstance(answers, Mapping):
        for key, request in requests.items():
            answer = answers.get(key)
            content = answer.get("content") if isinstance(answer, Mapping) else None
            if request.get("mode") != "form" or not isinstance(content, Mapping):
                continue
            form = cast(FormRequest, request)
            properties = (form.get("requested_schema") or {}).get("properties") or {}
            for field, prop in properties.items():
                problem = _field_problem(form, field, content.get(field))
                if problem is not None:
                    problems.append((field, f"{_title(field, prop)}: {problem}"))
    if not problems:
        problems.append((error.field, error.detail))
    return refused_on_card(problems, error)


def _hitl_json_schema(requests: Mapping[str, ElicitationRequest]) -> dict[str, Any]:
    items = []
    for key, request in requests.items():
        if request.get("mode") == "url":
            openable = _openable(cast(UrlRequest, request))
            allowed = [{"const": "approve"}] if openable else []
            allowed += [{"const": "edit"}, {"const": "reject"}]
        else:
            allowed = [{"const": "approve"}, {"const": "edit"}, {"const": "reject"}]
        items.append(
            {
                "title": key,
                "type": "object",
                "properties": {
                    "type": {"oneOf": allowed},
                    "edited_action": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "args": {"type": "object"}},
                        "required": ["args"],
                    },
                },
                "required": ["type"],
            }
        )
    return {
        "title": "HITLResponse",
        "description": "One decision per question, in the order of action_requests (or plain MCP answers).",
        "type": "object",
        "properties": {
            "decisions": {
                "type": "array",
                "prefixItems": items,
                "minItems": len(items),
                "maxItems": len(items),
            }
        },
        "required": ["decisions"],
    }


class HitlAnswersModel(ElicitationAnswersModel):
    """Base of the models :func:`hitl_answers_response_schema` builds: a ``{"decisions": [...]}`` value (or
    plain answers) validated to the normalized MCP answers (``.answers()``)."""

    mcp_name: ClassVar[str] = ""


def hitl_answers_response_schema(payload: ElicitationInterrupt) -> type[ElicitationAnswersModel]:
    """The ``response_schema`` of an Agent Chat UI elicitation: ``{"decisions": [...]}`` (or plain answers) in,
    validated MCP answers out; a bad value fails before LangGraph saves it."""
    requests = dict(payload["requests"])
    name = payload["published_name"]

    def check(data: object) -> object:
        if not _is_hitl_response(data, requests):
            return validate_answers(requests, data)  # plain answers (resume_command, the CLI): AnswerError
        answers: object = None
        try:
            answers = answers_from_decisions(requests, data, name=name)
            return validate_answers(requests, answers)
        except AnswerError as error:  # a person on a card: the refusal in words (see AnswerRefusedError)
            raise refused(requests, answers, error) from None

    return checked_response(
        HitlAnswersModel,
        "HitlAnswers",
        check,
        _hitl_json_schema(requests),
        mcp_requests=requests,
        mcp_name=name,
    )


# ------------------------------------------------------------------------------------------------ the mode


@dataclass(frozen=True)
class QuestionShapes:
    """The shapes one graph asks its questions in: :data:`PLAIN` or :data:`AGENT_CHAT_UI`, chosen once (the
    constructors' ``agent_chat_ui=``, see :func:`shapes_for`) and handed to everything that asks.

    Per question kind it says how a payload gets its card, which answer its ``response_schema`` takes, and how a
    stored answer is read back; a new kind's card is added here and in the kind's module. In the plain shapes a
    payload is asked as it is and answered in its own shape (a decision, the MCP answers, a sign-in answer)."""

    name: str
    cards: bool
    """Every payload carries its LangChain ``HITLRequest`` card and is answered with ``{"decisions": [...]}``
    (plain answers are still taken where the card's schema allows them)."""
    one_at_a_time: bool
    """At most one interrupt is pending at a time (Agent Chat UI resumes without an interrupt id): the gate asks one
    call at a time, a tool node runs its calls one after another and asks a round's questions one by one."""
    text_results: bool
    """A result's content is one string (Agent Chat UI shows a list of blocks as ``[object Object]``)."""

    # -- approval (mcp_approval) ------------------------------------------------------------------------

    def approval(self, payload: ApprovalInterrupt) -> ApprovalInterrupt:
        """The ``mcp_approval`` payload as asked (with its card: :func:`~.approval.approval_card`)."""
        return approval_card(payload) if self.cards else payload

    def decision_model(self, payload: ApprovalInterrupt) -> type[DecisionResponse]:
        """The ``response_schema`` an approval is asked with (a card takes ``{"decisions": [decision]}``)."""
        return (card_decision_response_schema if self.cards else decision_response_schema)(payload)

    def decision(self, payload: ApprovalInterrupt, value: object) -> Decision:
        """A stored (or plain) answer to ``payload`` read back as its decision; raises
        :class:`~langgraph_mcp.errors.DecisionError` when it is none."""
        return validate_decision(payload, only_decision(payload, value) if self.cards else value)

    # -- a server's questions (mcp_elicitation) -----------------------------------------------------------

    def elicitation(
        self, payload: ElicitationInterrupt, requests: Mapping[str, ElicitationRequest]
    ) -> tuple[ElicitationInterrupt, type[ElicitationAnswersModel]]:
        """The ``mcp_elicitation`` payload as asked for ``requests`` and the model its answer is checked against."""
        if self.cards:
            card = elicitation_card({**payload, "requests": dict(requests)})
            return card, hitl_answers_response_schema(card)
        return payload, answers_response_schema(requests)

    def stored_answers(
        self, requests: Mapping[str, ElicitationRequest], stored: object, *, name: str = ""
    ) -> object:
        """A stored resume value as answers keyed by request key (a card's ``{"decisions": ...}`` is mapped back,
        see :func:`stored_answers`; in the plain shapes it is returned as it is)."""
        return stored_answers(requests, stored, name=name) if self.cards else stored

    # -- signing in (mcp_authorization) ---------------------------------------------------------------

    def sign_in(self, payload: AuthorizationInterrupt) -> AuthorizationInterrupt:
        """The ``mcp_authorization`` payload as asked (with its card: :func:`~.sign_in.sign_in_card`); its answer
        model takes both shapes (:func:`~.sign_in.sign_in_response_schema`)."""
        return sign_in_card(payload) if self.cards else payload

    # -- sampling (mcp_sampling, mcp_sampling_review) ------------------------------------------------------

    def sampling(self, payload: SamplingInterrupt) -> SamplingInterrupt:
        """The ``mcp_sampling`` payload as asked (with its card: :func:`~.sampling.sampling_card`)."""
        return sampling_card(payload) if self.cards else payload

    def sampling_model(self, payload: Mapping[str, Any]) -> type[BaseModel]:
        """The ``response_schema`` of an ``mcp_sampling`` payload as asked (a card's is built from the card)."""
        return sampling_card_model(payload) if self.cards else SamplingDecisionModel

    def review(self, payload: SamplingReviewInterrupt) -> SamplingReviewInterrupt:
        """The ``mcp_sampling_review`` payload as asked (with its card: :func:`~.sampling.review_card`)."""
        return review_card(payload) if self.cards else payload

    def review_model(self, payload: Mapping[str, Any]) -> type[BaseModel]:
        """The ``response_schema`` of an ``mcp_sampling_review`` payload as asked."""
        return review_card_model(payload) if self.cards else CompletionDecisionModel

    def answer(self, value: object) -> object:
        """A decision as this shape's answer: inside ``{"decisions": [...]}`` on a card (unless it is one already),
        as it is otherwise (what :func:`~.resume.resume_command` sends)."""
        if not self.cards or (isinstance(value, Mapping) and "decisions" in value and "type" not in value):
            return value
        return {"decisions": [value]}


PLAIN = QuestionShapes("plain", cards=False, one_at_a_time=False, text_results=False)
"""Every question in its own shape (the default): what programs, the CLI and Studio answer."""

AGENT_CHAT_UI = QuestionShapes("agent_chat_ui", cards=True, one_at_a_time=True, text_results=True)
"""Agent Chat UI mode: ``HITLRequest`` cards answered with ``{"decisions": [...]}``, one pending interrupt at a time,
results as plain strings."""


def shapes_for(agent_chat_ui: bool) -> QuestionShapes:
    """The shapes a graph built with ``agent_chat_ui=`` asks in."""
    return AGENT_CHAT_UI if agent_chat_ui else PLAIN


def shapes_of(payload: Mapping[str, Any]) -> QuestionShapes:
    """The shapes a pending payload was asked in, read from the payload itself: a card carries ``action_requests``
    (what :mod:`~.resume` answers by, since it sees nothing but payloads)."""
    return AGENT_CHAT_UI if "action_requests" in payload else PLAIN
