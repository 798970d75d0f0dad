"""A ``fastmcp-tasks`` server (SEP-2663, the ``io.modelcontextprotocol/tasks`` extension) on 127.0.0.1.

Run as ``python tests/servers/tasks_server.py PORT EVENTS_FILE``; it serves streamable HTTP at ``/mcp`` and
appends one JSON line per tool-body event to ``EVENTS_FILE`` (the server's own record of what ran). Tools run as
background tasks (``task=True``, a 50 ms ``pollIntervalMs``):

* ``crunch(label)`` — waits until the file ``<EVENTS_FILE>.release`` exists (bounded at 60 s), then returns
  ``"crunched <label>"``;
* ``quick(label)`` — returns ``"quick <label>"`` at once;
* ``ask_name(greeting)`` — asks a form question (``name``), then greets (guard pattern: one leg per round);
* ``visit(url)`` — asks the user to visit a URL, then says whether they did;
* ``protocol_fault()`` — raises a JSON-RPC error inside the task, so the task ends ``failed``;
* ``direct(x)`` — not a task: answered directly.
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
from mcp.shared.exceptions import MCPError

EVENTS = Path(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TASKS_EVENTS_FILE", "/dev/null"))
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=50))

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


@mcp.tool
def direct(x: int) -> int:
    record("direct", "start")
    return x * 2


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False, log_level="warning")
