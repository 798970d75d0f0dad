"""Many workers, one database: threads paused by one worker process are resumed by another on PostgreSQL.

A LangGraph deployment keeps checkpoints in PostgreSQL and resumes a thread on whichever worker picks it up.
Each worker here is a fresh process (``tests/support/multiworker_child.py``) with its own ``McpServers`` running the
demo graph (the README's wiring: ``route_through_gate`` + ``McpToolNode`` + ``ToolCallsDone``) on
``AsyncPostgresSaver``. A run pauses with an approval (``demo_delete_file``) and an elicitation
(``demo_book_trip`` asking for a date) pending together; another worker answers both with one
``resume_command`` and finishes the run. Side effects are counted by the demo server itself
(``DEMO_EVENTS_FILE``): every committed effect happens exactly once, in the resuming worker, and the
read-only call that finished before the pause never runs again.

The database: ``LANGGRAPH_MCP_TEST_PG_DSN`` (``.ci/run`` starts a cluster and sets it), else a throwaway
cluster started here when the PostgreSQL binaries exist (``tests/support/pg_cluster.py``). Without either the tier
skips, saying why, unless ``LANGGRAPH_MCP_REQUIRE_PG=1`` (CI), where it fails instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from langgraph_mcp.examples.demo_server import build_server
from tests.support import pg_cluster
from tests.support.helpers import ERAS, HANG_GUARD, http_demo_server, process_exists, stdio_demo_spec

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
CHILD = ROOT / "tests" / "support" / "multiworker_child.py"
DATE = "2026-12-24"
REPLY_TIMEOUT = 90.0


def _unavailable(reason: str) -> None:
    if os.environ.get(pg_cluster.REQUIRE_ENV) == "1":
        pytest.fail(f"PostgreSQL tier required ({pg_cluster.REQUIRE_ENV}=1) but unavailable: {reason}")
    pytest.skip(f"PostgreSQL tier skipped: {reason}")


@pytest.fixture(scope="module")
def pg_server() -> Iterator[str]:
    """A DSN to a running PostgreSQL server: the one CI started, or a throwaway cluster for this module."""
    try:
        import langgraph.checkpoint.postgres  # noqa: F401
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        _unavailable(f"{exc.name} is not installed (pip install -e '.[test]')")
    dsn = os.environ.get(pg_cluster.DSN_ENV)
    if dsn:
        yield dsn
        return
    try:
        root, dsn = pg_cluster.start()
    except pg_cluster.PgUnavailable as exc:
        _unavailable(str(exc))
    try:
        yield dsn
    finally:
        pg_cluster.stop(root)


@pytest.fixture
def pg_dsn(pg_server: str) -> Iterator[str]:
    """A fresh database with the checkpointer's tables, dropped afterwards."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    name = f"lgmcp_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = pg_server.rsplit("/", 1)[0] + f"/{name}"
    try:
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
        yield dsn
    finally:
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class WorkerProcess:
    """A ``multiworker_child.py`` process: send it requests, await its replies by id."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            if not line.startswith(b"{"):
                continue  # not a reply (a stray log line)
            reply = json.loads(line)
            future = self.replies.pop(reply["id"], None)
            if future is not None and not future.done():
                future.set_result(reply)
        for future in self.replies.values():
            if not future.done():
                future.set_exception(
                    AssertionError(f"worker {self.proc.pid} exited ({self.proc.returncode})")
                )

    async def request(self, op: str, **fields: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.next_id] = future
        self.proc.stdin.write(json.dumps({"id": self.next_id, "op": op, **fields}).encode() + b"\n")
        await self.proc.stdin.drain()
        reply = await asyncio.wait_for(future, REPLY_TIMEOUT)
        assert "error" not in reply, f"worker {self.proc.pid}: {reply['error']}"
        return reply

    async def stop(self) -> None:
        """Close stdin (the worker closes its servers and pool, then exits); kill it if it does not."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), HANG_GUARD)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        await self.reader
        assert self.proc.returncode == 0, f"worker {self.proc.pid} exited with {self.proc.returncode}"


