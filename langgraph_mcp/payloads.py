"""The interrupt payloads and resume values (elicitation answers, approval decisions, sign-ins): the contract UIs rely on.

Everything here is a JSON-shaped ``TypedDict``: interrupt values go through checkpointers (msgpack) and over the
LangGraph API to UIs, so they must round-trip as plain dicts. Each payload carries a ``type`` discriminator and the
``tool_call_id`` it belongs to, because an interrupt id is opaque. This module depends on nothing else in the
package.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

ELICITATION_INTERRUPT_TYPE: Literal["mcp_elicitation"] = "mcp_elicitation"
"""``type`` of the payload raised when an MCP server asks the user for input mid-call."""

APPROVAL_INTERRUPT_TYPE: Literal["mcp_approval"] = "mcp_approval"
"""``type`` of the payload raised when the approval gate asks a human about a tool call."""

SAMPLING_INTERRUPT_TYPE: Literal["mcp_sampling"] = "mcp_sampling"
SAMPLING_REVIEW_INTERRUPT_TYPE: Literal["mcp_sampling_review"] = "mcp_sampling_review"
"""``type`` of the payload raised when a server asks the client's model for a completion (``sampling/createMessage``)
and the server's ``sampling_policy`` is ``"ask"``."""

TASK_HANDLE_TYPE: Literal["mcp_task"] = "mcp_task"
"""``type`` of a saved MCP task handle (in the checkpoint, see :class:`TaskHandle`)."""

TASK_STATUS_EVENT_TYPE: Literal["mcp_task_status"] = "mcp_task_status"
"""``type`` of the ``stream_mode="custom"`` event written when a task's status changes."""

AUTHORIZATION_INTERRUPT_TYPE: Literal["mcp_authorization"] = "mcp_authorization"
"""``type`` of the payload raised when a call needs the current principal to sign in to an OAuth server."""


class _Cards(TypedDict):
    """What Agent Chat UI mode (``McpToolNode(agent_chat_ui=True)``) adds to a payload: LangChain ``HITLRequest``
    keys (see :mod:`langgraph_mcp.humans.hitl`; each payload says what its cards hold)."""

    action_requests: NotRequired[list[ActionRequest]]
    review_configs: NotRequired[list[ReviewConfig]]


class _ToolQuestion(_Cards):
    """What every question about one tool call carries."""

    tool_call_id: str
    tool: str
    """The server's own tool name."""
    published_name: str
    """The name the model called (usually ``<server>_<tool>``)."""


# --------------------------------------------------------------------------------------------- elicitation


class FormRequest(TypedDict):
    """A form the server wants filled in (MCP ``elicitation/create`` in form mode)."""

    mode: Literal["form"]
    message: str
    """What the server says to the user."""
    requested_schema: dict[str, Any]
    """The flat JSON object schema of the answer (``requestedSchema``), exactly as the server sent it."""
    sensitive: list[str]
    """Field names that look secret (passwords, tokens, card numbers): hide them while typing."""
    asks_for_secrets: NotRequired[bool]
    """True when ``sensitive`` is not empty: warn the user, since MCP servers must not ask for secrets by form
    (absent in payloads saved by older versions: then read ``sensitive``)."""


class UrlRequest(TypedDict):
    """A URL the user should open (MCP elicitation in URL mode). Never opened automatically."""

    mode: Literal["url"]
    message: str
    url: str
    host: str
    """Where a browser would really go (WHATWG URL parsing), so a UI can show it; ``""`` when there is none."""
    scheme: NotRequired[str]
    """The URL's scheme, lower-cased (``https``, ``javascript``, ...)."""
    openable: NotRequired[bool]
    """Only ``True`` for an ``http``/``https`` URL with a valid host: never offer any other URL as a link
    (absent in payloads saved by older versions: treat as ``False`` unless the scheme is http(s))."""
    warning: NotRequired[str]
    """Why the URL is not offered as a link, or what is suspicious about it, in words for the user."""


