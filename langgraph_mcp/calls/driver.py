"""The call driver: runs one MCP tool call to its end, pausing the graph for every round of questions (both eras).

Every pause has two ways back:

* **fast path** — the resume arrives in this process while the paused round is still live. Modern: the round's
  ``requestState`` was kept in memory (never in a checkpoint) and goes out with the answers, one round trip.
  Legacy: the call itself was kept open ("parked") inside its ``elicitation/create``, and the answer goes straight
  to it; the server sees one ordinary attempt.
* **durable path** — after a restart (of this process or of a legacy server), on another worker, after the park
  timeout, or when the server rejects a saved ``requestState``: the call is re-issued and each question is answered
  from the stored answers. Pre-question work on the server may therefore repeat; post-question work runs once.

A refused answer (one that doesn't fit its question) leaves the live round kept, so the same interrupt takes the
corrected answer and a legacy server's tool body still runs once; a fast-path call that must end for any other
reason is cancelled on the server first.

It never answers "cancel" or "decline" on the user's behalf: an abandoned legacy call is ended by cancelling its
request, with an error answer only as a fallback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, cast

import mcp.types as types
from langgraph.errors import GraphInterrupt, is_invalid_resume
from mcp import MCPError
from mcp.shared.exceptions import UrlElicitationRequiredError

from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.calls.call import CallTarget, DrivenCall
from langgraph_mcp.calls.paused import PausedRound, ProgressRelay, held_attempt, may_reissue, not_reissued
from langgraph_mcp.calls.rounds import round_questions, round_responses, sampling_requests
from langgraph_mcp.calls.sampling import answer_sampling, refused_error
from langgraph_mcp.calls.tasks import base_handle, durable_legs_here, follow_task, identity_digest, send_leg
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.failures import is_connection_lost
from langgraph_mcp.connection.legacy_calls import (
    CallHandle,
    DoneEvent,
    ElicitEvent,
    FailedEvent,
    ProgressCallback,
)
from langgraph_mcp.connection.tasks import TaskCreated
from langgraph_mcp.errors import (
    CallNotSentError,
    RequestStateRefusedError,
    ServerConnectionError,
    ServerError,
    ToolChangedError,
)
from langgraph_mcp.payloads import (
    TASK_HANDLE_TYPE,
    ElicitationAnswers,
    ElicitationRequest,
    TaskHandle,
)
from langgraph_mcp.questions.answers import to_elicit_result
from langgraph_mcp.questions.elicitation import question_key, request_from_params

STATE_ONLY_BACKOFF = (0.05, 0.1, 0.2, 0.25)
PING_TIMEOUT = 5.0
"""Seconds a parked legacy call's session gets to answer a ping before its answer is delivered."""


async def run_call(
    target: CallTarget,
    arguments: dict[str, Any],
    *,
    tool_call_id: str,
    asker: InterruptAsker | None,
    progress: ProgressCallback | None = None,
    approved: bool = False,
) -> types.CallToolResult:
    """Run the call to ``target`` to its final result, sending it again after a transport failure only as
    :func:`may_send_again` allows (``approved``: a human approved this call; ``asker``: who answers its
    questions, ``None`` when nobody can).

    A :attr:`~.call.CallTarget.checked` target is checked after connecting, before every attempt is sent: when
    the tool is no longer what the server lists (a restart, a new session), :class:`~langgraph_mcp.errors.
    ToolChangedError` is raised and nothing is sent."""
    with target.held():
        call = DrivenCall(target, arguments, tool_call_id, asker, progress, approved)
        return said_no(call, await _run(call))


def may_send_again(error: BaseException, tool: McpTool, *, approved: bool) -> bool:
    """The retry rule for a call whose request failed under it (a lost connection, a proxy's reset or its
    502/503/504): a call that provably was not sent (:class:`~langgraph_mcp.errors.CallNotSentError`: a refused
    connection, a session the server had forgotten) may always be sent again. Once it may have been sent, only a
    read-only or idempotent tool of a trusted server (an untrusted server's hints loosen nothing), and a call a
    human approved only when it is read-only; every other call fails with the "may or may not have run" error."""
    if isinstance(error, CallNotSentError):
        return True
    if not is_connection_lost(error):
        return False
    if approved:
        return tool.trusted and tool.read_only
    return tool.retry_safe


