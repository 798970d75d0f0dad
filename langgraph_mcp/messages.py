"""Reading tool calls out of a message list: which calls of the last AI message still have no ToolMessage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage


def messages_of(state: Any, messages_key: str = "messages") -> list[AnyMessage]:
    """The message list of a graph state (dict, object with the attribute, or a plain list)."""
    if isinstance(state, list):
        return state
    messages = state.get(messages_key) if isinstance(state, dict) else getattr(state, messages_key, None)
    if messages is None:
        raise ValueError(f"no {messages_key!r} key in the state given to the MCP tool node / router")
    return list(messages)


def last_ai_message(messages: Sequence[AnyMessage]) -> AIMessage | None:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    return None


def pending_tool_calls(messages: Sequence[AnyMessage]) -> list[ToolCall]:
    """Tool calls of the last AIMessage that no ToolMessage answers yet, in the model's order."""
    ai = last_ai_message(messages)
    if ai is None or not ai.tool_calls:
        return []
    index = messages.index(ai) if ai in messages else len(messages)
    answered = {m.tool_call_id for m in messages[index:] if isinstance(m, ToolMessage)}
    return [call for call in ai.tool_calls if call.get("id") not in answered]
