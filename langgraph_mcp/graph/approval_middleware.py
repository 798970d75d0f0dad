"""``McpApprovalMiddleware``: the approval gate's policy and decisions inside LangChain's ``create_agent``.

One line gives ``create_agent`` users the annotation-driven gate::

    agent = create_agent(
        model,
        tools=await servers.get_tools(),
        middleware=[McpApprovalMiddleware(servers, policy)],
        checkpointer=InMemorySaver(),
    )

Each tool call is judged **where it runs**: in ``awrap_tool_call`` (``wrap_tool_call`` for sync agents), in the
call's own tool task, right before the tool is invoked. The verdict comes from the same policy and the same
fail-closed owner lookup as :func:`~langgraph_mcp.graph.gate.create_approval_gate`
(:func:`~langgraph_mcp.graph.owners.owner_verdict`): a name whose server could not be listed gets the policy's
``unresolved`` verdict (ask), a name two servers publish is denied, an untrusted server's tools are asked about,
a tool that is not an MCP tool gets ``non_mcp``. ``allow`` runs the call; ``deny`` answers it with an error
``ToolMessage``; ``ask`` raises an ``mcp_approval`` interrupt and runs the call only on the human's answer to
that interrupt (without a checkpointer nobody can be asked, so ``ask`` becomes ``deny``).

Because the decision is the resume value of the interrupt raised in the very task that runs the call, nothing a
thread's client can write (state updates, message metadata, ``Command(goto)``) counts as a decision: a call that
reaches the tool node is judged there, whatever route it took. After a restart LangGraph re-runs the paused task
from the checkpoint and hands it the stored answer; a call that had finished never runs again.

The interrupt payload is the gate's ``mcp_approval`` payload with LangChain's ``HITLRequest`` keys
(``action_requests``, ``review_configs``: one action each), so Agent Chat UI renders it, and it is answered the
way Agent Chat UI answers: ``{"decisions": [decision]}`` (``resume_command`` builds that from a bare decision).
Decisions are LangChain's: ``approve`` runs the call; ``edit`` runs it with the edited arguments (checked against
the tool's inputSchema; string values coerced where only one reading is possible) and tells the model in the
ToolMessage; ``reject`` answers with an error ToolMessage carrying the reason; ``respond`` answers with the human's
text. A bad answer is refused before it is saved (``response_schema``) and the same interrupt stays answerable.

Each asked call is its own interrupt, raised in its own task (``create_agent`` sends each tool call on its own):
when one model turn has two risky calls, both are pending at once, each with its own interrupt id. Agent Chat UI
answers one interrupt at a time without an id, which LangGraph refuses while two are pending: answer them by id
(``resume_command``, Studio), or wire the graph by hand with ``create_approval_gate(..., agent_chat_ui=True)``,
which asks one call at a time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langgraph.config import get_config
from langgraph.types import Command, interrupt

from langgraph_mcp._compat import has_checkpointer
from langgraph_mcp.calls.runs import judged_as
from langgraph_mcp.graph.gate import approval_payload, rejection_message
from langgraph_mcp.graph.owners import Owner, cached_owners, establish_owner, owner_verdict
from langgraph_mcp.humans.decisions import (
    DecisionResponse,
    decision_response_schema,
    only_decision,
    validate_decision,
)
from langgraph_mcp.humans.policy import ApprovalPolicy
from langgraph_mcp.payloads import Decision
from langgraph_mcp.servers.mcp_servers import McpServers, server_access

__all__ = ["McpApprovalMiddleware"]

ToolOutcome = ToolMessage | Command[Any]


class McpApprovalMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Judge every tool call of a ``create_agent`` agent with an :class:`ApprovalPolicy`, asking a human first
    about the calls the policy asks about (see the module docstring).

    ``servers`` are the :class:`~langgraph_mcp.servers.McpServers` the agent's tools come from
    (``await servers.get_tools()``); ``policy`` is an :class:`ApprovalPolicy` or what :meth:`ApprovalPolicy.load`
    accepts (a JSON file path or a mapping); ``None`` means the default policy (ask about destructive tools,
    allow the rest).
    """

    def __init__(
        self,
        servers: McpServers,
        policy: ApprovalPolicy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        self.servers = servers
        self._access = server_access(servers)
        self.policy = ApprovalPolicy.load(policy) if policy is not None else ApprovalPolicy()

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolOutcome]
    ) -> ToolOutcome:
        """Judge the call (a human may be asked), then run it, or answer it without running it."""
        name = request.tool_call["name"]
        cached = cached_owners(self._access, [name])  # no thread hop when the listings are fresh
        owner = (
            cached[name]
            if cached is not None
            else self._access.run_sync(lambda: establish_owner(self._access, name))
        )
        judged = self._judge(request, owner)
        if isinstance(judged, ToolMessage):
            return judged
        to_run, edited, how = judged
        with judged_as(how):
            return _with_edit_note(handler(to_run), edited)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolOutcome]]
    ) -> ToolOutcome:
        """Judge the call (a human may be asked), then run it, or answer it without running it."""
        judged = self._judge(request, await establish_owner(self._access, request.tool_call["name"]))
        if isinstance(judged, ToolMessage):
            return judged
        to_run, edited, how = judged
        with judged_as(how):
            return _with_edit_note(await handler(to_run), edited)

    def _judge(
        self, request: ToolCallRequest, owner: Owner
    ) -> tuple[ToolCallRequest, dict[str, Any] | None, dict[str, Any]] | ToolMessage:
        """The request to run (with the edited arguments, if a human edited them, and how it was judged, for its
        tool run) or the answer instead."""
        call = request.tool_call
        name, call_id = call["name"], call.get("id") or ""
        verdict = owner_verdict(self.policy, call, owner)
        if verdict.allowed:
            return request, None, _judged("allow", "policy", None, verdict.rule)
        if verdict.denied:
            return _denied(name, call_id, verdict.reason)
        if not has_checkpointer(get_config().get("configurable", {})):  # fail closed: nobody can be asked
            return _denied(
                name,
                call_id,
                f"it needs a human's approval ({verdict.reason}), but the agent has no checkpointer to pause "
                "on: create it with one, e.g. create_agent(..., checkpointer=InMemorySaver())",
            )
        payload = approval_payload(call, owner.tool, verdict, compat=True)
        answer = interrupt(payload, response_schema=decision_response_schema(payload, compat=True))
        decision: Decision
        if isinstance(answer, DecisionResponse):
            decision = answer.decision()
        else:  # defensive: a plain value (it was checked before it was saved)
            decision = validate_decision(payload, only_decision(payload, answer))
        if decision["type"] == "approve":
            return request, None, _judged("ask", "human", "approve", verdict.rule)
        if decision["type"] == "edit":
            args = dict(decision["edited_action"]["args"])
            edited: ToolCall = {**call, "args": args}
            return request.override(tool_call=edited), args, _judged("ask", "human", "edit", verdict.rule)
        if decision["type"] == "reject":
            return rejection_message(name, call_id, decision.get("message"))
        return ToolMessage(content=decision["message"], name=name, tool_call_id=call_id)


