"""``ScriptedChatModel``: a deterministic chat model for the demo, tests and Studio (no network, no API key).

It plays one fixed conversation with the bundled demo server:

1. When the conversation ends with a human turn, it proposes **parallel** tool calls in one AIMessage: a
   read-only call (``demo_list_files``), a destructive call the approval gate asks about
   (``demo_delete_file`` on ``todo.txt``) and a call whose server asks the user for a date mid-call
   (``demo_book_trip``).
2. Once every call of its last proposal has a ToolMessage, it answers with a plain-text summary of the
   results.

It is a real ``langchain_core`` ``BaseChatModel`` (``invoke``/``ainvoke``/``stream`` and ``bind_tools`` work),
so the same graph runs under ``langgraph dev`` / Studio, in ``create_agent`` and in the CLI. Tool call ids are
deterministic (``call_<tool>_<turn>``, e.g. ``call_delete_file_1``) so answers files can name them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field

__all__ = ["DEMO_PROMPT", "DEMO_TOOL_CALLS", "ScriptedChatModel", "ScriptedSamplingModel", "demo_call_ids"]

DEMO_PROMPT = "Show me my files, delete todo.txt, and book me a trip to Rome."
"""The human turn the demo starts with."""

DEMO_TOOL_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("list_files", {}),
    ("delete_file", {"path": "todo.txt"}),
    ("book_trip", {"destination": "Rome"}),
)
"""The demo's first-turn proposal: (server tool name, arguments). Published names get the server prefix."""


def demo_call_ids(prefix: str = "demo_", turn: int = 1) -> dict[str, str]:
    """The tool call ids :class:`ScriptedChatModel` gives the demo calls on ``turn``: published name -> id."""
    return {f"{prefix}{tool}": f"call_{tool}_{turn}" for tool, _ in DEMO_TOOL_CALLS}


def _text(content: Any) -> str:
    """A short one-line rendering of a ToolMessage's content (text blocks joined, others named)."""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
        text = " ".join(parts)
    else:
        text = json.dumps(content, default=str)
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "..."


class ScriptedChatModel(BaseChatModel):
    """A chat model that proposes a fixed set of parallel tool calls, then summarizes the tool results.

    ``tool_calls`` are ``(tool, args)`` pairs with the server's own tool names; ``prefix`` turns them into
    published names (``"demo_"`` for the bundled server with default naming). The model never calls the
    network and ignores the tools it is bound to (it only knows its script).
    """

    tool_calls: list[tuple[str, dict[str, Any]]] = Field(default_factory=lambda: list(DEMO_TOOL_CALLS))
    prefix: str = "demo_"

    @property
    def _llm_type(self) -> str:
        return "langgraph-mcp-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"tool_calls": self.tool_calls, "prefix": self.prefix}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept any tools (as real models do) and keep following the script."""
        return self

    # ------------------------------------------------------------------------------------------- turns

    def next_message(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """What the script says next, given the conversation so far."""
        last_proposal: int | None = None
        for i in range(len(messages) - 1, -1, -1):
            message = messages[i]
            if isinstance(message, AIMessage) and message.tool_calls:
                last_proposal = i
                break
        last_human = next(
            (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), -1
        )
        if last_proposal is None or last_human > last_proposal:
            return self._propose(turn=sum(isinstance(m, HumanMessage) for m in messages) or 1)
        proposal = messages[last_proposal]
        assert isinstance(proposal, AIMessage)
        results = {m.tool_call_id: m for m in messages[last_proposal:] if isinstance(m, ToolMessage)}
        return self._summarize(proposal.tool_calls, results)

    def _propose(self, turn: int) -> AIMessage:
        calls = [
            ToolCall(name=f"{self.prefix}{tool}", args=dict(args), id=f"call_{tool}_{turn}", type="tool_call")
            for tool, args in self.tool_calls
        ]
        names = ", ".join(call["name"] for call in calls)
        return AIMessage(content=f"I'll run {len(calls)} tools in parallel: {names}.", tool_calls=calls)

    @staticmethod
    def _summarize(calls: Sequence[ToolCall], results: dict[str, ToolMessage]) -> AIMessage:
        lines = ["Here is what happened:"]
        for call in calls:
            message = results.get(call.get("id") or "")
            if message is None:
                lines.append(f"- {call['name']}: no result")
            elif message.status == "error":
                lines.append(f"- {call['name']} (error): {_text(message.content)}")
            else:
                lines.append(f"- {call['name']}: {_text(message.content)}")
        return AIMessage(content="\n".join(lines))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.next_message(messages))])


class ScriptedSamplingModel(BaseChatModel):
    """A chat model for sampling examples and tests: answers ``"<prefix> <last human text>"`` and keeps the
    ``max_tokens`` each call was given (``budgets``), so a test sees the prompt and the cap the model got."""

    prefix: str = "Scripted reply to:"
    budgets: list[int | None] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "langgraph-mcp-scripted-sampling"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.budgets.append(kwargs.get("max_tokens"))
        human = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
        text = _text(human.content) if human is not None else ""
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=f"{self.prefix} {text}"))])