def said_no(call: DrivenCall, result: types.CallToolResult) -> types.CallToolResult:
    """``result`` saying first, in words, that the person declined (or cancelled) the call's question, when it
    failed after they did: the package knows what it answered, so this never reads the server's text, which stays
    as the detail (``The user declined the form 'register'. The server said: Error executing tool ...``)."""
    if not call.said_no or not result.is_error:
        return result
    mode, action = call.said_no[-1]
    what = "the form" if mode == "form" else "to open the URL of"
    verb = "declined" if action == "decline" else "cancelled"
    words = f"The user {verb} {what} {call.tool.name!r}" if action == "decline" or mode == "form" else ""
    if not words:  # a cancelled URL question
        words = f"The user cancelled the URL question of {call.tool.name!r}"
    content = list(result.content)
    first = content[0] if content else None
    if isinstance(first, types.TextContent) and first.text.strip():
        content[0] = first.model_copy(update={"text": f"{words}. The server said: {first.text}"})
    else:
        content.insert(0, types.TextContent(type="text", text=f"{words}."))
    return result.model_copy(update={"content": content})


async def _run(call: DrivenCall) -> types.CallToolResult:
    target, asker = call.target, call.asker
    conn, tool = target.conn, target.tool
    attempts = 0
    while True:
        # Not retried here: connecting has its own policy (restart_attempts, then one attempt per backoff period,
        # which a call waits for within its deadline); another try would only wait for the attempt after that.
        await conn.owner.client()
        try:
            if not target.listed_now():
                raise ToolChangedError(
                    tool.server,
                    f"tool {tool.name!r} is not what the server lists now (it restarted, or its listing changed); "
                    "the call was not sent",
                    tool=tool.name,
                )
            paused = asker.paused_round(target.paused) if asker is not None else None
            if paused is not None and (paused.legacy_call is not None) != conn.owner.is_legacy:
                paused = None  # kept in the other era (the server restarted as another version): start over
                call.start_over()
            if conn.owner.is_legacy:
                return await _legacy(call, paused)
            return await _modern(call, paused)
        except (GraphInterrupt, ToolChangedError):
            raise
        except Exception as exc:
            if may_send_again(exc, tool, approved=call.approved) and attempts < conn.spec.retries:
                attempts += 1
                continue
            raise


def _task_base(call: DrivenCall) -> TaskHandle:
    """What a task handle of this call holds besides the task (server, tool, call id, the credentials' digest)."""
    tool = call.tool
    digest = identity_digest(tool.server, call.target.identity.key)
    return base_handle(tool.server, tool.name, call.tool_call_id, digest)


# ------------------------------------------------------------------------------------------------ modern era


async def _modern(call: DrivenCall, paused: PausedRound | None) -> types.CallToolResult:
    conn = call.conn
    responses: dict[str, Any] | None = None
    state: str | None = None
    round_ = 0
    given: dict[
        str, Any
    ] = {}  # the person's answers so far (secret fields left out), for a refused state's error
    reissued = False
    if paused is not None:
        # Fast path: answer the live round with its saved requestState.
        raw = paused.input_requests or {}
        requests = round_questions(conn, raw)
        round_ = paused.round
        answers = await call.ask(round_, requests, paused)
        given.update(_shown_answers(requests, answers))
        responses = round_responses(conn, requests, answers, raw, await _answer_samples(call, raw))
        state = paused.request_state
    state_only_rounds = 0
    while True:
        try:
            result = await _one_leg(call, responses, state)
        except MCPError as exc:
            if exc.code == types.INVALID_PARAMS and state is not None:
                if paused is not None:
                    # The saved requestState was refused (server restarted, TTL passed): re-issue from scratch
                    # once and answer the fresh questions from the stored answers.
                    paused, responses, state, round_, reissued = None, None, None, 0, True
                    call.start_over()
                    continue
                raise _state_refused(call, exc, given, reissued=reissued) from exc
            raise
        if isinstance(result, types.CallToolResult):
            return result
        if not isinstance(result, types.InputRequiredResult):  # answered with a task (MCP Tasks)
            return await _follow(call, result)
        if not result.input_requests:
            # A state-only round: no questions, just come back with the state.
            state_only_rounds += 1
            call.check_rounds(state_only_rounds, "state-only rounds")
            await asyncio.sleep(STATE_ONLY_BACKOFF[min(state_only_rounds, len(STATE_ONLY_BACKOFF)) - 1])
            responses, state = None, result.request_state
            continue
        round_ += 1
        call.check_rounds(round_, "rounds of questions")
        raw = dict(result.input_requests)
        requests = round_questions(conn, raw)
        round_answers: ElicitationAnswers = {}
        if requests:
            live_round = PausedRound(
                legacy_call=None,
                resume_index=0,
                round=round_,
                request_state=result.request_state,
                input_requests={k: v.model_dump(mode="json", by_alias=True) for k, v in raw.items()},
            )
            round_answers = await call.ask(round_, requests, live_round)
            given.update(_shown_answers(requests, round_answers))
        responses = round_responses(conn, requests, round_answers, raw, await _answer_samples(call, raw))
        state = result.request_state


