"""A tool call answered with an MCP task: its handle kept in the graph's checkpoint, then polled to its end.

**Durable handle.** Inside a graph run with a checkpointer (an async run), every 2026-07-28 ``tools/call`` leg sent
to a server that offers the tasks extension is sent from a LangGraph ``@task`` (``mcp_call_leg``). LangGraph saves
a finished ``@task``'s return value as a pending write of the node's task as soon as it returns, and hands the
saved value back, without running the body, when the node runs again (after an interrupt, after a crash and
``ainvoke(None, config)``, on another worker). The leg's return value is tiny: ``{"sent": "answered"}`` for a
leg the server answered directly (its result stays in memory), or the task handle (:class:`~langgraph_mcp.payloads.
TaskHandle`: server, tool, task id, tool call id, credential identity) for a leg the server answered with a task.
LangGraph writes that value in the background and keeps no handle on the write, so before the first ``tasks/get``
the node reads the checkpoint back until the handle is there (:func:`handle_saved`, bounded): the handle is in the
checkpoint before the node waits on the task, and a node that runs again finds it and polls the same task: the ``tools/call`` is never sent again. A leg found saved as ``answered`` belongs to an
earlier run whose outcome this process never saw (a paused or crashed attempt): it is skipped, and the call goes on
as the driver's durable path always does (re-issued, questions answered from the stored answers).

**Polling** honours the server's ``pollIntervalMs`` between the server's floor and cap (``task_poll_floor``,
``task_poll_cap``), writes each status change to ``stream_mode="custom"`` (``mcp_task_status``), and is bounded
by ``tool_timeout`` per stretch of waiting (then ``tasks/cancel``, and an error result saying so).
``input_required`` becomes the same ``mcp_elicitation`` interrupt as any question (answered with the same resume
helper and validation); the answers go back with ``tasks/update``. A human's decline or cancel sends
``tasks/cancel``.

Outside a graph (``McpServers.call_tool``), in a sync run, or without a checkpointer, the task is polled in memory:
a restart then loses the handle (the server's task runs on; nothing polls it).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import mcp.types as types
from langgraph.config import get_config, get_stream_writer
from langgraph.func import task
from mcp.client.session import ClientSession

from langgraph_mcp._compat import has_checkpointer, kept_task_values, runs_async_tasks, tool_output_writer
from langgraph_mcp.calls.asker import answers_kept
from langgraph_mcp.calls.call import DrivenCall
from langgraph_mcp.calls.rounds import round_questions, round_responses
from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.failures import is_connection_lost
from langgraph_mcp.connection.tasks import (
    TERMINAL_STATUSES,
    TaskCreated,
    TaskState,
    cancel_task,
    get_task,
    task_result,
    update_task,
)
from langgraph_mcp.errors import LostAttemptError, ServerConnectionError
from langgraph_mcp.payloads import (
    TASK_HANDLE_TYPE,
    TASK_STATUS_EVENT_TYPE,
    TaskHandle,
    TaskStatusEvent,
)

__all__ = [
    "durable_legs_here",
    "false_answer",
    "follow_task",
    "identity_digest",
    "poll_delay",
    "send_leg",
]

logger = logging.getLogger(__name__)

Outcome = types.CallToolResult | types.InputRequiredResult | TaskCreated


def identity_digest(server: str, identity_key: tuple[str, Any]) -> str:
    """A digest of the credentials a call is sent with (never the secrets), saved with a task handle so the task
    is only ever polled with the credentials that created it."""
    return hashlib.sha256(f"{server}\0{identity_key[0]}\0{identity_key[1] is not None}".encode()).hexdigest()[
        :32
    ]


def durable_legs_here() -> bool:
    """Whether the legs of an answerable call to a server that offers tasks go through ``mcp_call_leg`` here (see
    the module doc): inside an async graph run with a checkpointer."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return False
    return has_checkpointer(configurable) and runs_async_tasks(configurable)


