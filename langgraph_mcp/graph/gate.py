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
:class:`~langgraph_mcp.policy.policy.ApprovalPolicy` for a verdict:

* ``allow`` - the call passes untouched;
* ``deny`` - the call gets an error ``ToolMessage`` carrying the reason, nobody is asked (also when the
  call would need a human but the graph has no checkpointer, or when two servers publish its name);
* ``ask`` - an ``mcp_approval`` interrupt (:class:`~langgraph_mcp.payloads.ApprovalInterrupt`) in a task of
  its own, so each paused call has its own interrupt id and one ``Command(resume={id: decision, ...})`` (see
  :func:`langgraph_mcp.questions.resume.resume_command`) answers any number of them.

The owner of a called name is established fail-closed (:mod:`langgraph_mcp.approval.owners`): if a server
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
raise ``pydantic.ValidationError`` (on an Agent Chat UI card, ``AnswerRefusedError``: the same refusal in words) and
the same interrupt stays answerable.

Subgraph layout (``name`` is the node name in the parent, ``approval_gate`` by default)::

    START -> check --(one Send per asked call)--> review --> apply -> END
                   \\------------(nothing to ask)---------/

``check`` computes the verdicts once (it is not re-run when a review resumes); every ``review`` task only adds
its own decision to a private, dict-merging channel; ``apply`` alone rewrites the ``AIMessage`` and adds the
``ToolMessage``\\s. Parallel edits of several calls of one message therefore never overwrite each other. The
private channels stay inside the subgraph: the parent only sees ``messages``.
Each node has its module: ``check`` in :mod:`~langgraph_mcp.graph.gate_check`, ``review`` in
:mod:`~langgraph_mcp.graph.gate_review`, ``apply`` (the records and ``ToolMessage``\\s it writes) in
:mod:`~langgraph_mcp.graph.gate_apply`, the private channels in :mod:`~langgraph_mcp.graph.gate_state`; the
``mcp_approval`` payload is :mod:`langgraph_mcp.questions.approval`'s. This module wires them.

With ``agent_chat_ui=True`` each payload also carries LangChain's ``HITLRequest`` keys (``action_requests`` and
``review_configs``, one item each) and is answered with ``{"decisions": [decision]}``, which is what Agent
Chat UI renders and sends; calls are then asked **one at a time**, because that UI resumes without an
interrupt id and so supports a single pending interrupt. An edit's string values are coerced by the tool's
inputSchema where unambiguous (:mod:`langgraph_mcp.questions.coercion`). Set the same switch on
:func:`route_through_gate` and :class:`~langgraph_mcp.graph.node.McpToolNode` for a whole graph with never more than
one pending interrupt.

