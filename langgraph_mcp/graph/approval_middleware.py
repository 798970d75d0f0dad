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
(:func:`~langgraph_mcp.approval.owners.owner_verdict`): a name whose server could not be listed gets the policy's
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
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command, interrupt

from langgraph_mcp._compat import (
    fresh_resume_index,
    has_checkpointer,
    shown_interrupt_value,
    stored_resume_values,
    task_scratchpad,
)
from langgraph_mcp.approval.audit import Outcome, decision_record, emit_decision
from langgraph_mcp.approval.judge import (
    ask_payload,
    effect,
    mind_client_principal,
    rejection_message,
    with_remembered_note,
)
from langgraph_mcp.approval.memory import (
    MEMORY_METADATA_KEY,
    Recall,
    arecall,
    aremember,
    offer,
    recall,
    remember,
    signed_entry,
    with_offer,
)
from langgraph_mcp.approval.oversight import Oversight, apply_key, register_policy, resolve
from langgraph_mcp.approval.owners import Owner, cached_owners, establish_owner, owner_verdict
from langgraph_mcp.calls.observers import judged_as
from langgraph_mcp.payloads import Decision, DecisionType, RememberedDecision
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.decisions import DecisionResponse
from langgraph_mcp.servers.identities import current_store
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
        *,
        oversight: Oversight | None = None,
    ) -> None:
        super().__init__()
        self.servers = servers
        self._access = server_access(servers)
        loaded, self.shapes, self.oversight = resolve(oversight, policy, True)  # always Agent Chat UI's cards
        self.signer = apply_key(servers, self.oversight)
        """Signs and verifies with the key every path over ``servers`` shares."""
        self.policy = loaded if loaded is not None else ApprovalPolicy()
        if loaded is not None:
            register_policy(servers, loaded)

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolOutcome]
    ) -> ToolOutcome:
        """Judge the call (a human may be asked), then run it, or answer it without running it."""
        name = request.tool_call["name"]
        cached = cached_owners(self._access.names, [name])  # no thread hop when the listings are fresh
        owner = (
            cached[name]
            if cached is not None
            else self._access.run_sync(lambda: establish_owner(self._access.names, name))
        )
        run = _Run(self, request, owner)
        if run.may_recall:
            run.memory = recall(run.store, _messages(request), **run.recall_args())
        if run.fresh:
            run.shown = _mapping(self._access.run_sync(lambda: shown_interrupt_value(run.configurable, 0)))
        judged = self._judge(run)
        kept = judged.entry is not None and remember(run.store, judged.entry)
        if judged.answer is not None:
            run.emit(judged.outcome)
            return _with_thread_memory(judged.answer, None if kept else judged.entry)
        assert judged.request is not None
        try:
            with judged_as(judged.how):
                outcome = _noted(_with_edit_note(handler(judged.request), judged.edited), judged)
        except GraphBubbleUp:
            raise
        except BaseException:
            run.emit("failed")
            raise
        run.emit(_ran_or_failed(outcome))
        return _with_thread_memory(outcome, None if kept else judged.entry)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolOutcome]]
    ) -> ToolOutcome:
        """Judge the call (a human may be asked), then run it, or answer it without running it."""
        run = _Run(self, request, await establish_owner(self._access.names, request.tool_call["name"]))
        if run.may_recall:
            run.memory = await arecall(run.store, _messages(request), **run.recall_args())
        if run.fresh:
            run.shown = _mapping(await shown_interrupt_value(run.configurable, 0))
        judged = self._judge(run)
        kept = judged.entry is not None and await aremember(run.store, judged.entry)
        if judged.answer is not None:
            run.emit(judged.outcome)
            return _with_thread_memory(judged.answer, None if kept else judged.entry)
        assert judged.request is not None
        try:
            with judged_as(judged.how):
                outcome = _noted(_with_edit_note(await handler(judged.request), judged.edited), judged)
        except GraphBubbleUp:
            raise
        except BaseException:
            run.emit("failed")
            raise
        run.emit(_ran_or_failed(outcome))
        return _with_thread_memory(outcome, None if kept else judged.entry)

    def _judge(self, run: _Run) -> _Judged:
        """Run the call (with the edited arguments, if a human edited them), or answer it instead; and the decision
        to remember, if the human said so. Notes on ``run`` who decided, for the call's record."""
        request, owner, verdict = run.request, run.owner, run.verdict
        call = request.tool_call
        name, call_id = call["name"], call.get("id") or ""
        if verdict.allowed:
            return _Judged(request, how=_judged("allow", "policy", None, verdict.rule))
        if verdict.denied:
            return _Judged(answer=_denied(name, call_id, verdict.reason), outcome="denied")
        remembered = run.memory.decision if run.memory is not None else None
        if remembered is not None:  # a signed entry this package wrote, about this very definition
            run.decided_by, run.decision = "remembered", remembered["type"]
            if remembered["type"] == "approve":
                entry = run.memory.entry if run.memory is not None else None
                noted: dict[str, Any] = {"decided_by": "remembered", "rule": verdict.rule}
                if entry is not None:
                    noted.update(scope=entry["scope"], owner=entry["owner"], decided_at=entry["decided_at"])
                how = _judged("ask", "remembered", "approve", verdict.rule)
                return _Judged(request, how=how, remembered=noted)
            reason = remembered.get("message")
            message = rejection_message(name, call_id, reason if isinstance(reason, str) else None)
            return _Judged(answer=message)
        if not has_checkpointer(run.configurable):  # fail closed: nobody can be asked
            why = (
                f"it needs a human's approval ({verdict.reason}), but the agent has no checkpointer to pause "
                "on: create it with one, e.g. create_agent(..., checkpointer=InMemorySaver())"
            )
            return _Judged(answer=_denied(name, call_id, why), outcome="denied")
        payload = ask_payload(call, owner.tool, verdict, self.policy, shapes=self.shapes)
        with_offer(
            payload,
            verdict,
            *offer(
                verdict,
                owner.tool,
                has_store=run.store is not None,
                thread_id=run.thread_id,
                principal=run.principal,
                key=self.signer.key,
            ),
        )
        mind_client_principal(payload)
        answer = interrupt(payload, response_schema=self.shapes.decision_model(payload))
        decision: Decision
        if isinstance(answer, DecisionResponse):
            decision = answer.decision()
        else:  # defensive: a plain value (it was checked before it was saved)
            decision = self.shapes.decision(payload, answer)
        run.decided_by, run.decision = "human", decision["type"]
        # What the decision does, judged on the card the human saw (a redeploy or a late answer never runs).
        done = effect(call, decision, run.shown or payload, now=self.policy.clock(), tool=owner.tool)
        if done.message is not None:
            entry = run.entry(decision) if decision["type"] == "reject" else None
            return _Judged(answer=done.message, entry=entry, outcome=done.outcome)
        entry = run.entry(decision)
        if decision["type"] == "edit":
            assert done.arguments is not None
            run.arguments = done.arguments
            edited: ToolCall = {**call, "args": done.arguments}
            how = _judged("ask", "human", "edit", verdict.rule)
            return _Judged(request.override(tool_call=edited), edited=done.arguments, how=how)
        return _Judged(request, how=_judged("ask", "human", "approve", verdict.rule), entry=entry)


