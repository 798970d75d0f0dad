"""``McpToolNode`` runs MCP tool calls as graph steps; ``route_tool_calls`` gives each call its own task.

The standard wiring is one ``Send`` per tool call (``add_conditional_edges("gate", route_tool_calls)``): each call
then has its own checkpoint namespace and interrupt id, a finished call is never re-run when a sibling resumes, and
answers can't cross between calls. Given several calls in one task, the node runs each as a LangGraph ``@task``
inside the node, which gives every call the same isolation.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp, GraphInterrupt, is_invalid_resume
from langgraph.func import task
from langgraph.store.base import BaseStore

from langgraph_mcp._compat import RunnableCallable
from langgraph_mcp.approval.audit import (
    Outcome,
    decision_record,
    decisions_heard,
    emit_decision,
    span_attributes,
)
from langgraph_mcp.approval.judge import (
    Effect,
    OnUnproven,
    Proof,
    ask_node_approval,
    prove,
    with_remembered_note,
)
from langgraph_mcp.approval.memory import genuine_entry
from langgraph_mcp.approval.once import (
    IDEMPOTENCY_META_KEY,
    approval_index,
    claim,
    execution_id,
    finish,
    idempotency_key,
)
from langgraph_mcp.approval.oversight import Oversight, apply_key, policies_for, resolve
from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.calls.call import CallTarget
from langgraph_mcp.calls.driver import run_call
from langgraph_mcp.calls.interceptors import ToolCallOutcome, call_intercepted
from langgraph_mcp.calls.observers import CallStream, ToolRun, call_span, listening, start_tool_run
from langgraph_mcp.calls.results import to_tool_message
from langgraph_mcp.catalog import McpTool, ToolResolution, args_digest
from langgraph_mcp.credentials import CALL_META
from langgraph_mcp.errors import (
    AuthorizationRequiredError,
    ConfigError,
    NoCheckpointerError,
    RequestStateRefusedError,
    ServersClosedError,
    ToolChangedError,
    ToolNotFoundError,
)
from langgraph_mcp.graph.apps import app_call_origin, attach_app, push_apps, read_app
from langgraph_mcp.graph.messages import (
    GateRecord,
    RefusedCalls,
    audit_context,
    batch_of,
    gate_records,
    is_send_payload,
    messages_of,
    pending_call,
    pending_calls,
    split_calls,
    with_batch,
)
from langgraph_mcp.graph.routing import ToolCallRouter, ToolCallsDone, note_batch, route_tool_calls
from langgraph_mcp.payloads import DecisionRecord, DecisionType
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.sign_in import MAX_SIGN_INS_PER_CALL, authorization_payload, sign_in_result
from langgraph_mcp.servers.identities import current_store
from langgraph_mcp.servers.mcp_servers import McpServers, server_access

__all__ = ["ErrorHandler", "McpToolNode", "ToolCallRouter", "ToolCallsDone", "route_tool_calls"]

_MAX_RELISTS = 3
"""How often a call is proven again when its server restarts between the proof and the send."""

ErrorHandler = bool | str | Callable[[Exception], str] | type[Exception] | tuple[type[Exception], ...]


class _Work:
    """What one node run was given: calls to run, refused groups to answer, and the gate's records."""

    def __init__(
        self,
        runnable: list[ToolCall],
        refused: list[RefusedCalls],
        ai: AIMessage | None,
        batch: list[str] | None = None,
    ) -> None:
        self.runnable = runnable
        self.refused = refused
        self.ai = ai
        """The AIMessage whose calls these are (``None`` for a bare list of calls)."""
        self.records = gate_records(ai)
        """``None`` when no approval gate judged the message; else only recorded calls may run."""
        self.audit = audit_context(ai)
        """The rule and principal each recorded call was judged with (for its ``mcp_decision`` record)."""
        own = [c.get("id") or "" for c in runnable] + [group.tool_call_id for group in refused]
        self.batch = batch if batch is not None else sorted(set(own))
        """The ids of every call sent to the tool node in this step (this task's and its siblings')."""

    def answer(self, messages_key: str, messages: list[ToolMessage]) -> dict[str, list[ToolMessage]]:
        """The node's update: ``messages`` marked with this step's batch, noted for the edge after the node
        (:func:`~langgraph_mcp.graph.routing.note_batch`); the apps among them are pushed as ``mcp_app`` UI messages
        tied to the AIMessage (:mod:`langgraph_mcp.graph.apps`)."""
        note_batch(self.batch)
        push_apps(messages, self.ai)
        return {messages_key: [with_batch(m, self.batch) for m in messages]}


