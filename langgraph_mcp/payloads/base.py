"""What every payload is built from: Agent Chat UI's cards (LangChain ``HITLRequest`` items) and one call's names."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, get_args

DecisionType: TypeAlias = Literal["approve", "edit", "reject", "respond"]
"""The built-in decision types (LangChain's): their shapes are the TypedDicts of
:mod:`langgraph_mcp.payloads.approval`, their models those of :mod:`langgraph_mcp.questions.decisions`."""
ALL_DECISIONS: tuple[DecisionType, ...] = get_args(DecisionType)
ADDED_DECISIONS: set[str] = set()
"""Decision types an extension added with ``langgraph_mcp.questions.decisions.register_decision_type`` (each stands
for one built-in decision): a policy's verdict may offer them too."""


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


class Cards(TypedDict):
    """What Agent Chat UI mode (``McpToolNode(agent_chat_ui=True)``) adds to a payload: LangChain ``HITLRequest``
    keys (see :mod:`langgraph_mcp.questions.agent_chat_ui`; each payload says what its cards hold)."""

    action_requests: NotRequired[list[ActionRequest]]
    review_configs: NotRequired[list[ReviewConfig]]


class ToolQuestion(Cards):
    """What every question about one tool call carries."""

    tool_call_id: str
    tool: str
    """The server's own tool name."""
    published_name: str
    """The name the model called (usually ``<server>_<tool>``)."""
