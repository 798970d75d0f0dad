"""What every payload is built from: Agent Chat UI's cards (LangChain ``HITLRequest`` items) and one call's names."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

DecisionType: TypeAlias = Literal["approve", "edit", "reject", "respond"]
ALL_DECISIONS: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")


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
