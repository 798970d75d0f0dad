"""P13 workers: three graph workers against one, on one PostgreSQL checkpointer — tool calls per second.

A deployment scales by running more graph workers on one database. Each worker here is its own process
(``tests/support/multiworker_child.py``: the demo graph — ``build_graph``, the README's wiring with the default
policy — on ``AsyncPostgresSaver``, its own ``McpServers``), all calling one demo server over streamable HTTP in
its own process, per era. A block hands the same number of threads to one worker, then spreads as many over three
(round-robin), all requests in flight at once; each thread is one turn in which the scripted model proposes two
read-only calls (``demo_add``, ``demo_list_files``), both run, and the model answers. Reported: calls per second
for each, and per block the ratio three ÷ one (the order alternates between blocks). Every reply is checked (no
error, nothing pending, both calls ``success``) and the server's own record counts each call once.

On a machine with fewer cores than workers plus server and database, the ratio says how much of a call is
waiting (on the server, the database, the pipes) rather than this machine's CPU: it is not a cluster's scaling.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from bench.common import DEMO_ARGS, ERAS, PY, REPO, Section, Summary, http_server_process, http_spec, main
from tests.support import pg_cluster

CHILD = REPO / "tests" / "support" / "multiworker_child.py"
CALLS = [["add", {"a": 20, "b": 22}], ["list_files", {}]]
REPLY_TIMEOUT = 300.0


class Worker:
    """One graph worker process: JSON-line requests on stdin, replies by id on stdout."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            reply = json.loads(line)
            future = self.waiting.pop(reply.get("id"), None)
            if future is not None and not future.done():
                future.set_result(reply)
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(RuntimeError(f"worker {self.proc.pid} exited ({self.proc.returncode})"))

    async def request(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        rid = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[rid] = future
        self.proc.stdin.write((json.dumps({"id": rid, "op": op, **fields}) + "\n").encode())
        await self.proc.stdin.drain()
        reply = await asyncio.wait_for(future, REPLY_TIMEOUT)
        if "error" in reply:
            raise RuntimeError(f"worker {self.proc.pid}: {reply['error']}")
        return reply

    async def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # EOF: the worker closes its servers and pool, then exits
        try:
            await asyncio.wait_for(self.proc.wait(), 30)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        await self.reader


@asynccontextmanager
async def workers(dsn: str, servers: dict[str, Any], count: int) -> AsyncIterator[list[Worker]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started: list[Worker] = []
    try:
        for _ in range(count):
            proc = await asyncio.create_subprocess_exec(
                PY,
                str(CHILD),
                dsn,
                json.dumps(servers),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
                cwd=REPO,
            )
            started.append(Worker(proc))
        yield started
    finally:
        await asyncio.gather(*(w.stop() for w in started))


@contextmanager
def postgres_server() -> Iterator[str]:
    """CI's PostgreSQL (``LANGGRAPH_MCP_TEST_PG_DSN``), else a throwaway cluster for this benchmark."""
    dsn = os.environ.get(pg_cluster.DSN_ENV)
    if dsn:
        yield dsn
        return
    root, dsn = pg_cluster.start()
    try:
        yield dsn
    finally:
        pg_cluster.stop(root)


@contextmanager
def database(server: str) -> Iterator[str]:
    """A fresh database with the checkpointer's tables, dropped afterwards."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    name = f"lgmcp_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = server.rsplit("/", 1)[0] + f"/{name}"
    try:
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
        yield dsn
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def run_threads(pool: list[Worker], threads: int) -> float:
    """``threads`` one-turn threads spread round-robin over ``pool``, all in flight at once; returns seconds."""
    began = time.perf_counter()
    replies = await asyncio.gather(
        *(pool[i % len(pool)].request("start", thread=uuid.uuid4().hex, calls=CALLS) for i in range(threads))
    )
    elapsed = time.perf_counter() - began
    for reply in replies:
        assert reply["pending"] == [], reply
    return elapsed


def count_calls(events: Path) -> int:
    lines = events.read_text().splitlines() if events.exists() else []
    return sum(
        1
        for line in lines
        if (e := json.loads(line))["event"] == "enter" and e["tool"] in ("add", "list_files")
    )


async def measure_era(era: str, dsn: str, workdir: Path, threads: int, blocks: int) -> dict[str, Any]:
    events = workdir / f"events-{era}.jsonl"
    os.environ["DEMO_EVENTS_FILE"] = str(events)  # the HTTP server process inherits it
    try:
        with http_server_process(lambda port: [*DEMO_ARGS, "http", str(port)]) as url:
            servers = {"demo": http_spec(url, "auto" if era == "modern" else "legacy")}
            async with workers(dsn, servers, 3) as pool:
                # Warm-up, not measured: every worker connects, lists tools and fills its database pool.
                await run_threads(pool, threads)
                await run_threads([pool[0]], threads)
                warm = count_calls(events)
                one: list[float] = []
                three: list[float] = []
                for block in range(blocks):
                    order = [([pool[0]], one), (pool, three)]
                    for chosen, into in order if block % 2 == 0 else reversed(order):
                        seconds = await run_threads(chosen, threads)
                        into.append(threads * len(CALLS) / seconds)
                ran = count_calls(events) - warm
    finally:
        os.environ.pop("DEMO_EVENTS_FILE", None)
    expected = 2 * blocks * threads * len(CALLS)
    assert ran == expected, f"{era}: the server ran {ran} calls, {expected} were sent"
    ratios = [t / o for t, o in zip(three, one, strict=True)]
    return {
        "one_worker_calls_per_s": Summary.of(one).as_dict(),
        "three_workers_calls_per_s": Summary.of(three).as_dict(),
        "ratio": Summary.of(ratios).as_dict(),
        "threads": threads,
        "blocks": blocks,
        "calls": ran,
    }


async def measure(quick: bool) -> Section:
    threads, blocks = (12, 1) if quick else (200, 3)
    section = Section(
        "p13",
        "P13 workers: three graph workers ÷ one on one PostgreSQL checkpointer (calls/s)",
        ["era", "one worker: calls/s", "three workers: calls/s", "three ÷ one", "threads × blocks"],
    )
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as server:
        for era in ERAS:
            with database(server) as dsn:
                data = await measure_era(era, dsn, Path(tmp), threads, blocks)
            section.data[era] = data
            one, three = data["one_worker_calls_per_s"], data["three_workers_calls_per_s"]
            ratio = data["ratio"]
            section.rows.append(
                [
                    era,
                    f"{one['median']:.0f} [{one['p25']:.0f}–{one['p75']:.0f}]",
                    f"{three['median']:.0f} [{three['p25']:.0f}–{three['p75']:.0f}]",
                    f"{ratio['median']:.2f}× [{ratio['p25']:.2f}–{ratio['p75']:.2f}]",
                    f"{threads} × {blocks}",
                ]
            )
    section.notes = [
        f"{os.cpu_count()} CPUs for the workers, the demo server (streamable HTTP) and PostgreSQL together. Each "
        f"thread is one turn with {len(CALLS)} read-only calls; all threads of a block in flight at once, spread "
        "round-robin over the three workers. The server's own record counted every call once "
        f"({statistics.fmean([section.data[e]['calls'] for e in ERAS]):.0f} per era after the warm-up).",
    ]
    return section


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main(__doc__ or "", measure)