@contextlib.asynccontextmanager
async def workers(dsn: str, servers: dict[str, Any], count: int) -> AsyncIterator[list[WorkerProcess]]:
    """``count`` worker processes, each with its own ``McpServers`` from ``servers``; all stopped on exit."""
    started: list[WorkerProcess] = []
    try:
        for _ in range(count):
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(CHILD),
                dsn,
                json.dumps(servers),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                cwd=ROOT,
            )
            started.append(WorkerProcess(proc))
        yield started
    finally:
        results = await asyncio.gather(*(w.stop() for w in started), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result


def events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def answers_for(pending: list[dict[str, Any]], date: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a human answers after seeing ``pending``: approve every approval, give ``date`` to every question."""
    decisions = {p["tool_call_id"]: {"type": "approve"} for p in pending if p["kind"] == "approval"}
    answers = {
        p["tool_call_id"]: {key: {"action": "accept", "content": {"date": date}} for key in p["request_keys"]}
        for p in pending
        if p["kind"] == "elicitation"
    }
    return decisions, answers


def kinds(pending: list[dict[str, Any]]) -> dict[str, str]:
    return {p["tool_call_id"]: p["kind"] for p in pending}


@pytest.mark.parametrize("era", ERAS)
async def test_paused_by_one_worker_resumed_by_a_fresh_one(pg_dsn: str, tmp_path: Path, era: str) -> None:
    """Worker A pauses the demo run (approval + question pending); fresh worker B answers both and finishes. (A
    legacy question's call was held open by A, which has ended: the re-issue rule lets B send it again.)"""
    log = tmp_path / "events.jsonl"
    servers = {"demo": stdio_demo_spec(events_file=log, mode=era)}
    async with workers(pg_dsn, servers, 1) as [a]:
        paused = await a.request("start", thread="t1", calls=None)
    assert kinds(paused["pending"]) == {"call_delete_file_1": "approval", "call_book_trip_1": "elicitation"}
    assert not process_exists(a.proc.pid)

    decisions, answers = answers_for(paused["pending"], DATE)
    async with workers(pg_dsn, servers, 1) as [b]:
        done = await b.request("resume", thread="t1", calls=None, decisions=decisions, answers=answers)
    assert done["pid"] != paused["pid"]
    assert kinds(done["found"]) == kinds(paused["pending"])  # B read what A left from the database
    assert sorted(p["interrupt_id"] for p in done["found"]) == sorted(
        p["interrupt_id"] for p in paused["pending"]
    )
    assert done["pending"] == []
    assert done["tool_messages"] == {
        "call_list_files_1": ["success", "notes.txt\ntodo.txt"],
        "call_delete_file_1": ["success", "Deleted todo.txt"],
        "call_book_trip_1": ["success", f"Booked Rome on {DATE}"],
    }
    assert done["reply"].startswith("Here is what happened:")

    # What the demo servers recorded: each effect once, the finished read never re-run, every server stopped.
    record = events(log)
    commits = sorted(
        (e["tool"], e.get("path") or e.get("destination")) for e in record if e["event"] == "commit"
    )
    assert commits == [("book_trip", "Rome"), ("delete_file", "todo.txt")]
    server_pids = {e["pid"] for e in record}
    [list_pid] = [e["pid"] for e in record if e["tool"] == "list_files" and e["event"] == "enter"]
    commit_pids = {e["pid"] for e in record if e["event"] == "commit"}
    assert len(server_pids) == 2 and list_pid not in commit_pids  # A's server listed, B's server committed
    assert not any(process_exists(pid) for pid in server_pids)


@pytest.mark.parametrize("era", ERAS)
async def test_eight_threads_over_three_workers_each_resumed_elsewhere(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """8 threads paused across 3 workers sharing one HTTP server; each resumed by another worker, own answers
    (legacy: ``book_trip``, held open by its starter, which is alive, is not sent again: the re-issue rule)."""
    log = tmp_path / "events.jsonl"
    monkeypatch.setenv("DEMO_EVENTS_FILE", str(log))
    server = build_server()
    threads = {
        f"thread-{i}": {
            "file": f"t{i}.txt",
            "city": f"City{i}",
            "date": f"2027-01-{i + 10:02d}",
            "starter": i % 3,
            "resumer": (i + 1) % 3,
        }
        for i in range(8)
    }
    for spec in threads.values():
        server.workspace[spec["file"]] = "scratch\n"

    def calls(spec: dict[str, Any]) -> list[list[Any]]:
        return [
            ["list_files", {}],
            ["delete_file", {"path": spec["file"]}],
            ["book_trip", {"destination": spec["city"]}],
        ]

    async with (
        http_demo_server(server) as url,
        workers(pg_dsn, {"demo": {"url": url, "mode": era}}, 3) as pool,
    ):
        starts = await asyncio.gather(
            *(pool[s["starter"]].request("start", thread=t, calls=calls(s)) for t, s in threads.items())
        )
        for paused in starts:
            assert kinds(paused["pending"]) == {
                "call_delete_file_1": "approval",
                "call_book_trip_1": "elicitation",
            }
        assert (
            server.events.counts["book_trip.commit"] == 0 and server.events.counts["delete_file.commit"] == 0
        )

        resumes = []
        for (thread, spec), paused in zip(threads.items(), starts, strict=True):
            decisions, answers = answers_for(paused["pending"], spec["date"])
            resumes.append(
                pool[spec["resumer"]].request(
                    "resume", thread=thread, calls=calls(spec), decisions=decisions, answers=answers
                )
            )
        finished = await asyncio.gather(*resumes)
        worker_pids = [w.proc.pid for w in pool]

    booked = era == "modern"  # legacy: the re-issue rule (the first attempt is held open on the starter)
    for (thread, spec), paused, done in zip(threads.items(), starts, finished, strict=True):
        assert paused["pid"] == worker_pids[spec["starter"]] != done["pid"] == worker_pids[spec["resumer"]]
        assert done["pending"] == [], thread
        messages = done["tool_messages"]
        assert messages["call_delete_file_1"] == ["success", f"Deleted {spec['file']}"], thread
        if booked:
            assert messages["call_book_trip_1"] == ["success", f"Booked {spec['city']} on {spec['date']}"]
        else:
            status, text = messages["call_book_trip_1"]
            assert status == "error" and "first attempt may still complete" in text, thread
        assert messages["call_list_files_1"][0] == "success", thread

    record = events(log)
    commits = sorted(
        (e["tool"], e.get("path") or e.get("destination")) for e in record if e["event"] == "commit"
    )
    assert commits == sorted(
        [("delete_file", s["file"]) for s in threads.values()]
        + [("book_trip", s["city"]) for s in threads.values() if booked]
    )
    assert server.events.counts["list_files.enter"] == len(threads)  # listed before the pause, never re-run
    assert sorted(server.workspace) == ["notes.txt", "todo.txt"]
    assert not any(process_exists(pid) for pid in worker_pids)


def test_an_unavailable_database_skips_locally_and_fails_when_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Locally a missing PostgreSQL skips the tier (saying why); with LANGGRAPH_MCP_REQUIRE_PG=1 (CI) it fails."""
    monkeypatch.delenv(pg_cluster.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no initdb"):
        _unavailable("no initdb")
    monkeypatch.setenv(pg_cluster.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=r"required .* unavailable: no initdb"):
        _unavailable("no initdb")


@pytest.mark.parametrize("era", ERAS)
async def test_a_decision_proves_itself_on_another_worker_and_a_forged_or_replayed_one_on_none(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """Worker A pauses on an approval; worker B resumes it and the call runs once. Then a client copies B's
    signed decision (onto new args) or writes a forged gate record, through ``update_state`` as the model or as
    the gate, on both workers: nothing runs, each is asked about again. The workers share the signing key
    (``LANGGRAPH_MCP_APPROVAL_KEY``), so A reads B's signature as genuine and refuses it for what it binds."""
    monkeypatch.setenv("LANGGRAPH_MCP_APPROVAL_KEY", "one-secret-for-every-worker")  # the workers inherit it
    log = tmp_path / "events.jsonl"
    servers = {"demo": stdio_demo_spec(events_file=log, mode=era)}
    calls = [["delete_file", {"path": "todo.txt"}]]

    def commits() -> list[Any]:
        return [e.get("path") for e in events(log) if e["tool"] == "delete_file" and e["event"] == "commit"]

    async with workers(pg_dsn, servers, 2) as [a, b]:
        paused = await a.request("start", thread="t1", calls=calls)
        assert kinds(paused["pending"]) == {"call_delete_file_1": "approval"}
        decisions = {"call_delete_file_1": {"type": "approve"}}
        done = await b.request("resume", thread="t1", calls=calls, decisions=decisions, answers={})
        assert done["pending"] == [] and done["tool_messages"]["call_delete_file_1"][0] == "success"
        assert commits() == ["todo.txt"]  # once, on B

        # (worker, thread, how, why the tool node refuses): on t1 itself (once: it then waits) and on new threads
        notes = {"path": "notes.txt"}
        attempts = [
            (a, "t1", {"as_node": "approval_gate", "args": notes}, "its arguments are not the ones"),
            (a, "t2", {"as_node": "approval_gate"}, "it was decided on another thread"),
            (b, "t3", {"as_node": "approval_gate"}, "it was decided on another thread"),
            (a, "t4", {"as_node": "approval_gate", "forged": True}, "carries no signed decision"),
            (b, "t5", {"as_node": "approval_gate", "forged": True}, "carries no signed decision"),
            (a, "t6", {"as_node": "agent", "forged": True}, "destructiveHint"),  # the gate asks
            (b, "t7", {"as_node": "agent", "args": notes}, "destructiveHint"),
        ]
        for n, (worker, thread, how, why) in enumerate(attempts):
            out = await worker.request("forge", thread=thread, calls=[], source="t1", **how)
            assert commits() == ["todo.txt"], (n, how)
            assert len(out["pending"]) == 1, (n, how, out)
            [pending] = out["pending"]
            assert pending["kind"] == "approval" and why in pending["reason"], (n, how, pending)


async def test_parked_calls_handed_to_another_worker_give_back_their_places_on_the_first(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37 item 3, issue 36 item 4. Worker A (``max_parked_calls=3``) holds three legacy questions open;
    worker B resumes the three threads. The re-issue rule: ``book_trip`` may not run twice and its first attempts
    may still complete on A, so B fails each saying so (nothing booked). The threads have moved on: when a new
    question on A meets its cap, A reads that from the checkpoints, ends the three parked calls (the server records
    their cancellation) and pauses three new questions."""
    monkeypatch.setenv("DEMO_EVENTS_FILE", str(tmp_path / "events.jsonl"))
    server = build_server()

    def calls(city: str) -> list[list[Any]]:
        return [["book_trip", {"destination": city}]]

    spec = {"demo": None}
    async with http_demo_server(server) as url:
        spec["demo"] = {"url": url, "mode": "legacy", "max_parked_calls": 3}
        async with workers(pg_dsn, spec, 2) as [a, b]:
            first = await asyncio.gather(
                *(a.request("start", thread=f"first-{i}", calls=calls(f"City{i}")) for i in range(3))
            )
            assert all(kinds(p["pending"]) == {"call_book_trip_1": "elicitation"} for p in first)
            for i, paused in enumerate(first):
                _, answers = answers_for(paused["pending"], DATE)
                done = await b.request(
                    "resume", thread=f"first-{i}", calls=calls(f"City{i}"), answers=answers
                )
                status, text = done["tool_messages"]["call_book_trip_1"]
                assert status == "error" and "first attempt may still complete" in text, text
            assert server.events.counts["server.cancelled"] == 0  # A still holds the three open

            second = await asyncio.gather(
                *(a.request("start", thread=f"second-{i}", calls=calls(f"Town{i}")) for i in range(3))
            )
            assert all(kinds(p["pending"]) == {"call_book_trip_1": "elicitation"} for p in second)
            assert server.events.counts["server.cancelled"] == 3  # the handed-off ones, ended by A
            for i, paused in enumerate(second):  # and A answers its new ones on the fast path
                _, answers = answers_for(paused["pending"], DATE)
                done = await a.request(
                    "resume", thread=f"second-{i}", calls=calls(f"Town{i}"), answers=answers
                )
                assert done["tool_messages"]["call_book_trip_1"] == ["success", f"Booked Town{i} on {DATE}"]
    record = events(tmp_path / "events.jsonl")
    commits = sorted(e["destination"] for e in record if e["tool"] == "book_trip" and e["event"] == "commit")
    assert commits == ["Town0", "Town1", "Town2"]


@pytest.mark.parametrize("era", ERAS)
async def test_an_approved_call_written_again_never_runs_again_on_either_worker(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """Issue 35 item 2 with two workers on PostgreSQL: B runs the call A paused on, once; then a client writes the
    approved turn again (same call id, arguments and signed record, a new message id) on A and on B: the consumed
    marker in the shared LangGraph store refuses it on both, and the server's record shows one run."""
    from langgraph.store.postgres.aio import AsyncPostgresStore

    monkeypatch.setenv("LANGGRAPH_MCP_APPROVAL_KEY", "one-secret-for-every-worker")  # the workers inherit it
    monkeypatch.setenv("MULTIWORKER_STORE", "1")
    async with AsyncPostgresStore.from_conn_string(pg_dsn) as store:
        await store.setup()
    log = tmp_path / "events.jsonl"
    servers = {"demo": stdio_demo_spec(events_file=log, mode=era)}
    calls = [["delete_file", {"path": "todo.txt"}]]

    def runs() -> int:
        return sum(1 for e in events(log) if e["tool"] == "delete_file" and e["event"] == "enter")

    async with workers(pg_dsn, servers, 2) as [a, b]:
        paused = await a.request("start", thread="once", calls=calls)
        assert kinds(paused["pending"]) == {"call_delete_file_1": "approval"}
        decisions = {"call_delete_file_1": {"type": "approve"}}
        done = await b.request("resume", thread="once", calls=calls, decisions=decisions, answers={})
        assert done["tool_messages"]["call_delete_file_1"][0] == "success" and runs() == 1
        for worker in (a, b):
            out = await worker.request(
                "forge", thread="once", calls=[], source="once", as_node="approval_gate"
            )
            assert runs() == 1, out
            status, text = out["tool_messages"]["call_delete_file_1"]
            assert status == "error" and "at most once" in text, out


@pytest.mark.parametrize("chat_ui", [False, True], ids=["cards", "agent_chat_ui"])
@pytest.mark.parametrize("shared_key", [True, False], ids=["shared_key", "own_keys"])
@pytest.mark.parametrize("era", ERAS)
async def test_an_approved_call_paused_on_a_question_finishes_on_another_worker(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, era: str, shared_key: bool, chat_ui: bool
) -> None:
    """Issue 35 item 5 with two workers on PostgreSQL: A's call is approved, runs, and pauses on the server's
    question; B gets the answer. With the shared key B verifies A's approval and the call finishes; with a key of
    its own B cannot, and asks again with a reason that names the key to set; approved again, the call finishes.
    Never refused, never dropped, and the server's record shows one booking."""
    monkeypatch.setenv("MULTIWORKER_POLICY", json.dumps({"tools": {"demo_book_trip": "ask"}}))
    if chat_ui:
        monkeypatch.setenv("MULTIWORKER_AGENT_CHAT_UI", "1")
    if shared_key:
        monkeypatch.setenv("LANGGRAPH_MCP_APPROVAL_KEY", "one-secret-for-every-worker")
    else:
        monkeypatch.delenv("LANGGRAPH_MCP_APPROVAL_KEY", raising=False)
        monkeypatch.setenv("MULTIWORKER_OWN_KEY", "1")
    log = tmp_path / "events.jsonl"
    servers = {"demo": stdio_demo_spec(events_file=log, mode=era)}
    calls = [["book_trip", {"destination": "Rome"}]]

    def commits() -> list[Any]:
        return [
            e.get("destination") for e in events(log) if e["tool"] == "book_trip" and e["event"] == "commit"
        ]

    async with workers(pg_dsn, servers, 1) as [a]:
        paused = await a.request("start", thread="t1", calls=calls)
        assert kinds(paused["pending"]) == {"call_book_trip_1": "approval"}
        decisions, answers = answers_for(paused["pending"], DATE)
        asked = await a.request("resume", thread="t1", calls=calls, decisions=decisions, answers=answers)
        assert kinds(asked["pending"]) == {"call_book_trip_1": "elicitation"}

    async with workers(pg_dsn, servers, 1) as [b]:
        decisions, answers = answers_for(asked["pending"], DATE)
        done = await b.request("resume", thread="t1", calls=calls, decisions=decisions, answers=answers)
        if not shared_key:
            [again] = done["pending"]
            assert again["kind"] == "approval" and "LANGGRAPH_MCP_APPROVAL_KEY" in again["reason"], again
        for _ in range(3):  # approve again, answer again: until the call ends
            if not done["pending"]:
                break
            decisions, answers = answers_for(done["pending"], DATE)
            done = await b.request("resume", thread="t1", calls=calls, decisions=decisions, answers=answers)
    assert done["pending"] == []
    assert done["tool_messages"]["call_book_trip_1"] == ["success", f"Booked Rome on {DATE}"]
    assert commits() == ["Rome"]
