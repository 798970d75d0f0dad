"""A server's ``sampling/createMessage`` answered by the client's chat model, under the server's policy and caps.

Both eras: a legacy server pushes the request mid-call (routed to its call like a pushed question), a 2026-07-28
server puts it in an ``InputRequiredResult``. Without a ``sampling_model`` the request is refused with a clear error
(as before). With one: ``deny`` refuses; ``allow`` runs the model; ``ask`` (the default) pauses the graph with an
``mcp_sampling`` interrupt whose decision (approve / edit the messages / reject) is stored in the checkpoint, so a
restart between the question and the answer re-issues the call and answers the request from the stored decision.
Caps: ``sampling_max_tokens`` per completion, ``sampling_max_requests`` per thread and credential identity (a run
and the resumes that continue it; each server connection is per identity).

A refusal reaches a legacy server as the JSON-RPC error the spec names for a user's rejection (code -1); a
2026-07-28 server can't be sent one (a round's answers are results only), so there the call ends with an error
``ToolMessage`` that says the request was refused, and the server never gets a completion.
"""

from __future__ import annotations

from typing import Any, Protocol

import mcp.types as types
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.config import get_config

from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.errors import SamplingRefusedError, UnsupportedRequestError
from langgraph_mcp.humans.sampling import (
    HitlSamplingDecisionModel,
    SamplingDecisionModel,
    sampling_card,
    sampling_payload,
    sampling_texts,
)

__all__ = ["SamplingCall", "answer_sampling", "refusal"]

USER_REJECTED = -1
"""The JSON-RPC error code MCP names for a user's rejection of a sampling request."""


class SamplingCall(Protocol):
    """What answering a sampling request needs from the call driver's call."""

    @property
    def conn(self) -> ServerConnection: ...

    @property
    def tool(self) -> McpTool: ...

    @property
    def tool_call_id(self) -> str: ...

    @property
    def asker(self) -> InterruptAsker | None: ...


def _thread() -> str:
    try:
        return str(get_config().get("configurable", {}).get("thread_id", ""))
    except RuntimeError:
        return ""


def refusal(why: str) -> types.ErrorData:
    return types.ErrorData(code=USER_REJECTED, message=f"Sampling request refused: {why}")


async def answer_sampling(
    call: SamplingCall, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult | types.ErrorData:
    """The answer to one sampling request (a completion, or a refusal); raises ``GraphInterrupt`` to ask a human
    first (the call's asker keeps its place among the stored decisions)."""
    conn, tool = call.conn, call.tool
    spec = conn.spec
    model = spec.sampling_model
    if model is None:
        raise UnsupportedRequestError(
            conn.name,
            "asked the client to 'sampling/createMessage' (sampling); langgraph-mcp does not serve sampling "
            "requests unless the server's config names a sampling_model",
        )
    if isinstance(model, str):  # a JSON config's name for a model: only the CLI resolves those
        raise UnsupportedRequestError(
            conn.name,
            f"asked for a completion, but this server's sampling_model is the string {model!r}: give McpServers a "
            "LangChain chat model object (the langgraph-mcp CLI resolves 'scripted' and 'provider:model' names)",
        )
    if spec.sampling_policy == "deny":
        return refusal("this server's sampling_policy is 'deny'")
    counts = conn.sampling_counts
    thread = _thread()
    if counts[thread] >= spec.sampling_max_requests:
        return refusal(f"more than sampling_max_requests ({spec.sampling_max_requests}) in this thread")
    payload = sampling_payload(
        params,
        tool_call_id=call.tool_call_id,
        server=tool.server,
        tool=tool.name,
        published_name=tool.published_name,
        max_tokens_cap=spec.sampling_max_tokens,
    )
    messages: list[dict[str, Any]] = [dict(m) for m in payload["messages"]]
    if spec.sampling_policy == "ask":
        if call.asker is None:
            raise SamplingRefusedError(
                conn.name,
                f"MCP tool {tool.published_name!r} asked for a completion that a human must review "
                "(sampling_policy 'ask'); run it through McpToolNode in a graph with a checkpointer",
                tool=tool.name,
            )
        if call.asker.compat:  # Agent Chat UI: one HITLRequest card, answered with {"decisions": [...]}
            decided = call.asker.decide(sampling_card(payload), HitlSamplingDecisionModel)
        else:
            decided = call.asker.decide(payload, SamplingDecisionModel)
        decision = decided.decision()
        if decision["type"] == "reject":
            return refusal(decision.get("message") or "the user rejected it")
        if decision["type"] == "edit":
            messages = [dict(m) for m in decision["messages"]]
    counts[thread] += 1
    text = await _complete(model, params.system_prompt, messages, payload["max_tokens"])
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)
    result = types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=text), model=name, stop_reason="endTurn"
    )
    return result


async def _complete(model: Any, system: str | None, messages: list[dict[str, Any]], max_tokens: int) -> str:
    chat: list[BaseMessage] = [SystemMessage(system)] if system else []
    for role, text in sampling_texts(messages):
        chat.append(AIMessage(text) if role == "assistant" else HumanMessage(text))
    reply = await model.ainvoke(chat, max_tokens=max_tokens)
    content = getattr(reply, "text", None)
    return content if isinstance(content, str) else str(getattr(reply, "content", reply))


def refused_error(conn: ServerConnection, tool: McpTool, error: types.ErrorData) -> SamplingRefusedError:
    """A 2026-07-28 call whose sampling request was refused: it can't go on (see the module doc)."""
    detail = f"{error.message}; the call to {tool.published_name!r} was stopped (a 2026-07-28 server can't be refused)"
    return SamplingRefusedError(conn.name, detail, tool=tool.name)
