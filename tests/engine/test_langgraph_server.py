"""This repository's ``langgraph.json`` on a LangGraph Server of two API processes sharing PostgreSQL and Redis.

What a deployment does: a run paused (an approval and a server's question pending together) through one API
process is resumed through another with ``langgraph_sdk``; the decision proves itself there (both processes
share ``LANGGRAPH_MCP_APPROVAL_KEY``), and every side effect happens once, as the demo MCP server records it. Each
API process keeps one demo server for all its runs (module-scope ``McpServers``), not one per run. Set-up and
how to run it: ``conftest.py`` and ``engine_setup.py`` here.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from langgraph_mcp.examples.scripted_model import DEMO_PROMPT, demo_call_ids
from langgraph_mcp.examples.studio import GRAPH_ID
from langgraph_mcp.questions.resume import pending_interrupts, resume_command
from tests.engine import engine_setup
from tests.support.helpers import wait_exit

pytestmark = pytest.mark.anyio
ROOT = engine_setup.REPO_ROOT
CALLS = demo_call_ids()
STARTUP_TIMEOUT = 120.0
DATE = "2026-12-01"
APPROVAL_KEY = "engine-tier-shared-approval-key"
HAVE_PROC = Path("/proc/self/stat").exists()


def _live() -> dict[int, tuple[int, str]]:
    """``{pid: (ppid, command line)}`` of every live (not zombie) process, from ``/proc``."""
    table: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                if fields[0] != "Z":
                    table[int(entry.name)] = (int(fields[1]), cmd)
    return table


def _children(pid: int) -> dict[int, str]:
    """``{pid: command line}`` of every live process below ``pid``."""
    table = _live()
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, cmd) in table.items():
            if ppid == parent and child not in found:
                found[child] = cmd
                frontier.append(child)
    return found


@dataclass
class ApiProcess:
    """One ``langhost serve`` process (langgraph-api, the pg runtime) serving the repository's langgraph.json."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def client(self) -> LangGraphClient:
        return get_client(url=self.url)

    def demo_servers(self) -> set[int]:
        """The demo MCP servers this process runs now (each runs in its own session, below the API process)."""
        return {pid for pid, cmd in _children(self.process.pid).items() if "examples.demo_server" in cmd}

    async def stop(self) -> None:
        """SIGTERM the process group; wait for the API process and (bounded) for its MCP servers to leave."""
        children = _children(self.process.pid) if HAVE_PROC else {}
        await anyio.to_thread.run_sync(self._terminate)
        for pid in children:  # the stdio servers run in sessions of their own: they leave when stdin closes
            with contextlib.suppress(TimeoutError, OSError):
                await wait_exit(pid)
        alive = _live() if HAVE_PROC else {}
        left = {pid: cmd for pid, cmd in children.items() if alive.get(pid, (0, ""))[1] == cmd}
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert not left, f"{self.name} left processes behind: {left}"

    def _terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@dataclass