@dataclass
class _Sent:
    """What a leg sent in this process: its outcome or its error (never saved; only the marker is)."""

    outcome: Outcome | None = None
    error: Exception | None = None


@task(name="mcp_call_leg")  # type: ignore[arg-type]
async def _leg(sent: _Sent, send: Callable[[], Awaitable[Outcome]], base: TaskHandle) -> dict[str, Any]:
    try:
        outcome = await send()
    except Exception as exc:  # kept for the caller; a saved error would be raised again on every re-run
        sent.error = exc
        return {"sent": "failed"}
    sent.outcome = outcome
    if isinstance(outcome, TaskCreated):
        handle: TaskHandle = {
            **base,
            "task_id": outcome.task_id,
            "poll_interval_ms": outcome.poll_interval_ms,
        }
        return {"sent": "task", "task": handle}
    return {"sent": "answered"}


@dataclass
class _Fresh:
    """Whether this run wrote the leg's intent (``False``: an earlier run did, and the intent was restored)."""

    wrote: bool = False


@task(name="mcp_call_intent")  # type: ignore[arg-type]
async def _intent(fresh: _Fresh, base: TaskHandle) -> dict[str, Any]:
    fresh.wrote = True
    return {"intent": base["tool_call_id"], "nonce": secrets.token_hex(8)}


async def send_leg(
    send: Callable[[], Awaitable[Outcome]], base: TaskHandle, *, resend_safe: bool = False
) -> Outcome | TaskHandle:
    """Send one leg through ``mcp_call_leg``: its outcome, or the handle of a task an earlier run created.

    Before the leg is sent, its intent (``mcp_call_intent``) is in the checkpoint. A run that finds the intent of
    an earlier run but not what that run's leg got (the process ended between ``tools/call`` and the checkpoint
    write) does not send it again, unless ``resend_safe`` (a read-only tool): the call fails with a
    :class:`~langgraph_mcp.errors.LostAttemptError` that says a task may be running on the server, never a second task silently."""
    while True:
        fresh = _Fresh()
        intent = await cast(Any, _intent)(fresh, base)
        if fresh.wrote and isinstance(intent, Mapping):
            await value_saved(intent.__eq__, f"the intent of call {base['tool_call_id']}")

        def guarded(fresh: _Fresh = fresh) -> Awaitable[Outcome]:
            if not fresh.wrote and not resend_safe:
                return _lost(base)
            return send()

        sent = _Sent()
        marker = await cast(Any, _leg)(sent, guarded, base)
        if isinstance(sent.outcome, TaskCreated) and isinstance(marker, Mapping):
            await handle_saved(marker)
        if sent.outcome is not None:
            return sent.outcome
        if sent.error is not None:
            raise sent.error
        if isinstance(marker, Mapping) and marker.get("sent") == "task":
            return cast(TaskHandle, marker["task"])
        # A leg of an earlier run whose outcome this process never saw: skip it (the call goes on from here).


HANDLE_SAVE_WAIT = 10.0
"""Seconds the node waits for a new task's handle to be readable in the checkpoint before it polls the task."""


async def _lost(base: TaskHandle) -> Outcome:
    detail = (
        f"an earlier run of call {base['tool_call_id']!r} sent tools/call for {base['tool']!r} and ended before "
        "the server's answer reached the checkpoint: a task it created may still be running on the server. "
        "It was not sent again (that could start a second task); check the server, then call the tool anew"
    )
    raise LostAttemptError(base["server"], detail, tool=base["tool"])


async def handle_saved(marker: Mapping[str, Any]) -> bool:
    """Wait until the checkpoint shows ``marker`` (the leg's saved handle), so the node never waits on a task whose
    handle a crash would lose (see :func:`value_saved`). Returns whether it was seen."""
    task_id = marker.get("task", {}).get("task_id") if isinstance(marker.get("task"), Mapping) else None

    def is_handle(value: Any) -> bool:
        saved = value.get("task") if isinstance(value, Mapping) and value.get("sent") == "task" else None
        return isinstance(saved, Mapping) and saved.get("task_id") == task_id

    return await value_saved(is_handle, f"MCP task {task_id}: its handle")


