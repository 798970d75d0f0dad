"""A ``fastmcp-tasks`` server (SEP-2663, the ``io.modelcontextprotocol/tasks`` extension) on 127.0.0.1.

Run as ``python tests/support/servers/tasks_server.py PORT EVENTS_FILE``; it serves streamable HTTP at ``/mcp`` and
appends one JSON line per tool-body event to ``EVENTS_FILE`` (the server's own record of what ran). Tools run as
background tasks (``task=True``, a 50 ms ``pollIntervalMs``):

* ``crunch(label)`` — waits until the file ``<EVENTS_FILE>.release`` exists (bounded at 60 s), then returns
  ``"crunched <label>"``;
* ``quick(label)`` — returns ``"quick <label>"`` at once;
* ``ask_name(greeting)`` — asks a form question (``name``), then greets (guard pattern: one leg per round);
* ``visit(url)`` — asks the user to visit a URL, then says whether they did;
* ``protocol_fault()`` — raises a JSON-RPC error inside the task, so the task ends ``failed``;
* ``direct(x)`` — not a task: answered directly;
* ``ask_forever()`` — asks a new question (``q1``, ``q2``, ...) after every answer, never finishing;
* ``tell(lie)`` — returns ``"lie <lie>"``; its ``tasks/get`` then lies: ``other-task`` answers with another
  task's ``taskId`` and that task's result, ``no-result`` says ``completed`` with no ``result``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from fastmcp_tasks.extension import TasksExtension as _Extension
from fastmcp_tasks.models import GetTaskResult
from mcp.shared.exceptions import MCPError

EVENTS = Path(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TASKS_EVENTS_FILE", "/dev/null"))
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=50))

OTHER_TASK_ID = "another-task-0000"
_honest_get = _Extension._handle_get


async def _lying_get(self: Any, ctx: Any, params: Any) -> GetTaskResult:
    """``tasks/get`` as served, except for a finished ``tell`` task, whose answer lies as it asked."""
    state: GetTaskResult = await _honest_get(self, ctx, params)
    content = (state.result or {}).get("content") or [{}]
    text = content[0].get("text") if state.status == "completed" else None
    if text == "lie other-task":
        record("tell", "lied", lie="other-task", task_id=params.task_id)
        other = {"content": [{"type": "text", "text": "another task's result"}], "isError": False}
        return state.model_copy(update={"task_id": OTHER_TASK_ID, "result": other})
    if text == "lie no-result":
        record("tell", "lied", lie="no-result", task_id=params.task_id)
        return state.model_copy(update={"result": None})
    return state


_Extension._handle_get = _lying_get  # type: ignore[method-assign]

mcp = FastMCP("tasks-test")
mcp.add_extension(TasksExtension(url="memory://"))


def record(tool: str, event: str, **extra: Any) -> None:
    with EVENTS.open("a") as f:
        f.write(json.dumps({"tool": tool, "event": event, "pid": os.getpid(), **extra}) + "\n")


@mcp.tool(task=TASK)
async def crunch(label: str, ctx: Context) -> str:
    record("crunch", "start", label=label, background=ctx.is_background_task)
    release = EVENTS.with_name(EVENTS.name + ".release")
    for _ in range(1200):
        if release.exists():
            break
        await asyncio.sleep(0.05)
    record("crunch", "end", label=label)
    return f"crunched {label}"


@mcp.tool(task=TASK)
async def quick(label: str, ctx: Context) -> str:
    record("quick", "start", label=label, background=ctx.is_background_task)
    return f"quick {label}"


def _answer(ctx: Context, key: str) -> Any:
    responses = ctx.input_responses or {}
    return responses.get(key)


@mcp.tool(task=TASK)
async def ask_name(greeting: str, ctx: Context) -> Any:
    answer = _answer(ctx, "name")
    record("ask_name", "leg", answered=answer is not None)
    if answer is None:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        return mcp_types.InputRequiredResult(
            input_requests={
                "name": mcp_types.ElicitRequest(
                    params=mcp_types.ElicitRequestFormParams(
                        message="What is your name?", requested_schema=schema
                    )
                )
            }
        )
    record("ask_name", "answered", action=answer.action, content=answer.content)
    if answer.action != "accept":
        return f"no name ({answer.action})"
    return f"{greeting}, {answer.content['name']}"


@mcp.tool(task=TASK)
async def visit(url: str, ctx: Context) -> Any:
    answer = _answer(ctx, "visit")
    record("visit", "leg", answered=answer is not None)
    if answer is None:
        return mcp_types.InputRequiredResult(
            input_requests={
                "visit": mcp_types.ElicitRequest(
                    params=mcp_types.ElicitRequestURLParams(
                        message="Sign in, then come back", url=url, elicitation_id="visit-1"
                    )
                )
            }
        )
    return f"visited: {answer.action}"


@mcp.tool(task=TASK)
async def protocol_fault() -> str:
    record("protocol_fault", "start")
    raise MCPError(code=-32603, message="the backend refused the job")


@mcp.tool(task=TASK)
async def ask_forever(ctx: Context) -> Any:
    responses = ctx.input_responses or {}
    answered = max((int(key[1:]) for key in responses if key.startswith("q")), default=0)
    record("ask_forever", "leg", answered=answered)
    key = f"q{answered + 1}"
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    return mcp_types.InputRequiredResult(
        input_requests={
            key: mcp_types.ElicitRequest(
                params=mcp_types.ElicitRequestFormParams(message=f"Question {key}?", requested_schema=schema)
            )
        }
    )


@mcp.tool(task=TASK)
async def tell(lie: str) -> str:
    record("tell", "start", lie=lie)
    return f"lie {lie}"


@mcp.tool
def direct(x: int) -> int:
    record("direct", "start")
    return x * 2


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False, log_level="warning")
