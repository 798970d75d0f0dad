"""The approval gate: a compiled subgraph that asks a human about tool calls before they run.

Wire it between the model and the tool node::

    from langgraph.prebuilt import tools_condition

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers, policy))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approval_gate", END: END})
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", "agent"), ["tools", "agent"])
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=InMemorySaver())

After the gate, route each call still without a ``ToolMessage`` to the tool node in its own task, and route
"nothing left to run" back to the model (not to ``END``): when every call was rejected, answered or denied,
the model should still see those ``ToolMessage``\\s.

For every tool call of the last ``AIMessage`` that has no ``ToolMessage`` yet, the gate asks the
:class:`~langgraph_mcp.humans.policy.ApprovalPolicy` for a verdict:

* ``allow`` - the call passes untouched;
* ``deny`` - the call gets an error ``ToolMessage`` carrying the reason, nobody is asked (also when the
  call would need a human but the graph has no checkpointer, or when two servers publish its name);
* ``ask`` - an ``mcp_approval`` interrupt (:class:`~langgraph_mcp.payloads.ApprovalInterrupt`) in a task of
  its own, so each paused call has its own interrupt id and one ``Command(resume={id: decision, ...})`` (see
  :func:`langgraph_mcp.humans.resume.resume_command`) answers any number of them.

The owner of a called name is established fail-closed (:mod:`langgraph_mcp.graph.owners`): if a server
that could publish the name can't be listed (failed, cut short, stale), or the lookup fails in any way, the
call gets the policy's ``unresolved`` verdict (``ask`` by default, naming the failure), never ``non_mcp``.
Calls sharing a tool call id, or without one, are never judged or run: each such id gets one error
``ToolMessage`` (see :mod:`langgraph_mcp.graph.messages`).

The gate records what it let through in the ``AIMessage`` (``response_metadata["mcp_gate"]``: tool call id →
server and tool, and whether the policy allowed it or a human approved/edited it). The tool node runs a call
of a gated message only if it resolves to exactly that server and tool, so an approval shown for one server
can never run another's tool, even after a restart.

Decisions (LangChain's shapes): ``approve`` lets the call go on; ``edit`` replaces the call's arguments in
the ``AIMessage`` itself (same message id, so ``add_messages`` replaces it: the tool node runs what was
approved and the history shows it; the original arguments are kept in the message's
``response_metadata["mcp_approval_edits"]``); ``reject`` answers the call with an error ``ToolMessage`` saying
a human rejected it and why; ``respond`` answers it with the human's text (the tool does not run). Every
decision is checked before it is saved (``interrupt(..., response_schema=...)``): a bad one makes the resume
raise ``pydantic.ValidationError`` and the same interrupt stays answerable.

Subgraph layout (``name`` is the node name in the parent, ``approval_gate`` by default)::

    START -> check --(one Send per asked call)--> review --> apply -> END
                   \\------------(nothing to ask)---------/

``check`` computes the verdicts once (it is not re-run when a review resumes); every ``review`` task only adds
its own decision to a private, dict-merging channel; ``apply`` alone rewrites the ``AIMessage`` and adds the
``ToolMessage``\\s. Parallel edits of several calls of one message therefore never overwrite each other. The
private channels stay inside the subgraph: the parent only sees ``messages``.

With ``compat=True`` each payload also carries LangChain's ``HITLRequest`` keys (``action_requests`` and
``review_configs``, one item each) and is answered with ``{"decisions": [decision]}``, which is what Agent
Chat UI renders and sends; calls are then asked **one at a time**, because that UI resumes without an
interrupt id and so supports a single pending interrupt. An edit's string values are coerced by the tool's
inputSchema where unambiguous (:mod:`langgraph_mcp.humans.coercion`). Set the same switch on
:func:`route_through_gate` and :class:`~langgraph_mcp.graph.node.McpToolNode` for a whole graph with never more than
one pending interrupt.

Wired model → gate → tools, the calls of one model turn run after the whole gate is done, allowed ones
included (they are not asked about, but they wait for the answers about their siblings); route with
:func:`route_through_gate` instead to send allowed calls straight to the tools in the same step. Elicitation happens in the tool node, after the
gate: a call that passes the gate and then asks the user a question pauses again there, so a turn with both
approvals and questions takes two resumes: first the decisions, then the answers (each one ``Command``, for
any number of calls, built by :func:`~langgraph_mcp.humans.resume.resume_command`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypedDict, cast

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send, interrupt

from langgraph_mcp._compat import RunnableCallable, has_checkpointer
from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.catalog import McpTool, ToolDefinition
from langgraph_mcp.errors import DecisionError
from langgraph_mcp.graph.audit import Outcome, decision_record, emit_decision
from langgraph_mcp.graph.messages import (
    GateRecord,
    call_with_context,
    gate_records,
    messages_of,
    pending_calls,
    turn_of,
    with_audit_context,
    with_gate_records,
    with_message_fields,
)
from langgraph_mcp.graph.owners import Owner, cached_owners, establish_owners, owner_verdict, record_for
from langgraph_mcp.humans.decisions import (
    DecisionResponse,
    decision_response_schema,
    only_decision,
    validate_decision,
)
from langgraph_mcp.humans.hitl import agent_chat_ui_mode
from langgraph_mcp.humans.policy import ApprovalPolicy, Verdict
from langgraph_mcp.humans.sign_in import MAX_SIGN_INS_PER_CALL, authorization_payload, sign_in_result
from langgraph_mcp.payloads import (
    APPROVAL_INTERRUPT_TYPE,
    ApprovalInterrupt,
    BindingVerdict,
    Decision,
    DecisionBinding,
)
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = ["approval_payload", "create_approval_gate", "rejection_message", "route_through_gate"]

_REVIEWS = "mcp_gate_reviews"
"""Private channel: the approval payloads ``check`` produced, in the model's call order."""
_DECISIONS = "mcp_gate_decisions"
"""Private channel: ``{tool_call_id: Decision}``, merged from every review task."""
_DENIED = "mcp_gate_denied"
"""Private channel: ``{tool_call_id: reason}`` for calls the policy denied."""
_ALLOWED = "mcp_gate_allowed"
"""Private channel: ``{tool_call_id: GateRecord}`` for calls the policy allowed."""
_JUDGED = "mcp_gate_judged"
"""Private channel: ``{tool_call_id: what was judged}`` (verdict, rule, principal, tool) for the audit record."""
_EXPIRED = "mcp_gate_expired"
"""Private channel: ``{tool_call_id: when the approval came}`` for approvals given after ``expires_at``."""
_BINDINGS = "mcp_gate_bindings"
"""Private channel: ``{tool_call_id: DecisionBinding}``, signed by the review task that took the decision."""
_SHOWN = "mcp_gate_shown"
"""Private channel: ``{tool_call_id: ToolDefinition}`` of the asked calls, as the policy judged them."""