async def value_saved(matches: Callable[[Any], bool], what: str) -> bool:
    """Wait until the checkpoint shows a ``@task`` value that ``matches``. LangGraph writes a finished ``@task``'s
    value in the background and keeps no handle on that write, so the node reads the checkpoint back (public
    API) until it is there. Bounded by :data:`HANDLE_SAVE_WAIT`: past it the node goes on (a warning says the
    value may not be saved). Returns whether it was seen."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANDLE_SAVE_WAIT
    delay = 0.002
    while True:
        if any(matches(value) for value in await kept_task_values(configurable)):
            return True
        if loop.time() >= deadline:
            logger.warning(
                "%s was not readable in the checkpoint within %.0f s; going on (a crash now would lose it)",
                what,
                HANDLE_SAVE_WAIT,
            )
            return False
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.1)


def base_handle(server: str, tool: str, tool_call_id: str, identity: str) -> TaskHandle:
    return {
        "type": TASK_HANDLE_TYPE,
        "server": server,
        "tool": tool,
        "task_id": "",
        "tool_call_id": tool_call_id,
        "identity": identity,
        "poll_interval_ms": None,
    }


def poll_delay(poll_interval_ms: float | None, floor: float, cap: float) -> float:
    """Seconds to wait before the next ``tasks/get``: the server's interval, kept between floor and cap."""
    wanted = poll_interval_ms / 1000 if poll_interval_ms is not None and poll_interval_ms > 0 else cap
    return min(max(wanted, floor), max(cap, floor))


class _Status:
    """Status changes of one task on the graph's custom stream (nowhere outside a graph run)."""

    def __init__(self, handle: TaskHandle) -> None:
        try:
            self._writer: Callable[[Any], None] | None = get_stream_writer()
        except (RuntimeError, KeyError):
            self._writer = None
        self._delta = tool_output_writer()
        """The call's ``tool-output-delta`` writer (``stream_mode="tools"``), when its tool run is open here."""
        self._handle = handle
        self._last: tuple[str, str | None] | None = None

    def write(self, state: TaskState) -> None:
        seen = (state.status, state.status_message)
        if (self._writer is None and self._delta is None) or seen == self._last:
            return
        self._last = seen
        event: TaskStatusEvent = {
            "type": TASK_STATUS_EVENT_TYPE,
            "tool_call_id": self._handle["tool_call_id"],
            "server": self._handle["server"],
            "tool": self._handle["tool"],
            "task_id": self._handle["task_id"],
            "status": state.status,
            "status_message": state.status_message,
        }
        if self._writer is not None:
            self._writer(event)
        if self._delta is not None:
            self._delta(event)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