class McpToolNode(RunnableCallable):
    """A graph node that runs the pending tool calls of the last AI message against MCP servers.

    Input: a state with ``messages`` (every call of the last AIMessage without a ToolMessage), or the list of tool
    calls that ``route_tool_calls`` sends. Output: ``{"messages": [ToolMessage, ...]}``.

    * Calls sharing one id, or without an id, are never run: one error ToolMessage per id says why (see
      :mod:`langgraph_mcp.graph.messages`).
    * **Every call is proven right before ``tools/call``** (:mod:`langgraph_mcp.approval.judge`): it runs only if
      ``policy`` allows it on the tool's current definition, or a decision signed by this graph's gate is bound
      to exactly this call (thread, call id, server, definition hash, arguments). Whatever reached the node is
      never a decision by itself. An unproven call is asked about with the node's own ``mcp_approval`` interrupt
      (``on_unproven="ask"``, the default) or answered with an error ToolMessage saying why (``"error"``); a
      denied one gets an error ToolMessage. Give the node the gate's policy (the default policy otherwise).
    * Unknown tool → error ToolMessage naming close matches; a name two servers publish, or whose server could
      not be listed, is never guessed. Transport failures and timeouts → error ToolMessage (``handle_tool_errors``,
      as in ``ToolNode``); LangGraph interrupts always propagate.
    * A server's questions (elicitation) become ``mcp_elicitation`` interrupts; the graph needs a checkpointer.
    * ``stream_mode="custom"`` gets the call's progress (``mcp_progress``) and the server's log messages during it
      (``mcp_log``, see :mod:`langgraph_mcp.connection.logs`).
    * ``agent_chat_ui=True`` (Agent Chat UI mode, also on the gate and ``route_through_gate``): a task's calls run
      one after another (at most one question pending, at the cost of parallelism); each question carries its
      ``HITLRequest`` card and is answered with ``{"decisions": [...]}``
      (:class:`~langgraph_mcp.questions.agent_chat_ui.QuestionShapes`); results are plain strings, since that UI
      shows a list of blocks as ``[object Object]``.
    """

    def __init__(
        self,
        servers: McpServers,
        *,
        name: str = "tools",
        messages_key: str = "messages",
        handle_tool_errors: ErrorHandler = True,
        tags: list[str] | None = None,
        agent_chat_ui: bool = False,
        policy: ApprovalPolicy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
        on_unproven: OnUnproven = "ask",
        oversight: Oversight | None = None,
    ) -> None:
        super().__init__(self._func, self._afunc, name=name, tags=tags, trace=False)
        self.servers = servers
        self._access = server_access(servers)
        self.messages_key = messages_key
        self.handle_tool_errors = handle_tool_errors
        loaded, self.shapes, self.oversight = resolve(oversight, policy, agent_chat_ui)
        self.signer = apply_key(servers, self.oversight)
        """Verifies the gate's signed decisions (the key every path over ``servers`` shares)."""
        self.explicit_policy = loaded
        """The policy given (``None``: none was, see :attr:`policies`)."""
        self.policy = loaded if loaded is not None else ApprovalPolicy()
        """What the node lets run without a decision, given explicitly (else the default policy, and see
        :attr:`policies`)."""
        if on_unproven not in ("ask", "error"):
            raise ConfigError(f"on_unproven must be 'ask' or 'error', got {on_unproven!r}")
        self.on_unproven: OnUnproven = on_unproven

    # ------------------------------------------------------------------------------------------- entry points

    def _func(self, input: Any, config: RunnableConfig) -> Any:
        work = self._work(input)
        if len(work.runnable) > 1:  # a synchronous run can't call async @tasks: each call is a sync @task
            return self._run_many_sync(work, config)
        context = contextvars.copy_context()
        return self._access.run_sync(lambda: self._afunc(input, config), context=context)

    def _run_many_sync(self, work: _Work, config: RunnableConfig) -> Any:
        refusals = [group.message() for group in work.refused]
        task_fn = cast(Any, _call_task_sync)
        if self.shapes.one_at_a_time:  # Agent Chat UI: at most one question is pending
            done = [task_fn(self, call, work, config).result() for call in work.runnable]
            return work.answer(self.messages_key, [*refusals, *done])
        futures = [task_fn(self, call, work, config) for call in work.runnable]
        outcomes: list[Any] = []
        for future in futures:
            try:
                outcomes.append(future.result())
            except BaseException as exc:
                outcomes.append(exc)
        return work.answer(self.messages_key, [*refusals, *_settled(outcomes)])

    async def _afunc(self, input: Any, config: RunnableConfig) -> Any:
        work = self._work(input)
        refusals = [group.message() for group in work.refused]
        calls = work.runnable
        if len(calls) == 1:
            message = await self._run_one(calls[0], work, config)
            return work.answer(self.messages_key, [*refusals, message])
        # Several calls in one task: each runs as its own @task, so one call's pause never re-runs a sibling.
        if self.shapes.one_at_a_time:  # Agent Chat UI: at most one question is pending
            done = [await cast(Any, _call_task)(self, call, work, config) for call in calls]
            return work.answer(self.messages_key, [*refusals, *done])
        futures = [cast(Any, _call_task)(self, call, work, config) for call in calls]
        outcomes = await asyncio.gather(*futures, return_exceptions=True)
        return work.answer(self.messages_key, [*refusals, *_settled(outcomes)])

    def _work(self, input: Any) -> _Work:
        if is_send_payload(input):  # a bare list of calls: no message, so no gate records to check
            runnable, refused = split_calls(cast(list[ToolCall], input))
            return _Work(runnable, refused, None)
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            call = cast(ToolCall, input["tool_call"])
            batch = batch_of(input)
            state = input.get("state")
            if state is None:
                runnable, refused = split_calls([call])
                return _Work(runnable, refused, None, batch)
            # this call's id only: the whole turn is split once, by the router, not again in each Send task
            pending = pending_call(messages_of(state, self.messages_key), call)
            return _Work(pending.runnable, pending.refused, pending.ai, batch)
        pending = pending_calls(messages_of(input, self.messages_key))
        return _Work(pending.runnable, pending.refused, pending.ai)

    # ------------------------------------------------------------------------------------------- one call

    async def _run_one(self, call: ToolCall, work: _Work, config: RunnableConfig) -> ToolMessage:
        """One call (see :class:`_NodeCall`). ``config`` is the node's: every call, also one run as a ``@task``, is
        a tool run under the node's run (so the calls of one node run are siblings), see :mod:`.calls.observers`."""
        return await _NodeCall(self, call, work, config).run()

    @property
    def policies(self) -> list[ApprovalPolicy]:
        """What the node judges with: the policy it was given; without one, the strictest of the default policy
        and every policy a gate, router or middleware over the same servers holds (never looser than any gate)."""
        if self.explicit_policy is not None:
            return [self.explicit_policy]
        return policies_for(self.servers)

    def _prove(self, call: ToolCall, resolution: ToolResolution, record: GateRecord | None) -> Proof:
        return prove(self.signer, self.policies, call, resolution, record, _thread_id())

    def _error_message(self, exc: Exception, name: str, call_id: str) -> ToolMessage:
        handler = self.handle_tool_errors
        if handler is False:
            raise exc
        if isinstance(handler, str):
            text = handler
        elif isinstance(handler, type | tuple):
            if not isinstance(exc, handler):
                raise exc
            text = f"Error: {exc}"
        elif callable(handler):
            text = handler(exc)
        else:
            text = f"Error: {exc}" if str(exc) else f"Error: {exc!r}"
        if isinstance(exc, RequestStateRefusedError) and exc.answers:
            # The person's answers stay in the thread, to be given again (the error names why they did not land).
            artifact = [{"type": "mcp_unsent_answers", "answers": exc.answers}]
            return ToolMessage(
                content=text, name=name, tool_call_id=call_id, status="error", artifact=artifact
            )
        return ToolMessage(content=text, name=name, tool_call_id=call_id, status="error")