_MAX_DESCRIBED_ARGS = 2_000


def _merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of the private decision channels: each task adds its own keys."""
    return {**(left or {}), **(right or {})}


class _ReviewInput(TypedDict):
    payload: ApprovalInterrupt


# ------------------------------------------------------------------------------------------------ payloads


def _describe(call: ToolCall, tool: McpTool | None, verdict: Verdict) -> str:
    name = call["name"]
    args = json.dumps(call.get("args") or {}, ensure_ascii=False, default=str)
    if len(args) > _MAX_DESCRIBED_ARGS:
        args = args[:_MAX_DESCRIBED_ARGS] + "..."
    if tool is None:
        head = f"Tool call {name!r} needs approval ({verdict.reason})."
    else:
        what = f" {tool.description.strip()}" if tool.description.strip() else ""
        head = (
            f"Tool call {name!r} (MCP server {tool.server!r}, tool {tool.name!r}) needs approval "
            f"({verdict.reason}).{what}"
        )
    return f"{head}\n\nArgs: {args}"


def approval_payload(
    call: ToolCall,
    tool: McpTool | None,
    verdict: Verdict,
    *,
    compat: bool = False,
    now: float | None = None,
) -> ApprovalInterrupt:
    """The ``mcp_approval`` interrupt value for one call the policy asks about.

    It names the rule that asks and its reason; with ``now`` (the policy's clock) and a verdict that expires,
    ``expires_at``. With ``compat=True`` it also carries LangChain's ``HITLRequest`` keys (one action request,
    one review config), so Agent Chat UI renders it.
    """
    name = call["name"]
    args = dict(call.get("args") or {})
    description = _describe(call, tool, verdict)
    payload: ApprovalInterrupt = {
        "type": APPROVAL_INTERRUPT_TYPE,
        "tool_call_id": call.get("id") or "",
        "server": tool.server if tool is not None else None,
        "tool": tool.name if tool is not None else name,
        "published_name": name,
        "arguments": args,
        "hints": tool.hints if tool is not None else None,
        "reason": verdict.reason,
        "allowed_decisions": list(verdict.allowed_decisions),
        "description": description,
    }
    if verdict.rule:
        payload["rule"] = verdict.rule
    if verdict.expires_after is not None and now is not None:
        payload["expires_at"] = now + verdict.expires_after
    if tool is not None:
        payload["input_schema"] = tool.input_schema
        payload["definition_hash"] = tool.definition_hash
    if compat:
        payload["action_requests"] = [{"name": name, "args": args, "description": description}]
        payload["review_configs"] = [
            {"action_name": name, "allowed_decisions": list(verdict.allowed_decisions)}
        ]
    return payload


def rejection_message(call_name: str, tool_call_id: str, message: str | None) -> ToolMessage:
    """The error ``ToolMessage`` the model gets for a call a human rejected."""
    text = f"A human reviewer rejected this call to {call_name!r}; it was not run."
    if message and message.strip():
        text += f" Reason: {message.strip()}"
    return ToolMessage(content=text, name=call_name, tool_call_id=tool_call_id, status="error")


def expiry_message(call_name: str, tool_call_id: str, payload: ApprovalInterrupt, now: float) -> ToolMessage:
    """The error ``ToolMessage`` for a call approved after its approval expired (the rule's ``expires_after``)."""
    late = now - payload.get("expires_at", now)
    rule = f" (rule {payload['rule']!r})" if payload.get("rule") else ""
    text = (
        f"The approval of this call to {call_name!r} expired: it came {late:.0f} s after the deadline the "
        f"policy sets{rule}, so it counts as a rejection; the call was not run. Ask again if it is still needed."
    )
    return ToolMessage(content=text, name=call_name, tool_call_id=tool_call_id, status="error")


def _denial_message(call_name: str, tool_call_id: str, reason: str) -> ToolMessage:
    text = f"The approval gate denied this call to {call_name!r}; it was not run. Reason: {reason}"
    return ToolMessage(content=text, name=call_name, tool_call_id=tool_call_id, status="error")


# ------------------------------------------------------------------------------------------------ editing


def _with_args(ai: AIMessage, edits: Mapping[str, dict[str, Any]]) -> AIMessage:
    """A copy of ``ai`` (same id) whose calls in ``edits`` carry the edited args everywhere they appear."""
    calls = [
        cast(ToolCall, {**call, "args": edits[call_id]})
        if (call_id := call.get("id") or "") in edits
        else call
        for call in ai.tool_calls
    ]
    content: Any = ai.content
    if isinstance(content, list):  # provider tool-use blocks repeat the arguments (Anthropic, v1 blocks)
        blocks: list[Any] = []
        for block in content:
            if isinstance(block, dict) and block.get("id") in edits:
                if block.get("type") == "tool_use":
                    block = {**block, "input": edits[block["id"]]}
                elif block.get("type") == "tool_call":
                    block = {**block, "args": edits[block["id"]]}
            blocks.append(block)
        content = blocks
    additional = dict(ai.additional_kwargs)
    raw_calls = additional.get("tool_calls")
    if isinstance(raw_calls, list):  # OpenAI-style raw calls: function.arguments is a JSON string
        rewritten = []
        for raw in raw_calls:
            if isinstance(raw, dict) and raw.get("id") in edits and isinstance(raw.get("function"), dict):
                function = {**raw["function"], "arguments": json.dumps(edits[raw["id"]], ensure_ascii=False)}
                raw = {**raw, "function": function}
            rewritten.append(raw)
        additional["tool_calls"] = rewritten
    metadata = dict(ai.response_metadata)
    originals = dict(metadata.get("mcp_approval_edits") or {})
    for call in ai.tool_calls:
        if call.get("id") in edits:
            originals.setdefault(call["id"], call.get("args"))
    metadata["mcp_approval_edits"] = originals
    update = {
        "content": content,
        "additional_kwargs": additional,
        "response_metadata": metadata,
        "tool_calls": calls,
    }
    return with_message_fields(ai, update)


# ------------------------------------------------------------------------------------------------ the gate


class _Gate:
    """The node functions of one gate subgraph (bound to its servers, policy and options)."""

    def __init__(
        self, servers: McpServers, policy: ApprovalPolicy, *, compat: bool, messages_key: str
    ) -> None:
        self.servers = servers
        self.policy = policy
        self.compat = compat
        self.messages_key = messages_key

    # -- tool lookups -------------------------------------------------------------------------------

    async def _aowners(self, calls: Sequence[ToolCall]) -> dict[str, Owner]:
        return await establish_owners(self.servers, [c["name"] for c in calls]) if calls else {}

    def _owners(self, calls: Sequence[ToolCall]) -> dict[str, Owner]:
        if not calls:
            return {}
        names = [c["name"] for c in calls]
        cached = cached_owners(self.servers, names)  # no thread hop when the catalog already knows
        if cached is not None:
            return cached
        return self.servers.run_sync(lambda: establish_owners(self.servers, names))

    # -- check ----------------------------------------------------------------------------------------

    def _calls(self, state: Any) -> list[ToolCall]:
        """Every runnable pending call: judged on every pass, whatever record it carries (a record is a claim
        anyone who can write the thread can make; see :mod:`langgraph_mcp.humans.binding`)."""
        return pending_calls(messages_of(state, self.messages_key)).runnable

    def sign(
        self,
        verdict: BindingVerdict,
        call_id: str,
        server: str,
        tool: str,
        definition_hash: str,
        arguments: Mapping[str, Any] | None,
        config: RunnableConfig,
    ) -> DecisionBinding:
        """Bind ``verdict`` to this call, signed with the servers' approval key (checked by the tool node)."""
        return self.servers.approval_key.sign(
            verdict,
            thread_id=str(config.get("configurable", {}).get("thread_id", "")),
            tool_call_id=call_id,
            server=server,
            identity=self.servers.server_identity(server),
            tool=tool,
            definition_hash=definition_hash,
            arguments=arguments,
        )

    def allow_record(self, call: ToolCall, tool: McpTool | None, config: RunnableConfig) -> GateRecord:
        """The record of a call the policy allowed: bound to the definition it was judged on and its args."""
        if tool is None:
            return record_for(None, "allow")
        binding = self.sign(
            "allow",
            call.get("id") or "",
            tool.server,
            tool.name,
            tool.definition_hash,
            call.get("args"),
            config,
        )
        return record_for(tool, "allow", binding)

    def _verdicts(
        self,
        calls: list[ToolCall],
        owners: Mapping[str, Owner],
        config: RunnableConfig,
        declined: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        can_pause = has_checkpointer(config.get("configurable", {}))
        principal = self.policy.principal_for(config)
        now = self.policy.clock()
        reviews: list[ApprovalInterrupt] = []
        denied: dict[str, str] = dict(declined or {})
        allowed: dict[str, GateRecord] = {}
        judged: dict[str, dict[str, Any]] = {}
        shown: dict[str, ToolDefinition] = {}
        for call in calls:
            call_id = call.get("id") or ""
            if call_id in denied:
                continue
            owner = owners[call["name"]]
            verdict = owner_verdict(self.policy, call, owner, principal=principal)
            tool = owner.tool
            judged[call_id] = {
                "verdict": verdict.kind,
                "rule": verdict.rule,
                "principal": principal,
                "server": tool.server if tool is not None else None,
                "tool": tool.name if tool is not None else call["name"],
                "definition_hash": tool.definition_hash if tool is not None else None,
            }
            if verdict.allowed:
                allowed[call_id] = self.allow_record(call, owner.tool, config)
            elif verdict.denied:
                denied[call_id] = verdict.reason
            elif not can_pause:  # fail closed: nobody can be asked
                denied[call_id] = (
                    f"it needs a human's approval ({verdict.reason}), but the graph has no checkpointer to "
                    "pause on: compile it with one, e.g. graph.compile(checkpointer=InMemorySaver())"
                )
            else:
                reviews.append(approval_payload(call, owner.tool, verdict, compat=self.compat, now=now))
                if owner.tool is not None:
                    shown[call_id] = owner.tool.definition
        return {_REVIEWS: reviews, _DENIED: denied, _ALLOWED: allowed, _JUDGED: judged, _SHOWN: shown}

    def check(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        calls = self._calls(state)
        owners = self._owners(calls)
        declined: dict[str, str] = {}
        for _ in range(len(calls) * MAX_SIGN_INS_PER_CALL):
            if not self._sign_in_first(calls, owners, declined):
                break
            owners = self._owners(calls)
        return self._verdicts(calls, owners, config, declined)

    async def acheck(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        calls = self._calls(state)
        owners = await self._aowners(calls)
        declined: dict[str, str] = {}
        for _ in range(len(calls) * MAX_SIGN_INS_PER_CALL):
            if not self._sign_in_first(calls, owners, declined):
                break
            owners = await self._aowners(calls)
        return self._verdicts(calls, owners, config, declined)

    def _sign_in_first(
        self, calls: list[ToolCall], owners: Mapping[str, Owner], declined: dict[str, str]
    ) -> bool:
        """A call whose server needs the principal to sign in before its tool can even be looked up: ask for the
        sign-in here, so the human then judges the real tool (not an unresolved name). ``True`` when a sign-in
        was handed over (look the owners up again); a declined one denies its call."""
        for call in calls:
            call_id = call.get("id") or ""
            needed = owners[call["name"]].sign_in
            if needed is None or call_id in declined:
                continue
            if not has_checkpointer(get_config().get("configurable", {})):
                return False  # nobody can be asked: the call stays unresolved (denied, as without a checkpointer)
            payload = authorization_payload(
                server=needed.server,
                authorization_url=needed.authorization_url,
                principal=needed.principal,
                scopes=needed.scopes,
                tool_call_id=call_id,
                compat=self.compat,
            )
            result = sign_in_result(InterruptAsker(call_id, compat=self.compat).sign_in(payload))
            if result is None or result.error is not None:
                why = "was declined" if result is None else f"was refused ({result.error})"
                declined[call_id] = f"signing in to MCP server {needed.server!r} {why}"
                continue
            self.servers.hand_over_sign_in(needed.server, result)
            return True
        return False

    # -- routing and review -------------------------------------------------------------------------------

    def route(self, state: Any) -> str | list[Send]:
        """A ``Send`` per call still waiting for a decision (compat mode: the first only), else ``apply``."""
        decided = state.get(_DECISIONS) or {}
        todo = [p for p in state.get(_REVIEWS) or [] if p["tool_call_id"] not in decided]
        if not todo:
            return "apply"
        if self.compat:
            todo = todo[:1]
        return [Send("review", {"payload": p}) for p in todo]

    def review(self, state: _ReviewInput, config: RunnableConfig) -> dict[str, Any]:
        payload = state["payload"]
        answer = interrupt(payload, response_schema=decision_response_schema(payload, compat=self.compat))
        decision: Decision
        if isinstance(answer, DecisionResponse):
            decision = answer.decision()
        else:  # defensive: a plain value (validated again; it was checked before it was saved)
            decision = validate_decision(payload, only_decision(payload, answer) if self.compat else answer)
        call_id = payload["tool_call_id"]
        if decision["type"] in ("approve", "edit") and "expires_at" in payload:
            now = self.policy.clock()  # when the answer came: this task runs again on the resume
            if now > payload["expires_at"]:
                return {_DECISIONS: {call_id: decision}, _EXPIRED: {call_id: now}}
        out: dict[str, Any] = {_DECISIONS: {call_id: decision}}
        server, definition_hash = payload["server"], payload.get("definition_hash")
        signable = server is not None and server in self.servers.names and definition_hash is not None
        if decision["type"] in ("approve", "edit") and signable:
            assert server is not None and definition_hash is not None
            # Signed here, in the task that received the human's answer through the interrupt: a decision
            # written into the gate's channels or the message by anyone else carries no valid signature.
            args = decision["edited_action"]["args"] if decision["type"] == "edit" else payload["arguments"]
            binding = self.sign(
                decision["type"], call_id, server, payload["tool"], definition_hash, args, config
            )
            out[_BINDINGS] = {call_id: binding}
        return out

    # -- apply --------------------------------------------------------------------------------------------

    def apply(self, state: Any) -> dict[str, Any]:
        decisions: dict[str, Decision] = state.get(_DECISIONS) or {}
        denied: dict[str, str] = state.get(_DENIED) or {}
        expired: dict[str, float] = state.get(_EXPIRED) or {}
        judged: dict[str, dict[str, Any]] = state.get(_JUDGED) or {}
        records: dict[str, GateRecord] = dict(state.get(_ALLOWED) or {})
        reviews: list[ApprovalInterrupt] = state.get(_REVIEWS) or []
        undecided = [p["tool_call_id"] for p in reviews if p["tool_call_id"] not in decisions]
        if undecided:  # fail closed: a call that needed a human must never slip through undecided
            raise DecisionError(f"approval gate: no decision for tool call(s) {undecided}; nothing was run")
        messages: list[AnyMessage] = messages_of(state, self.messages_key)
        pending = pending_calls(messages)
        ai = pending.ai
        if ai is None or not (decisions or denied or records or pending.refused):
            return {}
        names = {call.get("id") or "": call["name"] for call in ai.tool_calls}
        args_of = {call.get("id") or "": call.get("args") for call in ai.tool_calls}

        def record(call_id: str, decision: Decision | None, outcome: Outcome) -> None:
            seen = judged.get(call_id) or {}
            emit_decision(
                decision_record(
                    tool_call_id=call_id,
                    server=seen.get("server"),
                    tool=seen.get("tool") or names.get(call_id, ""),
                    definition_hash=seen.get("definition_hash"),
                    verdict=seen.get("verdict", "ask" if decision is not None else "deny"),
                    decided_by="human" if decision is not None else "policy",
                    rule=seen.get("rule", ""),
                    args=args_of.get(call_id),
                    principal=seen.get("principal"),
                    decision=decision["type"] if decision is not None else None,
                    outcome=outcome,
                )
            )

        shown = {p["tool_call_id"]: p for p in reviews}
        bindings: dict[str, DecisionBinding] = state.get(_BINDINGS) or {}
        definitions: dict[str, ToolDefinition] = state.get(_SHOWN) or {}
        edits: dict[str, dict[str, Any]] = {}
        out: list[AnyMessage] = [group.message() for group in pending.refused]
        for call_id, decision in decisions.items():
            name = names.get(call_id, "")
            if call_id in expired:
                out.append(expiry_message(name, call_id, shown[call_id], expired[call_id]))
                record(call_id, decision, "expired")
                continue
            if decision["type"] in ("approve", "edit"):
                # Exactly what the human was shown: the tool node refuses to run anything else.
                payload = shown[call_id]
                server = payload["server"]
                entry: GateRecord = {
                    "server": server,
                    "tool": payload["tool"] if server is not None else None,
                    "verdict": decision["type"],
                }
                if call_id in bindings:
                    entry["binding"] = bindings[call_id]
                if call_id in definitions:
                    entry["definition"] = definitions[call_id]
                records[call_id] = entry
            else:
                record(call_id, decision, "rejected")
            if decision["type"] == "edit":
                edits[call_id] = dict(decision["edited_action"]["args"])
            elif decision["type"] == "reject":
                out.append(rejection_message(name, call_id, decision.get("message")))
            elif decision["type"] == "respond":
                out.append(ToolMessage(content=decision["message"], name=name, tool_call_id=call_id))
        for call_id, reason in denied.items():
            out.append(_denial_message(names.get(call_id, ""), call_id, reason))
            record(call_id, None, "denied")
        if edits or records or gate_records(ai) is None:
            # Always stamp a judged message (even with no call let through): the tool node then runs only
            # calls this gate recorded, whatever else reaches it.
            stamped = with_gate_records(_with_args(ai, edits) if edits else ai, records)
            context = {
                cid: {"rule": judged[cid]["rule"], "principal": judged[cid]["principal"]}
                for cid in records
                if cid in judged
            }
            if context:
                stamped = with_audit_context(stamped, context)
            out.insert(0, stamped)
        return {self.messages_key: out}


def create_approval_gate(
    servers: McpServers,
    policy: ApprovalPolicy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    agent_chat_ui: bool = False,
    compat: bool | None = None,
    name: str = "approval_gate",
    messages_key: str = "messages",
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build the approval gate: a compiled subgraph over ``messages``, added between the model and the tools.

    ``policy`` is an :class:`~langgraph_mcp.humans.policy.ApprovalPolicy`, or what
    :meth:`ApprovalPolicy.load` accepts (a JSON file path or a mapping); ``None`` means the default policy
    (ask about destructive tools, allow the rest). Tools are looked up in ``servers`` by the called name; a
    name no server publishes gets the policy's ``non_mcp`` verdict. ``agent_chat_ui=True`` (formerly ``compat``) adds LangChain's
    ``HITLRequest`` keys to each payload, expects ``{"decisions": [decision]}`` answers, and asks one call at
    a time (Agent Chat UI).

    The subgraph is compiled without a checkpointer, so it uses its parent's (``langgraph dev`` provides one
    when the gate is served on its own). ``name`` names the compiled graph (use it as the node name).
    """
    compat = agent_chat_ui_mode(agent_chat_ui, compat, "create_approval_gate")
    gate = _Gate(
        servers,
        ApprovalPolicy.load(policy) if policy is not None else ApprovalPolicy(),
        compat=compat,
        messages_key=messages_key,
    )
    messages_type = Annotated[list[AnyMessage], add_messages]
    typed_dict: Any = TypedDict  # the message key is only known at run time
    io_schema = typed_dict("ApprovalGateIO", {messages_key: messages_type})
    state_schema = typed_dict(
        "ApprovalGateState",
        {
            messages_key: messages_type,
            _REVIEWS: list[ApprovalInterrupt],
            _DECISIONS: Annotated[dict[str, Decision], _merge],
            _DENIED: Annotated[dict[str, str], _merge],
            _ALLOWED: Annotated[dict[str, GateRecord], _merge],
            _EXPIRED: Annotated[dict[str, float], _merge],
            _JUDGED: Annotated[dict[str, dict[str, Any]], _merge],
            _BINDINGS: Annotated[dict[str, DecisionBinding], _merge],
            _SHOWN: Annotated[dict[str, ToolDefinition], _merge],
        },
        total=False,
    )
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        state_schema, input_schema=io_schema, output_schema=io_schema
    )
    builder.add_node("check", RunnableCallable(gate.check, gate.acheck, name="check", trace=False))
    # No input_schema on "review" (its input is the Send payload): a node's input schema is also what its
    # conditional edge reads, and the compat-mode router after it must see the whole subgraph state.
    builder.add_node("review", RunnableCallable(gate.review, None, name="review", trace=False))
    builder.add_node("apply", RunnableCallable(gate.apply, None, name="apply", trace=False))
    builder.add_edge(START, "check")
    builder.add_conditional_edges("check", gate.route, ["review", "apply"])
    if compat:  # one review per step: route to the next call, or to apply
        builder.add_conditional_edges("review", gate.route, ["review", "apply"])
    else:  # all reviews run in one step; a branch only sees its own task's writes, so never re-route here
        builder.add_edge("review", "apply")
    builder.add_edge("apply", END)
    return builder.compile(name=name)


def route_through_gate(
    servers: McpServers,
    policy: ApprovalPolicy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    gate: str = "approval_gate",
    tools: str = "tools",
    otherwise: str = END,
    messages_key: str = "messages",
    agent_chat_ui: bool = False,
    compat: bool | None = None,
) -> RunnableCallable:
    """Conditional edge after the model: allowed calls go straight to the tool node, the rest through the gate.

    Each allowed call gets its own ``Send`` to ``tools``, carrying its turn with this edge's record of what it
    allowed (the tool node runs it only if it still resolves to that server and tool); if any call needs the
    gate (ask, deny, a tool whose owner could not be established, or calls sharing an id), the state is sent to
    ``gate`` once, in the same step; the gate judges every call again (it lets the allowed ones pass untouched,
    and they have run by the time the tool node runs after it). So an ``mcp_approval`` for one
    call and an ``mcp_elicitation`` from an allowed sibling can be pending together and be answered with one
    ``Command``. Use the same ``policy`` as the gate (the gate decides again for what it is sent). Wire::

        builder.add_conditional_edges("agent", route_through_gate(servers, policy), ["approval_gate", "tools", END])
        builder.add_edge("approval_gate", "tools")
        builder.add_conditional_edges("tools", ToolCallsDone("agent"), ["agent"])

    The gate's plain edge matters: the tool node then starts in the *next* step with the merged state and runs
    only the calls still unanswered (each as its own task). A conditional edge right after the gate would read
    the gate's own view of the messages, without the ToolMessages its sibling tasks wrote in the same step, and
    would send those calls again. :class:`~langgraph_mcp.graph.node.ToolCallsDone` returns to the model only once every
    call has its ToolMessage.

    ``agent_chat_ui=True`` (Agent Chat UI mode, formerly ``compat``; set it on the gate and the tool node too): never more than one
    interrupt pending. If any call needs the gate, only the gate runs (it asks one call at a time) and every
    call, allowed ones included, then runs in the tool node after it; otherwise all calls go to the tool node
    in **one** task, which runs them one after another. The cost: allowed calls wait for the approvals, and
    calls that would run in parallel run in sequence.
    """
    checker = _Gate(
        servers,
        ApprovalPolicy.load(policy) if policy is not None else ApprovalPolicy(),
        compat=False,
        messages_key=messages_key,
    )
    compat = agent_chat_ui_mode(agent_chat_ui, compat, "route_through_gate")

    def split(state: Any, owners: Mapping[str, Owner], config: RunnableConfig) -> Sequence[Send] | str:
        messages = messages_of(state, messages_key)
        pending = pending_calls(messages)
        if not pending or pending.ai is None:
            return otherwise
        principal = checker.policy.principal_for(config)
        direct: list[ToolCall] = []
        records: dict[str, GateRecord] = {}
        context: dict[str, dict[str, Any]] = {}
        needs_gate = bool(pending.refused)  # the gate answers calls with a duplicate or missing id
        for call in pending.runnable:  # every call, every pass: an existing record is a claim, not a verdict
            call_id = call.get("id") or ""
            owner = owners[call["name"]]
            verdict = owner_verdict(checker.policy, call, owner, principal=principal)
            if verdict.allowed:
                records[call_id] = checker.allow_record(call, owner.tool, config)
                context[call_id] = {"rule": verdict.rule, "principal": principal}
                direct.append(call)
            else:
                needs_gate = True
        if compat and needs_gate:  # the gate judges every call itself, then the tool node runs them in turn
            return [Send(gate, {messages_key: messages})]
        ai = with_audit_context(with_gate_records(pending.ai, records), context) if records else pending.ai
        messages = [ai if m is pending.ai else m for m in messages]
        turn = turn_of(messages)
        if compat and direct:  # one task: the tool node runs the calls one after another
            return [Send(tools, {messages_key: turn})]
        sends = [Send(tools, call_with_context(call, turn, messages_key, direct)) for call in direct]
        if needs_gate:
            sends.append(Send(gate, {messages_key: messages}))
        return sends or otherwise

    def route(state: Any, config: RunnableConfig) -> Sequence[Send] | str:
        return split(state, checker._owners(checker._calls(state)), config)

    async def aroute(state: Any, config: RunnableConfig) -> Sequence[Send] | str:
        return split(state, await checker._aowners(checker._calls(state)), config)

    return RunnableCallable(route, aroute, name="route_through_gate", trace=False)
