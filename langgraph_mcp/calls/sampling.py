"""A server's ``sampling/createMessage`` answered by the client's chat model, under the server's policy and caps.

Both eras: a legacy server pushes the request mid-call (routed to its call like a pushed question), a 2026-07-28
server puts it in an ``InputRequiredResult``. Without a ``sampling_model`` the request is refused with a clear error
(as before). With one: ``deny`` refuses; ``allow`` runs the model; ``ask`` (the default) pauses the graph with an
``mcp_sampling`` interrupt whose decision (approve / edit the messages / reject) is stored in the checkpoint, so a
restart between the question and the answer re-issues the call and answers the request from the stored decision.
Caps: ``sampling_max_tokens`` per completion, ``sampling_max_requests`` per thread and credential identity (a run
and the resumes that continue it; each server connection is per identity).

**Completion review** (``review_completion=True``): the model's text is shown before it goes back (an
``mcp_sampling_review`` interrupt: approve / edit the text / reject). The completion is made inside a LangGraph
``@task`` (``mcp_sampling_completion``), whose return value the checkpoint keeps as soon as it returns, and the review
interrupt carries it too; a re-run of the node (a resume, a restart, another worker) finds it by its key (server,
tool call, the exact messages and budget, and which such request of the call it is) and never calls the model again.
A completion made now is always asked about with a new interrupt: a stored review decision is never applied to a
text the human was not shown. A sync run (``invoke``) can't call the async ``@task``: there the request is refused
(an error that says so) rather than reviewed without a kept completion.

A refusal reaches a legacy server as the JSON-RPC error the spec names for a user's rejection (code -1); a
2026-07-28 server can't be sent one (a round's answers are results only), so there the call ends with an error
``ToolMessage`` that says the request was refused, and the server never gets a completion.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import mcp.types as types
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.func import task

from langgraph_mcp._compat import has_checkpointer, kept_task_values, runs_async_tasks
from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.calls.call import DrivenCall
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.errors import SamplingRefusedError, UnsupportedRequestError
from langgraph_mcp.payloads import SAMPLING_REVIEW_INTERRUPT_TYPE, CompletionDecision, SamplingInterrupt
from langgraph_mcp.questions.sampling import review_payload, sampling_payload, sampling_texts

__all__ = ["answer_sampling", "refusal"]

USER_REJECTED = -1
"""The JSON-RPC error code MCP names for a user's rejection of a sampling request."""


def _configurable() -> Mapping[str, Any]:
    try:
        return cast(Mapping[str, Any], get_config().get("configurable", {}))
    except RuntimeError:
        return {}


def _thread() -> str:
    return str(_configurable().get("thread_id", ""))


COMPLETION_TYPE = "mcp_sampling_completion"

_seen_keys: weakref.WeakKeyDictionary[InterruptAsker, Counter[str]] = weakref.WeakKeyDictionary()
"""How many reviewed requests with the same content each node run's call has made (part of a completion's key)."""


def refusal(why: str) -> types.ErrorData:
    return types.ErrorData(code=USER_REJECTED, message=f"Sampling request refused: {why}")


async def answer_sampling(
    call: DrivenCall, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult | types.ErrorData:
    """The answer to one sampling request (a completion, or a refusal); raises ``GraphInterrupt`` to ask a human
    first (the call's asker keeps its place among the stored decisions)."""
    conn, tool = call.conn, call.tool
    spec = conn.spec
    model = _sampling_model(conn)
    counts = conn.sampling_counts
    thread = _thread()
    refused = _over_policy(spec, counts[thread])
    if refused is not None:
        return refused
    payload = sampling_payload(
        params,
        tool_call_id=call.tool_call_id,
        server=tool.server,
        tool=tool.name,
        published_name=tool.published_name,
        max_tokens_cap=spec.sampling_max_tokens,
    )
    _check_reviewable(call)
    asked = _asked(call.asker, payload) if spec.sampling_policy == "ask" else None
    if isinstance(asked, types.ErrorData):
        return asked
    messages: list[dict[str, Any]] = [dict(m) for m in (payload["messages"] if asked is None else asked)]
    name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__)

    async def run_model() -> str:
        counts[thread] += 1
        return await _complete(model, params.system_prompt, messages, payload["max_tokens"])

    if spec.review_completion and call.asker is not None:
        reviewed = await _reviewed(call.asker, payload, messages, name, run_model)
        if isinstance(reviewed, types.ErrorData):
            return reviewed
        text = reviewed
    else:
        text = await run_model()
    result = types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=text), model=name, stop_reason="endTurn"
    )
    return result


def _sampling_model(conn: ServerConnection) -> Any:
    """The server's chat model, or an error saying why this server's requests are not served."""
    model = conn.spec.sampling_model
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
    return model


def _over_policy(spec: ServerSpec, made: int) -> types.ErrorData | None:
    """A refusal when the policy denies every request, or this thread made ``sampling_max_requests`` already."""
    if spec.sampling_policy == "deny":
        return refusal("this server's sampling_policy is 'deny'")
    if made >= spec.sampling_max_requests:
        return refusal(f"more than sampling_max_requests ({spec.sampling_max_requests}) in this thread")
    return None