ElicitationRequest: TypeAlias = FormRequest | UrlRequest


class ElicitationInterrupt(_ToolQuestion):
    """Payload of an ``mcp_elicitation`` interrupt: one round of questions from one paused tool call (cards: one
    action request per question, in the order of ``requests``)."""

    type: Literal["mcp_elicitation"]
    server: str
    arguments: dict[str, Any]
    round: int
    """1 for the first round of questions of this call, 2 for the next, ..."""
    requests: dict[str, ElicitationRequest]
    """Questions keyed by the server's own opaque keys; answer every key."""
    previous_answers: NotRequired[ElicitationAnswers]
    """Set when the server changed a question it had asked before: the answer given then, which no longer fits
    (shown as context, never sent; fields the new question marks sensitive are left out)."""


class AcceptAnswer(TypedDict):
    """The user answered. ``content`` is required for a form, and must be absent for a URL request."""

    action: Literal["accept"]
    content: NotRequired[dict[str, Any]]


class DeclineAnswer(TypedDict):
    """The user explicitly said no."""

    action: Literal["decline"]


class CancelAnswer(TypedDict):
    """The user dismissed the question without choosing."""

    action: Literal["cancel"]


ElicitationAnswer: TypeAlias = AcceptAnswer | DeclineAnswer | CancelAnswer
ElicitationAnswers: TypeAlias = dict[str, ElicitationAnswer]
"""The resume value of an ``mcp_elicitation`` interrupt: one answer per request key."""


# --------------------------------------------------------------------------------------------- approval

DecisionType: TypeAlias = Literal["approve", "edit", "reject", "respond"]
ALL_DECISIONS: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")

RememberScope: TypeAlias = Literal["thread", "principal"]
"""How far a remembered decision reaches: later calls on this thread, or every thread of this principal."""
REMEMBER_SCOPES: tuple[RememberScope, ...] = ("thread", "principal")


class DeclaredHints(TypedDict, total=False):
    """Tool annotations exactly as the server declared them (absent keys were not declared)."""

    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class EffectiveHints(TypedDict):
    """Tool annotations with the MCP spec defaults filled in for what the server did not declare."""

    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class ApprovalHints(TypedDict):
    effective: EffectiveHints
    declared: DeclaredHints


class ActionRequest(TypedDict):
    """LangChain ``HITLRequest`` action item (compatibility mode, rendered by Agent Chat UI)."""

    name: str
    args: dict[str, Any]
    description: NotRequired[str]


class ReviewConfig(TypedDict):
    """LangChain ``HITLRequest`` review config (compatibility mode)."""

    action_name: str
    allowed_decisions: list[DecisionType]
    args_schema: NotRequired[dict[str, Any]]


class ApprovalInterrupt(_ToolQuestion):
    """Payload of an ``mcp_approval`` interrupt: one tool call waiting for a human decision (cards: one item)."""

    type: Literal["mcp_approval"]
    server: str | None
    """``None`` for a tool call that does not go to an MCP server."""
    arguments: dict[str, Any]
    hints: ApprovalHints | None
    reason: str
    """Why the call needs approval, e.g. ``"destructiveHint (spec default)"``."""
    allowed_decisions: list[DecisionType]
    description: str
    rule: NotRequired[str]
    """The id of the policy rule that asks (a ``[[rules]]`` id, ``tools:<pattern>``, ``hints:destructive``, ...;
    absent in payloads saved by older versions)."""
    expires_at: NotRequired[float]
    """Seconds since the epoch: an approval given after this counts as a rejection (the rule's
    ``expires_after``); absent when the approval does not expire."""
    input_schema: NotRequired[dict[str, Any]]
    """The tool's inputSchema, so a UI (and ``resume_command``) can check edited arguments."""
    definition_hash: NotRequired[str]
    """``langgraph_mcp.catalog.definition_hash`` of the tool as shown: the decision is bound to it."""
    changed: NotRequired[list[DefinitionChange]]
    """Asked again because the tool's definition changed since a decision about this call: what changed."""
    remember: NotRequired[list[RememberScope]]
    """The ``remember`` scopes an ``approve`` or ``reject`` may carry for this call (absent or empty: none; a locked
    rule, a rule with ``remember = "off"`` and a call to no MCP server offer none)."""
    remember_covers: NotRequired[Literal["any_args", "same_args"]]
    """What a remembered answer covers: later calls with any arguments, or only with these (the rule's
    ``remember``); present with ``remember``."""
    remember_unavailable: NotRequired[dict[str, str]]
    """Scopes not offered here and why (e.g. ``principal`` without a LangGraph store), so a UI can say so."""