def _shown_answers(requests: dict[str, ElicitationRequest], answers: ElicitationAnswers) -> dict[str, Any]:
    """``answers`` as they may be shown again: the fields a form marks sensitive left out."""
    shown: dict[str, Any] = {}
    for key, answer in answers.items():
        request = requests.get(key)
        hidden = (
            set(request.get("sensitive", [])) if request is not None and request["mode"] == "form" else set()
        )
        content = answer.get("content")
        if isinstance(content, dict) and hidden:
            answer = cast(Any, {**answer, "content": {k: v for k, v in content.items() if k not in hidden}})
        shown[key] = answer
    return shown


def _state_refused(
    call: DrivenCall, error: MCPError, given: dict[str, Any], *, reissued: bool
) -> RequestStateRefusedError:
    """The error for a round's ``requestState`` the server refused (``-32602``), naming every cause a client can't
    tell apart and what fixes each; the answers given go with it (the error ``ToolMessage``'s artifact)."""
    tool = call.tool
    again = " again, after one re-issue of the call" if reissued else ""
    kept = "; the answers given are kept in this message's artifact" if given else ""
    detail = (
        f"the server refused the state of a round of questions of {tool.name!r}{again} (MCP error "
        f"{error.code}: {error.message}), so the answer did not reach the tool{kept}. A client cannot tell the "
        "causes apart: (1) the server runs as several replicas that do not share a requestState signing key, and "
        "the answer reached another replica than the one that asked - give every replica the same key (mcp SDK: "
        "MCPServer(..., request_state_security=RequestStateSecurity(keys=[shared_key]))) or route each client to "
        "one replica; (2) the server restarted since it asked; (3) the round's state expired (the server's "
        "request-state TTL, 10 minutes by default). After a restart or an expiry, call the tool again: it asks "
        "again"
    )
    return RequestStateRefusedError(tool.server, detail, tool=tool.name, answers=given)


async def _answer_samples(call: DrivenCall, raw: dict[str, Any]) -> dict[str, Any]:
    """The completions for a 2026-07-28 round's sampling requests (see :mod:`.sampling`); a refusal stops the
    call, since a round's answers can't carry one."""
    sampled: dict[str, Any] = {}
    for key, params in sampling_requests(raw).items():
        answer = await answer_sampling(call, params)
        if isinstance(answer, types.ErrorData):
            raise refused_error(call.conn, call.tool, answer)
        sampled[key] = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    return sampled


async def _follow(call: DrivenCall, created: TaskCreated | TaskHandle) -> types.CallToolResult:
    """Follow a task the server created for this call (now, or in an earlier run: the saved handle)."""
    if isinstance(created, TaskCreated):
        handle: TaskHandle = {
            **_task_base(call),
            "task_id": created.task_id,
            "poll_interval_ms": created.poll_interval_ms,
        }
    else:
        handle = created
        problem = _foreign_handle(call, handle)
        if problem is not None:
            detail = f"task {handle['task_id']} saved for this call {problem}; it was not polled"
            raise ServerError(call.tool.server, detail, tool=call.tool.name, message=detail)
    call.start_over()  # the task's questions are looked for from the start of the answer book
    return await follow_task(call, handle)