Wired model → gate → tools, the calls of one model turn run after the whole gate is done, allowed ones
included (they are not asked about, but they wait for the answers about their siblings); route with
:func:`route_through_gate` instead to send allowed calls straight to the tools in the same step. Elicitation happens in the tool node, after the
gate: a call that passes the gate and then asks the user a question pauses again there, so a turn with both
approvals and questions takes two resumes: first the decisions, then the answers (each one ``Command``, for
any number of calls, built by :func:`~langgraph_mcp.questions.resume.resume_command`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from langgraph_mcp._compat import RunnableCallable
from langgraph_mcp.approval.judge import expiry_message, rejection_message
from langgraph_mcp.approval.oversight import Oversight, PolicyInput, apply_key, register_policy, resolve
from langgraph_mcp.approval.owners import Owner, owner_verdict
from langgraph_mcp.graph.gate_apply import apply_decisions
from langgraph_mcp.graph.gate_check import GateCheck
from langgraph_mcp.graph.gate_review import GateReview
from langgraph_mcp.graph.gate_state import gate_schemas
from langgraph_mcp.graph.messages import (
    GateRecord,
    calls_with_context,
    messages_of,
    pending_calls,
    turn_of,
    with_audit_context,
    with_gate_records,
)
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.agent_chat_ui import QuestionShapes
from langgraph_mcp.questions.approval import approval_payload
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = [
    "approval_payload",
    "create_approval_gate",
    "expiry_message",
    "rejection_message",
    "route_through_gate",
]


def _judging(
    servers: McpServers, oversight: Oversight | None, policy: PolicyInput, agent_chat_ui: bool
) -> tuple[ApprovalPolicy, QuestionShapes]:
    """The policy a gate or router judges with, and the shapes it asks in; a given policy is registered, so a tool
    node given none over the same servers is never looser
    (:func:`~langgraph_mcp.approval.oversight.policies_for`)."""
    loaded, shapes, oversight = resolve(oversight, policy, agent_chat_ui)
    apply_key(servers, oversight)
    if loaded is None:
        return ApprovalPolicy(), shapes
    register_policy(servers, loaded)
    return loaded, shapes


def create_approval_gate(
    servers: McpServers,
    policy: ApprovalPolicy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    agent_chat_ui: bool = False,
    name: str = "approval_gate",
    messages_key: str = "messages",
    oversight: Oversight | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build the approval gate: a compiled subgraph over ``messages``, added between the model and the tools.

    ``policy`` is an :class:`~langgraph_mcp.policy.policy.ApprovalPolicy`, or what
    :meth:`ApprovalPolicy.load` accepts (a JSON file path or a mapping); ``None`` means the default policy
    (ask about destructive tools, allow the rest). Tools are looked up in ``servers`` by the called name; a
    name no server publishes gets the policy's ``non_mcp`` verdict. ``agent_chat_ui=True`` adds LangChain's
    ``HITLRequest`` keys to each payload, expects ``{"decisions": [decision]}`` answers, and asks one call at
    a time (Agent Chat UI).

    The subgraph is compiled without a checkpointer, so it uses its parent's (``langgraph dev`` provides one
    when the gate is served on its own). ``name`` names the compiled graph (use it as the node name).

    ``oversight`` (:class:`~langgraph_mcp.approval.oversight.Oversight`) gives the policy, key, store and Agent Chat
    UI mode at once, instead of ``policy`` and ``agent_chat_ui``. A tool node given no policy judges with this
    gate's policy too (the strictest of every gate's over the same servers): it is never looser than the gate.
    """
    judging, shapes = _judging(servers, oversight, policy, agent_chat_ui)
    gate = GateCheck(servers, judging, shapes=shapes, messages_key=messages_key)
    review = GateReview(gate)

    def apply(state: Any) -> dict[str, Any]:
        return apply_decisions(state, messages_key)

    state_schema, io_schema = gate_schemas(messages_key)
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        state_schema, input_schema=io_schema, output_schema=io_schema
    )
    builder.add_node("check", RunnableCallable(gate.check, gate.acheck, name="check", trace=False))
    # No input_schema on "review" (its input is the Send payload): a node's input schema is also what its
    # conditional edge reads, and the one-at-a-time router after it must see the whole subgraph state.
    builder.add_node("review", RunnableCallable(review.review, review.areview, name="review", trace=False))
    builder.add_node("apply", RunnableCallable(apply, None, name="apply", trace=False))
    builder.add_edge(START, "check")
    builder.add_conditional_edges("check", review.route, ["review", "apply"])
    if shapes.one_at_a_time:  # one review per step: route to the next call, or to apply
        builder.add_conditional_edges("review", review.route, ["review", "apply"])
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
    oversight: Oversight | None = None,
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

    ``agent_chat_ui=True`` (Agent Chat UI mode; set it on the gate and the tool node too): never more than one
    interrupt pending. If any call needs the gate, only the gate runs (it asks one call at a time) and every
    call, allowed ones included, then runs in the tool node after it; otherwise all calls go to the tool node
    in **one** task, which runs them one after another. The cost: allowed calls wait for the approvals, and
    calls that would run in parallel run in sequence.
    """
    judging, shapes = _judging(servers, oversight, policy, agent_chat_ui)
    checker = GateCheck(servers, judging, shapes=shapes, messages_key=messages_key)

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
        # One at a time: the gate judges every call itself, then the tool node runs them in turn.
        if shapes.one_at_a_time and needs_gate:
            return [Send(gate, {messages_key: messages})]
        ai = with_audit_context(with_gate_records(pending.ai, records), context) if records else pending.ai
        messages = [ai if m is pending.ai else m for m in messages]
        turn = turn_of(messages)
        if shapes.one_at_a_time and direct:  # one task: the tool node runs the calls one after another
            return [Send(tools, {messages_key: turn})]
        sends = [Send(tools, payload) for payload in calls_with_context(direct, turn, messages_key)]
        if needs_gate:
            sends.append(Send(gate, {messages_key: messages}))
        return sends or otherwise

    def route(state: Any, config: RunnableConfig) -> Sequence[Send] | str:
        return split(state, checker.owners(checker.calls(state)), config)

    async def aroute(state: Any, config: RunnableConfig) -> Sequence[Send] | str:
        return split(state, await checker.aowners(checker.calls(state)), config)

    return RunnableCallable(route, aroute, name="route_through_gate", trace=False)