class DefinitionChange(TypedDict):
    """One part of a tool's definition that differs from what a decision was made about."""

    field: Literal["name", "description", "inputSchema", "outputSchema", "annotations"]
    before: Any
    after: Any


BindingVerdict: TypeAlias = Literal["allow", "approve", "edit"]


class DecisionBinding(TypedDict):
    """A decision bound to exactly one call, signed (HMAC-SHA256) where it was taken.

    The tool node runs a call on a binding only if the signature verifies with its key and every field matches
    the call about to be sent (see :mod:`langgraph_mcp.humans.binding`)."""

    v: Literal[1]
    verdict: BindingVerdict
    """``allow``: the policy allowed it (on this definition); ``approve``/``edit``: a human did."""
    thread_id: str
    tool_call_id: str
    server: str
    """The server's configured name."""
    server_identity: str
    """The name plus a digest of where it is reached (transport, URL or command line)."""
    tool: str
    """The server's own tool name."""
    definition_hash: str
    args_digest: str
    """``langgraph_mcp.catalog.args_digest`` of the arguments to be sent (the edited ones after an edit)."""
    key_id: str
    """Which key signed it (a digest of the key, never the key)."""
    signature: str


class EditedAction(TypedDict):
    name: str
    args: dict[str, Any]


class ApproveDecision(TypedDict):
    type: Literal["approve"]
    remember: NotRequired[RememberScope]
    """Apply this approval to later calls of the same tool (same definition) without asking: see
    :mod:`langgraph_mcp.graph.memory`. Only a scope the payload's ``remember`` offers."""


class EditDecision(TypedDict):
    type: Literal["edit"]
    edited_action: EditedAction


class RejectDecision(TypedDict):
    type: Literal["reject"]
    message: NotRequired[str]
    remember: NotRequired[RememberScope]
    """Reject later calls of the same tool (same definition) without asking, with the same message."""


class RespondDecision(TypedDict):
    type: Literal["respond"]
    message: str


Decision: TypeAlias = ApproveDecision | EditDecision | RejectDecision | RespondDecision
"""The resume value of an ``mcp_approval`` interrupt (LangChain's decision shapes)."""


class HITLResponse(TypedDict):
    """Compatibility mode resume value (what Agent Chat UI sends): exactly one decision."""

    decisions: list[Decision]


# --------------------------------------------------------------------------------------------- sign-in


class AuthorizationInterrupt(_Cards):
    """Payload of an ``mcp_authorization`` interrupt: a call (or a listing) needs this principal to sign in.

    Open ``authorization_url`` in a browser (never automatically); after signing in, the authorization server
    sends the browser to the configured redirect URI. Answer with that full address
    (:class:`SignInCallback`), or :class:`SignInDecline`. Cards: one, answered with ``respond`` (the callback
    URL) or ``reject`` (decline).
    """

    type: Literal["mcp_authorization"]
    server: str
    authorization_url: str
    host: str
    """Where a browser would really go for ``authorization_url`` (read as for URL elicitation), to show it."""
    tool_call_id: str
    """The call waiting for the sign-in (``""`` for a listing outside a tool call)."""
    principal: str
    """Whose sign-in this is (``config["configurable"]["langgraph_auth_user_id"]``, else ``["user_id"]``)."""
    scopes: list[str]
    """The scopes the authorization URL asks for."""