async def follow_task(call: DrivenCall, handle: TaskHandle) -> types.CallToolResult:
    """Poll the task to its end and give the ``CallToolResult`` it stands for; questions become interrupts."""
    conn = call.conn
    spec = conn.spec
    task_id = handle["task_id"]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + spec.tool_timeout
    status = _Status(handle)
    interval = handle.get("poll_interval_ms")
    answered: frozenset[str] | None = None
    round_ = 0
    lost = 0
    while True:
        left = deadline - loop.time()
        if left <= 0:
            return await _out_of_time(conn, task_id)
        try:
            state = await conn.task_request(
                _getter(task_id, left),
                what="tasks/get",
                timeout=left,
            )
        except Exception as exc:
            if (is_connection_lost(exc) or isinstance(exc, ServerConnectionError)) and loop.time() < deadline:
                lost += 1  # the server restarts or the network blips: the task lives on, poll again
                await asyncio.sleep(min(spec.task_poll_cap, spec.task_poll_floor * 2**lost, max(0.0, left)))
                continue
            if isinstance(exc, TimeoutError):
                return await _out_of_time(conn, task_id)
            raise
        lost = 0
        false = false_answer(conn.name, task_id, state)
        if false is not None:  # never taken as this call's result: said as it came, and the task stopped
            await _cancel_quietly(conn, task_id)
            return _error(false)
        status.write(state)
        if state.poll_interval_ms is not None:
            interval = state.poll_interval_ms
        if state.status in TERMINAL_STATUSES:
            return task_result(state)
        if state.status == "input_required" and state.input_requests:
            keys = frozenset(state.input_requests)
            if keys != answered:  # not the round just answered (which the server may not have taken in yet)
                # Rounds answered in earlier runs count too: a task is polled again after each resume, and
                # max_elicitation_rounds holds for the call, not for one run of it.
                asker = call.asker if round_ == 0 else None
                round_ = max(round_ + 1, answers_kept(asker) if asker is not None else 0)
                try:
                    call.check_rounds(round_, "rounds of questions")
                except Exception:
                    await _cancel_quietly(conn, task_id)  # stopped here: the server's task stops too
                    raise
                raw = dict(state.input_requests)
                try:
                    requests = round_questions(conn, raw, sampling=False)  # a task can't be sampled for (yet)
                except Exception:
                    await _cancel_quietly(conn, task_id)  # a question no one here can answer: stop the task
                    raise
                answers = await call.ask(round_, requests)
                refused = [a["action"] for a in answers.values() if a["action"] != "accept"]
                if refused:
                    await conn.task_request(
                        lambda session: cancel_task(session, task_id), what="tasks/cancel"
                    )
                    return _error(
                        f"The user chose to {refused[0]} the question of task {task_id}; the task was cancelled "
                        "(tasks/cancel)."
                    )
                responses = round_responses(conn, requests, answers, raw)
                await conn.task_request(
                    _updater(task_id, responses),
                    what="tasks/update",
                )
                answered = keys
                deadline = (
                    loop.time() + spec.tool_timeout
                )  # the human's time doesn't count against the server
                continue
        delay = poll_delay(interval, spec.task_poll_floor, spec.task_poll_cap)
        await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))


def false_answer(server: str, task_id: str, state: TaskState) -> str | None:
    """What is false in a ``tasks/get`` answer about ``task_id``, in words (``None``: nothing seen): another task's
    id, a ``completed`` status with no ``result``, or a ``result`` that is no tool result."""
    said = f"Server {server!r} answered tasks/get for task {task_id!r}"
    if state.task_id != task_id:
        return (
            f"{said} with another task's id ({state.task_id!r}, status {state.status!r}); that answer was not "
            "taken as this call's result, and tasks/cancel was sent for this task."
        )
    if state.status == "completed" and state.result is None:
        return (
            f"{said} with status 'completed' with no 'result'; the call's outcome is unknown (it may have run), "
            "and no result was made up for it."
        )
    if state.status == "completed" and not _is_tool_result(state.result):
        return (
            f"{said} with status 'completed' and a 'result' that is no tool result: {str(state.result)[:200]}"
        )
    return None


def _is_tool_result(result: Any) -> bool:
    try:
        types.CallToolResult.model_validate(result)
    except Exception:
        return False
    return True


def _getter(task_id: str, bound: float) -> Callable[[ClientSession], Awaitable[TaskState]]:
    return lambda session: get_task(session, task_id, timeout=bound)


def _updater(task_id: str, responses: dict[str, Any]) -> Callable[[ClientSession], Awaitable[None]]:
    return lambda session: update_task(session, task_id, responses)


async def _out_of_time(conn: ServerConnection, task_id: str) -> types.CallToolResult:
    cancelled = await _cancel_quietly(conn, task_id)
    how = "it was cancelled (tasks/cancel)" if cancelled else "cancelling it (tasks/cancel) failed too"
    return _error(
        f"Task {task_id} on server {conn.name!r} did not finish within tool_timeout "
        f"({conn.spec.tool_timeout:g}s); {how}."
    )


async def _cancel_quietly(conn: ServerConnection, task_id: str) -> bool:
    try:
        await conn.task_request(lambda session: cancel_task(session, task_id), what="tasks/cancel")
    except Exception:
        return False
    return True