def _judged(verdict: str, decided_by: str, decision: str | None, rule: str) -> dict[str, Any]:
    """What the tool run of a call let through says about its judgement (as :mod:`langgraph_mcp.graph.node`)."""
    return {"mcp_verdict": verdict, "mcp_decided_by": decided_by, "mcp_decision": decision, "mcp_rule": rule}


def _denied(name: str, call_id: str, reason: str) -> ToolMessage:
    text = f"The approval policy denied this call to {name!r}; it was not run. Reason: {reason}"
    return ToolMessage(content=text, name=name, tool_call_id=call_id, status="error")


def _with_edit_note(outcome: ToolOutcome, args: dict[str, Any] | None) -> ToolOutcome:
    """Tell the model that a human changed its call: its own message still shows the arguments it chose."""
    if args is None or not isinstance(outcome, ToolMessage):
        return outcome
    note = (
        "A human reviewer edited this call before it ran; it ran with the arguments "
        f"{json.dumps(args, ensure_ascii=False, default=str)}."
    )
    content = outcome.content
    if isinstance(content, str):
        new_content: str | list[str | dict[Any, Any]] = f"{note}\n\n{content}" if content else note
    else:
        new_content = [{"type": "text", "text": note}, *content]
    return outcome.model_copy(update={"content": new_content})