def _foreign_handle(call: DrivenCall, handle: TaskHandle) -> str | None:
    """Why a saved handle must not be polled by this call (``None``: it may)."""
    if handle.get("type") != TASK_HANDLE_TYPE or not handle.get("task_id"):
        return "is not a task handle"
    if (handle["server"], handle["tool"], handle["tool_call_id"]) != (
        call.tool.server,
        call.tool.name,
        call.tool_call_id,
    ):
        return f"belongs to server {handle['server']!r}, tool {handle['tool']!r}, call {handle['tool_call_id']!r}"
    if handle["identity"] != _task_base(call)["identity"]:
        return "was created with other credentials than this run sends"
    return None


async def _one_leg(
    call: DrivenCall, responses: dict[str, Any] | None, state: str | None
) -> types.CallToolResult | types.InputRequiredResult | TaskCreated | TaskHandle:
    if (
        not call.conn.owner.is_legacy
    ):  # nothing can be pushed mid-call: await it directly (no job, no event queue)

        def send() -> Awaitable[types.CallToolResult | types.InputRequiredResult | TaskCreated]:
            return call.conn.call(
                call.tool.name,
                call.arguments,
                progress=call.progress,
                input_responses=responses,
                request_state=state,
            )

        # A task handle goes into the checkpoint: a server that offers tasks, an answerable call, a durable run.
        if call.asker is not None and call.conn.offers_tasks and durable_legs_here():
            return await send_leg(send, _task_base(call), resend_safe=call.tool.read_only)
        return await send()
    handle = await call.conn.legacy.start_call(
        call.tool.name, call.arguments, progress=call.progress, input_responses=responses, request_state=state
    )
    while True:
        event = await handle.next_event(call.conn.spec.tool_timeout)
        if isinstance(event, DoneEvent):
            return event.result
        if isinstance(event, FailedEvent):
            raise event.error
        handle.reply(types.ErrorData(code=types.INVALID_REQUEST, message="unexpected elicitation"))


# ------------------------------------------------------------------------------------------------ legacy era


async def _legacy(call: DrivenCall, paused: PausedRound | None) -> types.CallToolResult:
    handle, round_, relay = await _open_legacy(call, paused)
    try:
        while True:
            event = await handle.next_event(call.conn.spec.tool_timeout)
            if isinstance(event, DoneEvent):
                assert isinstance(event.result, types.CallToolResult)
                return event.result
            if isinstance(event, FailedEvent):
                error = event.error
                if isinstance(error, MCPError) and error.code == types.URL_ELICITATION_REQUIRED:
                    return await _url_required(call, error)
                raise error
            if isinstance(event.params, types.CreateMessageRequestParams):  # a pushed sampling request
                await _answer_pushed_sample(call, handle, event.params)
                continue
            round_ += 1
            await _answer_pushed_question(call, handle, event, round_, relay)
    except (GraphInterrupt, asyncio.CancelledError):
        raise
    except BaseException as exc:
        if not is_invalid_resume(exc):  # a refused answer keeps the call parked for the corrected one
            await handle.abandon()
        raise


async def _open_legacy(
    call: DrivenCall, paused: PausedRound | None
) -> tuple[CallHandle, int, ProgressRelay | None]:
    """The call's handle, the questions it has asked so far and its progress relay: the parked call answered
    (the fast path), or a new ``tools/call``."""
    if paused is not None and paused.legacy_call is not None:
        handle = await _answer_parked(call, paused)
        if handle is not None:
            return handle, paused.round, paused.progress
    elif (
        call.asker is not None and call.asker.has_fresh_answer()
    ):  # a resume: was a parked attempt re-issued?
        await _may_reissue(call)
    relay = ProgressRelay(call.progress) if call.progress is not None else None
    return await call.conn.legacy.start_call(call.tool.name, call.arguments, progress=relay), 0, relay


async def _answer_pushed_sample(
    call: DrivenCall, handle: CallHandle, params: types.CreateMessageRequestParams
) -> None:
    try:
        sample = await answer_sampling(call, params)
    except GraphInterrupt:
        # Not parked: the resume re-issues the call and answers from the stored decision.
        await handle.abandon()
        raise
    handle.reply(cast(Any, sample))


async def _answer_pushed_question(
    call: DrivenCall, handle: CallHandle, event: ElicitEvent, round_: int, relay: ProgressRelay | None
) -> None:
    """Answer the server's ``round_``-th question from the stored answers, or pause the graph with the call parked
    inside it (the live round)."""
    call.check_rounds(round_, "questions")
    requests = _legacy_requests(call.conn.spec.question_match, event)
    live_round = PausedRound(
        legacy_call=handle,
        resume_index=0,
        round=round_,
        progress=relay,
        replayable=_replayable(call.tool),
    )
    answers = await call.ask(round_, requests, live_round)
    handle.reply(to_elicit_result(next(iter(answers.values()))))


