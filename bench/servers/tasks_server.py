"""A ``fastmcp-tasks`` server for ``bench/p9_tasks.py``: ``echo`` (task-capable, answered at once) and ``hold``
(task-capable, runs until the file ``<RELEASE>`` exists), with a given ``pollIntervalMs``.

Usage: ``python bench/servers/tasks_server.py PORT POLL_INTERVAL_MS RELEASE_FILE``; uvicorn's access log (one line
per HTTP request) goes to stderr.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

PORT, INTERVAL, RELEASE = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=INTERVAL))

mcp = FastMCP("bench-tasks")
mcp.add_extension(TasksExtension(url="memory://", concurrency=200))


@mcp.tool(task=TASK)
async def echo(text: str) -> str:
    return text


@mcp.tool(task=TASK)
async def hold(label: str) -> str:
    while not RELEASE.exists():
        await asyncio.sleep(0.05)
    return label


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=PORT, show_banner=False, log_level="info")