class _NodeCall:
    """One tool call of one node run: proven on the tool as listed now, sent, recorded.

    A server that needs the run's principal to sign in first pauses it (``mcp_authorization``) and the call is made
    again once the sign-in is done; a server that restarted between the proof and the send makes it proven again.
    The node's own approval question is asked at most once per run, before the call."""

    def __init__(self, node: McpToolNode, call: ToolCall, work: _Work, config: RunnableConfig) -> None:
        self.node, self.call, self.work, self.config = node, call, work, config
        self.id = call.get("id") or ""
        self.name = call["name"]
        self.asker = InterruptAsker(self.id, shapes=node.shapes)
        """Who answers the call's questions, its sign-ins and the node's own approval (reads nothing until asked)."""
        self.record = work.records.get(self.id) if work.records is not None else None
        """The gate's record of the call (``None``: no gate let it through)."""
        self.approved: dict[str, Any] | None = None
        """The arguments the node's own approval question got in this run (``None``: not asked)."""
        self.approved_hash = ""
        self.proof: Proof | None = None
        """The last proof of the call (``None``: not proven yet)."""
        self.effect: Effect | None = None
        self.approved_at: int | None = None
        """Where the node's own approval was answered among the task's interrupts (kept with the claim)."""
        """What the human's answer to the node's own question did (``None``: not asked)."""
        self.principal: str | None = None

    async def run(self) -> ToolMessage:
        sign_ins = relists = 0
        while True:
            try:
                return await self._attempt()
            except AuthorizationRequiredError as needed:
                sign_ins += 1
                if sign_ins > MAX_SIGN_INS_PER_CALL:
                    return self._not_run(f"it still needed a sign-in after {MAX_SIGN_INS_PER_CALL} sign-ins")
                refused = await self._sign_in(needed)
                if refused is not None:
                    return refused
            except ToolChangedError as changed:  # nothing was sent: the server restarted under the proof
                relists += 1
                asker = self.asker
                if self.approved is not None or (
                    asker.consumed > asker.offset + sign_ins
                ):  # answered (a sign-in, which restarts the connection, is no answer about the tool)
                    return self._not_run(f"{changed.detail}; call it again to have it reviewed")
                if relists >= _MAX_RELISTS:  # it kept restarting between the check and the send
                    return self._not_run(f"{changed.detail}; call it again")

    def _not_run(self, why: str) -> ToolMessage:
        return _not_run(self.call, why)

    def _error(self, exc: Exception) -> ToolMessage:
        return ToolMessage(content=f"Error: {exc}", name=self.name, tool_call_id=self.id, status="error")

    async def _sign_in(self, needed: AuthorizationRequiredError) -> ToolMessage | None:
        """Ask the principal to sign in; ``None`` once the code is handed over, else the call's error message."""
        payload = authorization_payload(
            server=needed.server,
            authorization_url=needed.authorization_url,
            principal=needed.principal,
            scopes=needed.scopes,
            tool_call_id=self.id,
        )
        try:
            result = sign_in_result(self.asker.sign_in(self.node.shapes.sign_in(payload)))
        except NoCheckpointerError as exc:
            return self._error(exc)
        if result is None:
            return self._not_run(f"signing in to MCP server {needed.server!r} was declined")
        if result.error is not None:
            return self._not_run(
                f"the authorization server of MCP server {needed.server!r} refused the sign-in ({result.error})"
            )
        self.node._access.connections.identities.hand_over(needed.server, result)
        return None

    async def _attempt(self) -> ToolMessage:
        """One try at the call; a call this node judged by a decision, a denial or its own question gets its
        ``mcp_decision`` record once answered, built from what the node decided (never from message metadata)."""
        found: list[McpTool] = []
        with call_span(self.name) as span:
            # The call's target is held from its first use (listing) through the send (see ServerAccess.target).
            async with contextlib.AsyncExitStack() as held:
                message = await self._try_call(held, found)
            if self.judged and decisions_heard(span):  # also as its span's attributes
                decision = self._decision(found[0] if found else None, message)
                emit_decision(decision)
                if span.is_recording():
                    span.set_attributes(span_attributes(decision))
        return message

    @property
    def judged(self) -> bool:
        """Whether this call's judgement is on the record: a gate let it through, it was denied, or a human
        (now or remembered) decided it."""
        proof = self.proof
        return proof is not None and (
            self.record is not None or proof.denied or proof.decided is not None or self.effect is not None
        )

    def _who(self) -> tuple[Literal["policy", "human", "remembered"], DecisionType | None]:
        proof = self.proof
        if self.effect is not None:
            return "human", self.effect.decision["type"]
        decided = proof.decided if proof is not None else None
        if decided is None or decided["verdict"] == "allow":
            return "policy", None
        if decided["verdict"] == "remembered":
            return "remembered", "approve"
        return "human", decided["verdict"]

    def _decision(self, tool: McpTool | None, message: ToolMessage) -> DecisionRecord:
        proof = self.proof
        assert proof is not None
        decided_by, decision = self._who()
        if self.effect is not None and self.effect.message is not None:
            outcome: Outcome = self.effect.outcome
        elif proof.denied:
            outcome = "denied"
        else:
            outcome = "failed" if message.status == "error" else "ran"
        return decision_record(
            tool_call_id=self.id,
            server=tool.server if tool is not None else None,
            tool=tool.name if tool is not None else self.name,
            definition_hash=tool.definition_hash if tool is not None else None,
            verdict=proof.verdict.kind,
            decided_by=decided_by,
            rule=proof.verdict.rule,
            args=self.approved if self.approved is not None else self.call.get("args"),
            principal=self.principal,
            decision=decision,
            outcome=outcome,
        )

    async def _try_call(self, held: contextlib.AsyncExitStack, found: list[McpTool]) -> ToolMessage:
        """Prove the call on the tool as listed now (:mod:`langgraph_mcp.approval.judge`), then send it; raises
        ``ToolChangedError`` when the server restarted between the proof and the send (nothing was sent).

        The servers layer is asked once (``held`` keeps its hold to the end of the attempt): for the tool and its
        target, which carries the listing the tool was found in and is not sent once that is no longer fresh."""
        node = self.node
        try:
            resolution, target = await held.enter_async_context(node._access.target(self.name))
            tool = resolution.tool()  # the one tool; else raises: a collision, or no such tool
        except ToolNotFoundError as exc:
            return self._error(exc)
        except (GraphBubbleUp, AuthorizationRequiredError, ServersClosedError):
            raise
        except Exception as exc:
            return node._error_message(exc, self.name, self.id)
        assert target is not None  # one tool: where it goes
        found.append(tool)
        # Right before tools/call: the policy on the definition listed now, or a decision bound to this call.
        policies = node.policies
        proof = self.proof = node._prove(self.call, resolution, self.record)
        self.principal = policies[0].principal_for(self.config)
        if proof.denied:
            return self._not_run(f"the approval policy denies it ({proof.verdict.reason})")
        arguments = dict(self.call.get("args") or {})
        if not proof.proven:
            if self.approved is None:  # this run has not asked yet: ask (after any pause already made)
                approved_at = await approval_index(self._store(), _thread_id(), self.id, self._execution())
                decision = await ask_node_approval(
                    self.call,
                    tool,
                    proof,
                    policies[0],
                    shapes=node.shapes,
                    on_unproven=node.on_unproven,
                    start=self.asker.consumed,
                    approved_at=approved_at,
                )
                self.effect = decision.effect
                self.approved_at = decision.index if decision.effect is not None else None
                if decision.message is not None:
                    return decision.message
                assert decision.arguments is not None
                self.approved, self.approved_hash = decision.arguments, tool.definition_hash
                self.asker.after_approval(decision.index)
            elif self.approved_hash != tool.definition_hash:
                return self._not_run("the tool's definition changed after it was approved; call it again")
            arguments = dict(self.approved)
        once = self.effect is not None or (proof.decided is not None and proof.decided["verdict"] != "allow")
        if once:  # a decision runs its call at most once (approval/once.py)
            refused = await claim(
                self._store(), _thread_id(), self.id, self._execution(), approved_at=self.approved_at
            )
            if refused is not None:
                return self._not_run(refused)
        run = None
        if listening(self.config):  # nobody listening: no run, and nothing computed for one
            run = await start_tool_run(
                self.config,
                name=self.name,
                description=tool.description or tool.display_name,
                inputs=arguments,
                tool_call_id=self.id,
                metadata=self._run_metadata(target),
            )
        meta = CALL_META.set({IDEMPOTENCY_META_KEY: self._idempotency_key(tool, arguments)}) if once else None
        try:
            # A call the policy alone would not run ran on a human's decision (the gate's, or the node's own).
            message = await self._send(target, arguments, run, approved=not proof.by_policy)
        except BaseException as exc:  # a pause, or an error the model is not told about: the run ends with it
            if run is not None:
                await run.failed(exc, tool_call_id=self.id)
            raise
        finally:
            if meta is not None:
                CALL_META.reset(meta)
        if once:
            await finish(self._store(), _thread_id(), self.id, self._execution())
        if proof.decided is not None and proof.decided["verdict"] == "remembered":
            message = with_remembered_note(message, self._remembered(tool))
        if run is not None:
            await run.ended(message)
        return message

    def _remembered(self, tool: McpTool) -> dict[str, Any]:
        """What the package knows of the remembered approval this call ran under (its sealed entry, if the gate's
        record carries a genuine one)."""
        noted: dict[str, Any] = {
            "decided_by": "remembered",
            "rule": self.proof.verdict.rule if self.proof else "",
        }
        claimed = self.record.get("remembered") if self.record is not None else None
        entry = genuine_entry(claimed, self.node.signer.key, tool)
        if entry is not None:
            noted.update(
                scope=entry["scope"], owner=entry["owner"], rule=entry["rule"], decided_at=entry["decided_at"]
            )
        return noted

    def _idempotency_key(self, tool: McpTool, arguments: dict[str, Any]) -> str:
        """One per decision, the same in every round of its execution: the signed binding's signature, or (the
        node's own question) what was approved."""
        decided = self.proof.decided if self.proof is not None else None
        what = (
            decided["signature"]
            if decided is not None
            else f"{tool.definition_hash}:{args_digest(arguments)}"
        )
        return idempotency_key(_thread_id(), self.id, what)

    def _store(self) -> BaseStore | None:
        store = current_store()
        oversight = self.node.oversight
        return store if store is not None or oversight is None else oversight.store

    @staticmethod
    def _execution() -> str:
        try:
            return execution_id(get_config().get("configurable", {}))
        except RuntimeError:  # called outside a graph
            return ""

    async def _send(
        self, target: CallTarget, arguments: dict[str, Any], run: ToolRun | None, *, approved: bool
    ) -> ToolMessage:
        node, tool = self.node, target.tool
        stream = CallStream(self.id, tool.server, tool.name, output_delta=run.output_delta if run else None)
        interceptors = node._access.interceptors
        try:
            with stream.open():
                if interceptors:
                    result: ToolCallOutcome = await call_intercepted(
                        interceptors,
                        target,
                        arguments,
                        tool_call_id=self.id,
                        asker=self.asker,
                        progress=stream.progress,
                        approved=approved,
                    )
                else:
                    result = await run_call(
                        target,
                        arguments,
                        tool_call_id=self.id,
                        asker=self.asker,
                        progress=stream.progress,
                        approved=approved,
                    )
        except (GraphBubbleUp, AuthorizationRequiredError, ServersClosedError, ToolChangedError):
            raise
        except NoCheckpointerError as exc:
            return await self._failed(run, exc, self._error(exc))
        except Exception as exc:
            if is_invalid_resume(exc):
                raise
            return await self._failed(run, exc, node._error_message(exc, self.name, self.id))
        if isinstance(result, ToolMessage):  # an interceptor answered
            return result.model_copy(update={"tool_call_id": self.id, "name": result.name or self.name})
        message = to_tool_message(
            result,
            tool_call_id=self.id,
            name=self.name,
            routing=target.routing,
            as_text=node.shapes.text_results,  # Agent Chat UI renders only string content
        )
        # An MCP App travels with its tool's result; an app's own call brings no second copy of the app.
        if (
            tool.ui is not None
            and tool.ui["resourceUri"] is not None
            and app_call_origin(self.work.ai) is None
        ):
            app = await read_app(node.servers, tool, tool_call_id=self.id, arguments=arguments, result=result)
            if app is not None:
                message = attach_app(message, app)
        return message

    async def _failed(self, run: ToolRun | None, error: BaseException, message: ToolMessage) -> ToolMessage:
        if run is not None:  # a failure the model is told about: the call's run ends with it
            await run.failed(error, tool_call_id=self.id)
        return message

    def _run_metadata(self, target: CallTarget) -> dict[str, Any]:
        """What a call's tool run carries: the call, the server and tool, and the gate's verdict if one judged it."""
        tool = target.tool
        metadata: dict[str, Any] = {
            "tool_call_id": self.id,
            "server": tool.server,
            "mcp_tool": tool.name,
            "trusted": tool.trusted,
            "mcp_definition_hash": tool.definition_hash,
            **target.run_metadata(),
        }
        if self.record is not None and self.proof is not None:
            decided_by, decision = self._who()
            metadata.update(
                mcp_verdict=self.proof.verdict.kind,
                mcp_decided_by=decided_by,
                mcp_decision=decision,
                mcp_rule=self.proof.verdict.rule,
            )
        return metadata