@dataclass(frozen=True)
class _Judged:
    """What the judgement of one call came to: the request to run, or the answer in its place."""

    request: ToolCallRequest | None = None
    answer: ToolMessage | None = None
    edited: dict[str, Any] | None = None
    how: dict[str, Any] = field(default_factory=dict)
    """How it was judged, for its tool run."""
    entry: RememberedDecision | None = None
    """The decision to remember."""
    outcome: Outcome = "rejected"
    """The record's outcome when ``answer`` is given."""
    remembered: dict[str, Any] | None = None
    """What is known of the remembered approval it runs under (said on its ToolMessage)."""


def _ran_or_failed(outcome: ToolOutcome) -> Outcome:
    return "failed" if isinstance(outcome, ToolMessage) and outcome.status == "error" else "ran"


class _Run:
    """One call being judged: its owner, verdict, principal, thread and the graph's store."""

    def __init__(self, middleware: McpApprovalMiddleware, request: ToolCallRequest, owner: Owner) -> None:
        self.middleware = middleware
        self.request = request
        self.owner = owner
        config = get_config()
        self.configurable: Mapping[str, Any] = config.get("configurable", {})
        self.principal = middleware.policy.principal_for(config)
        self.thread_id = str(self.configurable.get("thread_id") or "")
        self.store = current_store()
        self.verdict = owner_verdict(middleware.policy, request.tool_call, owner, principal=self.principal)
        self.memory: Recall | None = None
        self.decided_by: Literal["policy", "human", "remembered"] = "policy"
        self.decision: DecisionType | None = None
        self.arguments: Any = request.tool_call.get("args")
        """The arguments judged (an edit's, after one), for the call's record."""
        scratchpad = task_scratchpad(self.configurable)
        # Asked before (this task holds an answer): the human's answer decides, not what a sibling remembered since.
        asked = scratchpad is not None and bool(stored_resume_values(scratchpad))
        self.may_recall = self.verdict.needs_approval and owner.tool is not None and not asked
        self.fresh = (
            asked and scratchpad is not None and fresh_resume_index(scratchpad, self.configurable) == 0
        )
        """The answer to this call's approval came just now (the card shown is read to judge it)."""
        self.shown: Mapping[str, Any] | None = None
        """The approval card as shown when the call paused (read when its answer came just now)."""

    def recall_args(self) -> dict[str, Any]:
        tool = self.owner.tool
        assert tool is not None
        return {
            "key": self.middleware.signer.key,
            "verdict": self.verdict,
            "tool": tool,
            "identity": self.middleware.signer.server_identity(tool.server),
            "thread_id": self.thread_id,
            "principal": self.principal,
            "arguments": self.request.tool_call.get("args"),
        }

    def emit(self, outcome: Outcome) -> None:
        """The call's ``mcp_decision`` record (:mod:`langgraph_mcp.approval.audit`)."""
        tool, call = self.owner.tool, self.request.tool_call
        emit_decision(
            decision_record(
                tool_call_id=call.get("id") or "",
                server=tool.server if tool is not None else None,
                tool=tool.name if tool is not None else call["name"],
                definition_hash=tool.definition_hash if tool is not None else None,
                verdict=self.verdict.kind,
                decided_by=self.decided_by,
                rule=self.verdict.rule,
                args=self.arguments,
                principal=self.principal,
                decision=self.decision,
                outcome=outcome,
            )
        )

    def entry(self, decision: Decision) -> RememberedDecision | None:
        """The signed entry for a decision given with ``remember`` (approve or reject), else ``None``."""
        scope = decision.get("remember")
        tool = self.owner.tool
        if (
            scope not in ("thread", "principal")
            or tool is None
            or decision["type"] not in ("approve", "reject")
        ):
            return None
        return signed_entry(
            self.middleware.signer.key,
            scope=scope,
            owner=self.thread_id if scope == "thread" else str(self.principal),
            server=tool.server,
            identity=self.middleware.signer.server_identity(tool.server),
            tool=tool.name,
            definition_hash=tool.definition_hash,
            decision=decision,
            arguments=self.request.tool_call.get("args"),
            same_args=self.verdict.remember == "same_args",
            rule=self.verdict.rule,
            now=self.middleware.policy.clock(),
            tool_call_id=self.request.tool_call.get("id") or "",
            published_name=self.request.tool_call["name"],
            owner_origin=self.middleware.policy.principal_origin_for(get_config())
            if scope == "principal"
            else None,
        )


def _noted(outcome: ToolOutcome, judged: _Judged) -> ToolOutcome:
    """A call run under a remembered approval says so on its ToolMessage."""
    if judged.remembered is None or not isinstance(outcome, ToolMessage):
        return outcome
    return with_remembered_note(outcome, judged.remembered)


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _messages(request: ToolCallRequest) -> list[Any]:
    state = request.state
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    return list(messages) if isinstance(messages, list) else []


def _with_thread_memory(outcome: ToolOutcome, entry: RememberedDecision | None) -> ToolOutcome:
    """Without a store, a ``thread`` decision is kept in the thread: on the ToolMessage that answers the call."""
    if entry is None or not isinstance(outcome, ToolMessage):
        return outcome
    return _kept_in(outcome, entry)


def _kept_in(message: ToolMessage, entry: RememberedDecision) -> ToolMessage:
    metadata: dict[str, Any] = dict(message.response_metadata)
    metadata[MEMORY_METADATA_KEY] = [*(metadata.get(MEMORY_METADATA_KEY) or []), dict(entry)]
    return message.model_copy(update={"response_metadata": metadata})


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
