"""The wire of MCP Tasks (SEP-2663, the ``io.modelcontextprotocol/tasks`` extension): its shapes and its requests.

On the 2026-07-28 revision a client that advertises the extension may get a ``tools/call`` answered with a task
(``resultType: "task"``: a task id, a status, a ``pollIntervalMs``) instead of a result. The client then asks
``tasks/get`` (the task's status, with the result, the error or the questions of an ``input_required`` task
inlined), answers questions with ``tasks/update`` and may stop the task with ``tasks/cancel``. The SDK (mcp 2.3)
ships the extension mechanism (``mcp.client.extension``: an extension advertises itself and *claims* the extra
result shape of ``tools/call``) but not this extension: the shapes here follow the SEP as ``fastmcp-tasks`` serves
it (camelCase keys, flat task fields, ``resultType: "complete"`` on ``tasks/get``).

The package reads the claimed shape itself (``session.call_tool(..., allow_claimed=True)``) so that the task
handle can be saved in the graph's checkpoint before anything waits on it (see :mod:`langgraph_mcp.calls.tasks`).
The claim's own resolver, used only by a caller of the SDK's high-level ``Client.call_tool``, polls in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

import mcp.types as types
import mcp_types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict, Field

__all__ = [
    "TASKS_EXTENSION",
    "TERMINAL_STATUSES",
    "TaskCreated",
    "TaskState",
    "TasksExtension",
    "cancel_task",
    "get_task",
    "offers_tasks",
    "update_task",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension identifier a client advertises (``capabilities.extensions``) and a server offers."""

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class _TaskFields(mcp_types.Result):
    """The flat task fields every task shape carries (read from camelCase wire keys)."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    task_id: str = Field(alias="taskId")
    status: TaskStatus
    status_message: str | None = Field(default=None, alias="statusMessage")
    poll_interval_ms: float | None = Field(default=None, alias="pollIntervalMs")
    created_at: str | None = Field(default=None, alias="createdAt")
    ttl_ms: float | None = Field(default=None, alias="ttlMs")


class TaskCreated(_TaskFields):
    """A ``tools/call`` the server answered with a task (``resultType: "task"``)."""

    result_type: Literal["task"] = Field(alias="resultType")


class TaskState(_TaskFields):
    """A ``tasks/get`` answer: the task, with exactly one of ``result`` (completed), ``error`` (failed) or
    ``input_requests`` (input_required) inlined."""

    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")


class _TaskIdParams(mcp_types.RequestParams):
    task_id: str = Field(serialization_alias="taskId")


class _UpdateParams(mcp_types.RequestParams):
    task_id: str = Field(serialization_alias="taskId")
    input_responses: dict[str, Any] = Field(serialization_alias="inputResponses")


class _GetTask(mcp_types.Request[_TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskIdParams


class _UpdateTask(mcp_types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams


class _CancelTask(mcp_types.Request[_TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskIdParams


class _Ack(mcp_types.Result):
    model_config = ConfigDict(extra="allow")


async def get_task(session: ClientSession, task_id: str, *, timeout: float | None = None) -> TaskState:
    """``tasks/get``: the task's status (and its result, error or questions)."""
    request = _GetTask(params=_TaskIdParams(task_id=task_id))
    return await session.send_request(request, TaskState, request_read_timeout_seconds=timeout)


async def update_task(
    session: ClientSession, task_id: str, responses: dict[str, Any], *, timeout: float | None = None
) -> None:
    """``tasks/update``: the answers to an ``input_required`` task's questions, keyed as the server asked."""
    request = _UpdateTask(params=_UpdateParams(task_id=task_id, input_responses=responses))
    await session.send_request(request, _Ack, request_read_timeout_seconds=timeout)


async def cancel_task(session: ClientSession, task_id: str, *, timeout: float | None = None) -> None:
    """``tasks/cancel``: ask the server to stop the task (cooperative; a finished task stays as it ended)."""
    request = _CancelTask(params=_TaskIdParams(task_id=task_id))
    await session.send_request(request, _Ack, request_read_timeout_seconds=timeout)


def offers_tasks(capabilities: types.ServerCapabilities | None) -> bool:
    """Whether a server's capabilities offer the tasks extension."""
    extensions = getattr(capabilities, "extensions", None) if capabilities is not None else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def task_result(state: TaskState) -> types.CallToolResult:
    """The ``CallToolResult`` a finished task stands for: its inlined result, or an error result that says why
    there is none (failed: the server's message; cancelled: so)."""
    if state.status == "completed":
        return types.CallToolResult.model_validate(state.result or {"content": []})
    if state.status == "failed":
        message = failure_message(state)
    else:
        message = f"The server cancelled task {state.task_id}" + (
            f": {state.status_message}" if state.status_message else "."
        )
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def failure_message(state: TaskState) -> str:
    error = state.error if isinstance(state.error, dict) else {}
    message = error.get("message")
    text = message if isinstance(message, str) and message else state.status_message
    return f"The task failed on the server: {text}" if text else f"Task {state.task_id} failed on the server."


class TasksExtension(ClientExtension):
    """The client half of the tasks extension: advertises it (modern protocol only) and claims the task-shaped
    ``tools/call`` result."""

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (
            ResultClaim(
                result_type="task",
                model=TaskCreated,
                resolve=_poll_in_memory,
                protocol_versions=frozenset(MODERN_PROTOCOL_VERSIONS),
            ),
        )


async def _poll_in_memory(created: TaskCreated, ctx: ClaimContext) -> types.CallToolResult:
    """For a caller of the SDK's ``Client.call_tool`` only (the package reads task handles itself): poll to the
    end; a task that asks for input is cancelled, since no one here can answer it."""
    delay = 0.05
    while True:
        state = await get_task(ctx.session, created.task_id, timeout=ctx.read_timeout_seconds)
        if state.status in TERMINAL_STATUSES:
            return task_result(state)
        if state.status == "input_required":
            await cancel_task(ctx.session, created.task_id, timeout=ctx.read_timeout_seconds)
            text = (
                f"Task {created.task_id} asked for input, which this caller cannot answer; it was cancelled."
            )
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
        await asyncio.sleep(min(delay, (state.poll_interval_ms or 1000) / 1000))
        delay = min(delay * 2, 5.0)