async def _answer_parked(call: DrivenCall, paused: PausedRound) -> CallHandle | None:
    """The fast path: the call is still open inside its question, and gets its answer directly. ``None`` when the
    server went away while it was parked (the durable path then re-issues it and answers it from storage)."""
    conn, handle = call.conn, paused.legacy_call
    assert handle is not None and handle.pending_question is not None
    requests = _legacy_requests(conn.spec.question_match, handle.pending_question)
    try:
        answers = await call.ask(paused.round, requests, paused)
    except Exception as exc:
        if not (isinstance(exc, GraphInterrupt) or is_invalid_resume(exc)):
            await handle.abandon()  # the call can't go on: cancel it on the server before reporting why
        raise
    if not await _session_answers(conn, paused.connection_start):
        # This process had not noticed yet: the answer was never delivered.
        await handle.abandon()
        call.start_over()
        return None
    await conn.legacy.resume(handle)
    if paused.progress is not None:
        paused.progress.target = call.progress  # the rest of the call streams to the resumed run
    handle.reply(to_elicit_result(next(iter(answers.values()))))
    return handle


async def _may_reissue(call: DrivenCall) -> None:
    """A legacy call sent again for a question a parked attempt of it asked (its round was not found here: past the
    cap, past the park timeout, or parked on another worker): raise unless :func:`~.paused.may_reissue` allows it."""
    asker = call.asker
    assert asker is not None
    held_by = await asker.parked_question()
    if held_by is None:
        return
    # What this process did to the first attempt (ended it, and how), or where it was held open.
    first = await call.target.paused.first_attempt(asker.key)
    if first != "over":
        first = held_attempt(held_by)
    if not may_reissue(first, _replayable(call.tool)):
        why = (
            "was held open in a question that this process no longer holds (past max_parked_calls, after its "
            "park_timeout, or parked on another worker or in a process that ended)"
        )
        raise not_reissued(call.tool.server, call.tool.name, why)


def _replayable(tool: McpTool) -> bool:
    """Whether a legacy call of ``tool`` may be cancelled and re-issued: its trusted hints say it may run twice."""
    return tool.retry_safe  # trusted read-only or idempotent


async def _session_answers(conn: ServerConnection, start: int) -> bool:
    """Whether the session a parked call is open on still answers a ping (False: the server went away)."""
    try:
        # The session's ping (not Client.send_ping, deprecated for 2026-07-28): this is a legacy session.
        await conn.request(
            lambda client: client.session.send_ping(), timeout=min(PING_TIMEOUT, conn.spec.tool_timeout)
        )
    except TimeoutError:
        pass  # slow, not gone
    except Exception as exc:
        if is_connection_lost(exc) or isinstance(exc, ServerConnectionError):
            return False
    return conn.owner.starts == start


def _legacy_requests(match: Any, event: ElicitEvent) -> dict[str, ElicitationRequest]:
    params = event.params
    request = request_from_params(params)
    schema = getattr(params, "requested_schema", None)
    url = getattr(params, "url", None)
    return {question_key(params.message, schema, url, match): request}


async def _url_required(call: DrivenCall, error: MCPError) -> types.CallToolResult:
    """A legacy ``-32042``: show the URLs as one interrupt; once the user has been there, retry the call."""
    conn = call.conn
    elicitations = UrlElicitationRequiredError.from_error(error.error).elicitations
    requests: dict[str, ElicitationRequest] = {
        question_key(e.message, None, e.url, conn.spec.question_match): request_from_params(e)
        for e in elicitations
    }
    answers = await call.ask(1, requests)  # nothing stays open while the user visits the URL
    if any(answer["action"] != "accept" for answer in answers.values()):
        return types.CallToolResult(
            content=[
                types.TextContent(
                    text="The user did not complete the requested URL step; the call was not run."
                )
            ],
            is_error=True,
        )
    result = await _one_leg(call, None, None)
    assert isinstance(result, types.CallToolResult)  # a legacy call: no tasks
    return result
