"""The ``fastmcp-tasks`` test server as a subprocess on 127.0.0.1, and readers of its own record of what ran."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2

from tests.support.helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
TASKS_SERVER = ROOT / "tests" / "support" / "servers" / "tasks_server.py"


class TasksServer:
    """One running ``tests/support/servers/tasks_server.py``: its ``url``, its event file and what it recorded."""

    def __init__(self, events: Path) -> None:
        self.events = events
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, str(TASKS_SERVER), str(self.port), str(self.events)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(self.events.parent / "tasks_server.log").open("wb"),
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def spec(self, **options: Any) -> dict[str, Any]:
        return {"transport": "http", "url": self.url, "mode": "modern", **options}

    def recorded(self, tool: str | None = None, event: str | None = None) -> list[dict[str, Any]]:
        if not self.events.exists():
            return []
        lines = [json.loads(line) for line in self.events.read_text().splitlines() if line.strip()]
        return [
            e for e in lines if (tool is None or e["tool"] == tool) and (event is None or e["event"] == event)
        ]

    def release(self) -> None:
        """Let every waiting ``crunch`` finish."""
        self.events.with_name(self.events.name + ".release").touch()


async def wait_listening(server: TasksServer, *, bound: float = 30.0) -> None:
    """Wait (bounded) until the server answers HTTP on its port."""
    with anyio.fail_after(bound):
        async with httpx2.AsyncClient() as client:
            while True:
                assert server.process is not None and server.process.poll() is None, "tasks server exited"
                try:
                    await client.get(f"http://127.0.0.1:{server.port}/")
                    return
                except httpx2.TransportError:
                    await anyio.sleep(0.05)


@contextlib.contextmanager
def tasks_server(directory: Path) -> Iterator[TasksServer]:
    server = TasksServer(directory / "tasks_events.jsonl")
    server.start()
    try:
        yield server
    finally:
        server.stop()