class SignInCallback(TypedDict):
    """The person signed in: the full URL the browser was redirected to (with ``code`` and ``state``)."""

    callback_url: str


class SignInDecline(TypedDict):
    """The person will not sign in: the call ends with an error ToolMessage."""

    action: Literal["decline"]


SignInAnswer: TypeAlias = SignInCallback | SignInDecline
"""The resume value of an ``mcp_authorization`` interrupt."""


McpInterrupt: TypeAlias = ElicitationInterrupt | ApprovalInterrupt | AuthorizationInterrupt


# --------------------------------------------------------------------------------------------- the record

DECISION_EVENT_TYPE: Literal["mcp_decision"] = "mcp_decision"
"""``type`` of the custom stream event (and audit log record) written once per judged tool call."""


class DecisionRecord(TypedDict):
    """What was decided about one tool call and what became of it: a ``stream_mode="custom"`` event and a
    record on the ``langgraph_mcp.audit`` logger."""

    type: Literal["mcp_decision"]
    tool_call_id: str
    server: str | None
    """``None`` for a call that goes to no MCP server (or whose server was never established)."""
    tool: str
    """The server's own tool name (the published name when there is no server)."""
    verdict: Literal["allow", "ask", "deny"]
    """The policy's verdict."""
    decided_by: Literal["policy", "human", "remembered"]
    rule: str
    """The id of the rule that gave the verdict."""
    definition_hash: str | None
    """:func:`langgraph_mcp.catalog.definition_hash` of the tool as judged; ``None`` without a tool."""
    args_digest: str
    """:func:`langgraph_mcp.catalog.args_digest` of the arguments judged (for an edit: the edited ones)."""
    principal: str | None
    decision: DecisionType | None
    """The human's decision; ``None`` when nobody was asked."""
    outcome: Literal["ran", "rejected", "denied", "expired", "failed"]
    """``ran``: the tool answered; ``failed``: it was sent on but ended in an error (or was refused by the
    tool node); ``rejected``: a human rejected it or answered in its place; ``denied``: the policy refused
    it; ``expired``: the approval came too late."""


class RememberedDecision(TypedDict):
    """A decision given with ``remember``, as kept (in the LangGraph store, or in the thread's messages without one):
    signed with the servers' approval key, so an entry written by anyone else never counts
    (:mod:`langgraph_mcp.graph.memory`)."""

    v: Literal[1]
    scope: RememberScope
    owner: str
    """The thread id (``thread``) or the principal (``principal``) it belongs to."""
    server: str
    server_identity: str
    tool: str
    """The server's own tool name."""
    definition_hash: str
    """The definition it was decided about: a changed definition voids it."""
    args_digest: str | None
    """Only calls with these arguments (the rule's ``remember = "same_args"``); ``None``: any arguments."""
    decision: Literal["approve", "reject"]
    message: str | None
    """A reject's reason (``None`` for an approve, or a reject without one)."""
    rule: str
    """The rule that asked when it was decided."""
    decided_at: float
    """Seconds since the epoch (the policy's clock)."""
    tool_call_id: str
    """The call it was decided on."""
    key_id: str
    signature: str


def is_elicitation_interrupt(value: object) -> bool:
    """True for an ``mcp_elicitation`` payload (works on values read back from any checkpointer)."""
    return isinstance(value, dict) and value.get("type") == ELICITATION_INTERRUPT_TYPE


def is_approval_interrupt(value: object) -> bool:
    """True for an ``mcp_approval`` payload."""
    return isinstance(value, dict) and value.get("type") == APPROVAL_INTERRUPT_TYPE