def _check_reviewable(call: DrivenCall) -> None:
    """Raises when a human must see the request (or its completion) but this run can't ask or keep it."""
    spec, tool = call.conn.spec, call.tool
    if (spec.sampling_policy == "ask" or spec.review_completion) and call.asker is None:
        raise SamplingRefusedError(
            call.conn.name,
            f"MCP tool {tool.published_name!r} asked for a completion that a human must review "
            f"({'sampling_policy ask' if spec.sampling_policy == 'ask' else 'review_completion'}); run it "
            "through McpToolNode in a graph with a checkpointer",
            tool=tool.name,
        )
    if spec.review_completion and not _keeps_completions():
        raise SamplingRefusedError(
            call.conn.name,
            f"MCP tool {tool.published_name!r} asked for a completion to be reviewed (review_completion), which "
            "needs an async graph run with a checkpointer (ainvoke / astream): the completion is kept in a "
            "LangGraph @task, which a sync run can't call",
            tool=tool.name,
        )


def _asked(asker: InterruptAsker | None, payload: SamplingInterrupt) -> list[Any] | types.ErrorData | None:
    """``sampling_policy = "ask"``: the human's decision — a refusal, the edited messages, or ``None`` (approved:
    the server's messages as they are)."""
    if asker is None:
        return None
    # Agent Chat UI: a HITLRequest card, answered with {"decisions": [...]}
    asked = asker.shapes.sampling(payload)
    decided = asker.decide(asked, asker.shapes.sampling_model(asked))
    decision = decided.decision()
    if decision["type"] == "reject":
        return refusal(decision.get("message") or "the user rejected it")
    if decision["type"] == "edit":
        return list(decision["messages"])
    return None


def _keeps_completions() -> bool:
    configurable = _configurable()
    return has_checkpointer(configurable) and runs_async_tasks(configurable)


def _completion_key(asker: InterruptAsker, request: SamplingInterrupt, messages: list[dict[str, Any]]) -> str:
    """Names one completion of this call: the server, the tool call, exactly what the model is asked, and which
    such request of the call it is (a server may ask the same twice)."""
    content = json.dumps(
        [
            request["server"],
            request["tool_call_id"],
            request["system_prompt"],
            messages,
            request["max_tokens"],
        ],
        sort_keys=True,
        ensure_ascii=False,
    )
    digest = hashlib.sha256(content.encode()).hexdigest()[:32]
    seen = _seen_keys.setdefault(asker, Counter())
    seen[digest] += 1
    return f"{digest}:{seen[digest]}"


@task(name=COMPLETION_TYPE)  # type: ignore[arg-type]
async def _kept_completion(run: Callable[[], Awaitable[str]], key: str, model: str) -> dict[str, Any]:
    return {"type": COMPLETION_TYPE, "key": key, "text": await run(), "model": model}


async def _kept_or_new(run: Callable[[], Awaitable[str]], key: str, model: str) -> tuple[str, bool]:
    """The completion for ``key``: kept in the checkpoint by an earlier run of the node, else made now (in the
    ``@task``, so the checkpoint keeps it). Returns the text and whether it was made now (so never shown yet)."""
    for value in reversed(await kept_task_values(_configurable())):
        if not isinstance(value, Mapping) or value.get("completion_key", value.get("key")) != key:
            continue
        if value.get("type") == SAMPLING_REVIEW_INTERRUPT_TYPE and isinstance(value.get("completion"), str):
            return str(
                value["completion"]
            ), False  # shown in a pending review (its @task write may be missing)
        if value.get("type") == COMPLETION_TYPE and isinstance(value.get("text"), str):
            return str(value["text"]), False
    made_now = False

    async def run_here() -> str:
        nonlocal made_now
        made_now = True
        return await run()

    while True:
        # LangGraph hands back a saved value by the task's position among the node's task calls: a value saved
        # for another completion (the call asked something else this time) is stepped over.
        kept = await cast(Any, _kept_completion)(run_here, key, model)
        if isinstance(kept, Mapping) and kept.get("key") == key and isinstance(kept.get("text"), str):
            return str(kept["text"]), made_now


async def _reviewed(
    asker: InterruptAsker,
    request: SamplingInterrupt,
    messages: list[dict[str, Any]],
    model: str,
    run: Callable[[], Awaitable[str]],
) -> str | types.ErrorData:
    """The text the server gets (the completion, or the human's edit of it), or a refusal; raises
    ``GraphInterrupt`` to show the completion first."""
    key = _completion_key(asker, request, messages)
    text, made_now = await _kept_or_new(run, key, model)
    payload = review_payload(request, messages, text, model, key)
    # A completion made just now was never shown: no stored decision may answer it, so a new interrupt asks.
    asked = asker.shapes.review(payload)
    decided = asker.decide(asked, asker.shapes.review_model(asked), anew=made_now)
    decision: CompletionDecision = decided.decision()
    if decision["type"] == "reject":
        return refusal(decision.get("message") or "the user rejected the completion")
    if decision["type"] == "edit":
        return decision["text"]
    return text


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