def _thread_id() -> str:
    try:
        return str(get_config().get("configurable", {}).get("thread_id", ""))
    except RuntimeError:  # called outside a graph
        return ""


@task(name="mcp_tool_call")  # type: ignore[arg-type]
async def _call_task(
    node: McpToolNode, call: ToolCall, work: _Work, node_config: RunnableConfig
) -> ToolMessage:
    # ``node_config``, not ``config``: LangGraph passes a task's own config to a parameter named so.
    return await node._run_one(call, work, node_config)


@task(name="mcp_tool_call")  # type: ignore[arg-type]
def _call_task_sync(
    node: McpToolNode, call: ToolCall, work: _Work, node_config: RunnableConfig
) -> ToolMessage:
    context = contextvars.copy_context()  # this task's LangGraph config, for interrupt() inside the call
    return node._access.run_sync(lambda: node._run_one(call, work, node_config), context=context)


def _settled(outcomes: list[Any]) -> list[ToolMessage]:
    """The messages of several calls run as tasks; every call's pause is raised together, else the first error."""
    interrupts = [i for o in outcomes if isinstance(o, GraphInterrupt) for i in o.args[0]]
    if interrupts:
        raise GraphInterrupt(tuple(interrupts))
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return cast(list[ToolMessage], outcomes)


def _not_run(call: ToolCall, why: str) -> ToolMessage:
    return ToolMessage(
        content=f"Error: the call to {call['name']!r} was not run: {why}.",
        name=call["name"],
        tool_call_id=call.get("id") or "",
        status="error",
    )