# --------------------------------------------------------------------------------------------- MCP tasks


class TaskHandle(TypedDict):
    """A task a server created for a tool call (MCP Tasks), as saved in the graph's checkpoint: a node that runs
    again polls this task instead of calling the tool again."""

    type: Literal["mcp_task"]
    server: str
    tool: str
    """The server's own tool name."""
    task_id: str
    tool_call_id: str
    identity: str
    """A digest of the credentials the task was created with (never the secrets): it is only polled with them."""
    poll_interval_ms: float | None


class TaskStatusEvent(TypedDict):
    """Written to ``stream_mode="custom"`` each time a task's status (or status message) changes."""

    type: Literal["mcp_task_status"]
    tool_call_id: str
    server: str
    tool: str
    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None


def is_authorization_interrupt(value: object) -> bool:
    """True for an ``mcp_authorization`` (sign-in) payload."""
    return isinstance(value, dict) and value.get("type") == AUTHORIZATION_INTERRUPT_TYPE


# --------------------------------------------------------------------------------------------- sampling


class SamplingMessage(TypedDict):
    """One message of a sampling request, as the server sent it (``content`` is an MCP content block)."""

    role: Literal["user", "assistant"]
    content: dict[str, Any]


class _Completion(_ToolQuestion):
    """What a server's request for a completion carries, asked about before or after the model runs."""

    server: str
    messages: list[SamplingMessage]
    system_prompt: str | None
    max_tokens: int
    """What the model will be allowed: the server's ``maxTokens``, capped by ``sampling_max_tokens``."""


class SamplingInterrupt(_Completion):
    """Payload of an ``mcp_sampling`` interrupt: a server asks the client's model for a completion mid-call
    (cards: one, ``args.prompt`` the messages' text)."""

    type: Literal["mcp_sampling"]
    model_preferences: dict[str, Any] | None
    requested_max_tokens: int
    """What the server asked for."""


class SamplingApprove(TypedDict):
    """Run the model on the server's messages as they are."""

    type: Literal["approve"]


class SamplingEdit(TypedDict):
    """Run the model on these messages instead (text content only)."""

    type: Literal["edit"]
    messages: list[SamplingMessage]


class SamplingReject(TypedDict):
    """Refuse: the server gets a refusal, never a completion."""

    type: Literal["reject"]
    message: NotRequired[str]


SamplingDecision: TypeAlias = SamplingApprove | SamplingEdit | SamplingReject


def is_sampling_interrupt(value: object) -> bool:
    """True for an ``mcp_sampling`` payload."""
    return isinstance(value, dict) and value.get("type") == SAMPLING_INTERRUPT_TYPE


class SamplingReviewInterrupt(_Completion):
    """Payload of an ``mcp_sampling_review`` interrupt (``review_completion=True``): the model's completion for
    ``messages`` (the server's, or the human's edit of them), shown before it goes back to the server. The
    completion is kept in the checkpoint: a re-run shows the same text and never calls the model again. Cards:
    one, ``args.completion`` the text (edit it to send other text)."""

    type: Literal["mcp_sampling_review"]
    completion: str
    """The model's text: what the server gets on ``approve``."""
    model: str
    completion_key: str
    """Names this completion among the call's (the kept copy is found by it on a re-run)."""


class CompletionApprove(SamplingApprove):
    """Send the model's completion to the server as it is."""


class CompletionEdit(TypedDict):
    """Send this text to the server instead of the model's."""

    type: Literal["edit"]
    text: str


class CompletionReject(SamplingReject):
    """Refuse: the server gets a refusal, never the completion."""


CompletionDecision: TypeAlias = CompletionApprove | CompletionEdit | CompletionReject


def is_sampling_review_interrupt(value: object) -> bool:
    """True for an ``mcp_sampling_review`` payload."""
    return isinstance(value, dict) and value.get("type") == SAMPLING_REVIEW_INTERRUPT_TYPE