class Engine:
    venv: Path
    database: str
    redis: str
    workdir: Path
    events: Path

    @contextlib.asynccontextmanager
    async def api(self, name: str) -> AsyncIterator[ApiProcess]:
        """Start an API process from the project root (it reads langgraph.json's graph paths from there)."""
        port = engine_setup.free_port()
        log = self.workdir / f"{name}.log"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DEMO_EVENTS_FILE": str(self.events),
            "LANGGRAPH_MCP_APPROVAL_KEY": APPROVAL_KEY,
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGSMITH_TRACING": "false",
            "LANGCHAIN_TRACING_V2": "false",
        }
        for variable in ("VIRTUAL_ENV", "LANGGRAPH_ALLOW_BLOCKING", "DATABASE_URI", "REDIS_URI"):
            env.pop(variable, None)
        argv = [
            str(self.venv / "bin" / "langhost"),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--database-uri",
            self.database,
            "--redis-uri",
            self.redis,
            "--server-log-level",
            "warning",
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        api = ApiProcess(name, f"http://127.0.0.1:{port}", process, log)
        try:
            await anyio.to_thread.run_sync(_wait_ready, api)
            yield api
        finally:
            await api.stop()

    def events_mark(self) -> int:
        return len(self.events.read_text().splitlines()) if self.events.exists() else 0

    def events_since(self, mark: int) -> list[dict[str, Any]]:
        lines = self.events.read_text().splitlines() if self.events.exists() else []
        return [json.loads(line) for line in lines[mark:] if line.strip()]


def _wait_ready(api: ApiProcess) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if api.process.poll() is not None:
            pytest.fail(f"{api.name} exited with {api.process.returncode}:\n{api.log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{api.url}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)  # polling another process's port from a sync helper, not synchronizing tasks
    pytest.fail(
        f"{api.name} did not answer on {api.url} within {STARTUP_TIMEOUT:g}s:\n{api.log.read_text()[-4000:]}"
    )


@pytest.fixture(scope="module")
def engine(engine_venv: Path, postgres: str, redis: str, tmp_path_factory: pytest.TempPathFactory) -> Engine:
    workdir = tmp_path_factory.mktemp("engine")
    return Engine(engine_venv, postgres, redis, workdir, workdir / "demo-events.jsonl")


async def _pause(client: LangGraphClient, thread: str) -> dict[str, Any]:
    out = await client.runs.wait(
        thread, GRAPH_ID, input={"messages": [{"role": "user", "content": DEMO_PROMPT}]}
    )
    assert isinstance(out, dict), out
    return out


def _answers(out: dict[str, Any], delete: dict[str, Any]) -> dict[str, Any]:
    """One resume for both pending interrupts: ``delete`` for the approval, the date for the question."""
    pending = pending_interrupts(out)
    assert sorted((p.kind, p.tool_call_id) for p in pending) == [
        ("approval", CALLS["demo_delete_file"]),
        ("elicitation", CALLS["demo_book_trip"]),
    ]
    (question,) = [p for p in pending if p.kind == "elicitation"]
    (key,) = question.elicitation["requests"]
    answer = {key: {"action": "accept", "content": {"date": DATE}}}
    command = resume_command(
        out, decisions={CALLS["demo_delete_file"]: delete}, answers={CALLS["demo_book_trip"]: answer}
    )
    return {"resume": command.resume}


def _results(out: dict[str, Any]) -> dict[str, tuple[str, str]]:
    results = {}
    for message in out["messages"]:
        if message["type"] == "tool":
            content = message["content"]
            if isinstance(content, list):
                content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
            results[message["tool_call_id"]] = (message.get("status", "success"), content)
    return results


def _counts(events: list[dict[str, Any]]) -> collections.Counter[str]:
    return collections.Counter(f"{e['tool']}.{e['event']}" for e in events)


async def test_a_run_paused_in_one_api_process_is_resumed_through_another_each_side_effect_once(
    engine: Engine,
) -> None:
    """The pause happens in A (the only process up); A stops; B, a fresh process on the same PostgreSQL and
    Redis, shows the same interrupts and finishes the run: the approved delete and the booking run once, in B's
    demo server; the read-only call that finished before the pause is not run again."""
    mark = engine.events_mark()
    async with engine.api("api-a") as a:
        thread = (await a.client.threads.create())["thread_id"]
        paused = await _pause(a.client, thread)
        command = _answers(paused, {"type": "approve"})
        a_servers = a.demo_servers()
    before = engine.events_since(mark)
    assert _counts(before) == _counts([e for e in before if e["pid"] in a_servers]) != {}
    assert _counts(before)["list_files.enter"] == 1

    async with engine.api("api-b") as b:
        state = await b.client.threads.get_state(thread)
        assert {i["id"] for i in state["interrupts"]} == {i["id"] for i in paused["__interrupt__"]}
        done = await b.client.runs.wait(thread, GRAPH_ID, command=command)
        assert isinstance(done, dict) and not done.get("__interrupt__"), done
        b_servers = b.demo_servers()

    results = _results(done)
    assert results[CALLS["demo_delete_file"]] == ("success", "Deleted todo.txt")
    assert results[CALLS["demo_book_trip"]] == ("success", f"Booked Rome on {DATE}")
    after = engine.events_since(mark)[len(before) :]
    assert {e["pid"] for e in after} <= b_servers and b_servers.isdisjoint(a_servers)
    counts = _counts(after)
    assert counts["delete_file.commit"] == 1 and counts["book_trip.commit"] == 1
    assert counts["list_files.enter"] == 0


THREADS = 4


async def test_threads_paused_through_one_process_and_resumed_through_the_other_one_server_each(
    engine: Engine,
) -> None:
    """Both API processes up: every thread is started through A and resumed through B (whichever process's
    queue worker runs it). Each booking commits once per thread, the rejected deletes never reach a server, and
    the runs are served by at most one demo server per API process, not one per run."""
    mark = engine.events_mark()
    async with engine.api("api-a") as a, engine.api("api-b") as b:
        threads = [(await a.client.threads.create())["thread_id"] for _ in range(THREADS)]
        paused = await asyncio.gather(*(_pause(a.client, thread) for thread in threads))
        reject = {"type": "reject", "message": "keep it"}
        done = await asyncio.gather(
            *(
                b.client.runs.wait(thread, GRAPH_ID, command=_answers(out, reject))
                for thread, out in zip(threads, paused, strict=True)
            )
        )
        servers = a.demo_servers() | b.demo_servers()

    for out in done:
        assert isinstance(out, dict) and not out.get("__interrupt__"), out
        results = _results(out)
        assert results[CALLS["demo_book_trip"]] == ("success", f"Booked Rome on {DATE}")
        assert results[CALLS["demo_delete_file"]][0] == "error"  # the rejection, in words, not a run
    events = engine.events_since(mark)
    counts = _counts(events)
    assert counts["book_trip.commit"] == THREADS
    assert counts["list_files.enter"] == THREADS
    assert counts["delete_file.enter"] == 0
    pids = {e["pid"] for e in events}
    assert pids <= servers and 1 <= len(servers) <= 2, (pids, servers)
