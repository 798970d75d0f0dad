"""The Studio graph runs on a real ``langgraph dev`` server: it pauses on an approval and a question at once.

The server serves the repository's ``langgraph.json`` unchanged (graph ``mcp_agent`` =
``./langgraph_mcp/examples/studio.py:make_graph``) from a scratch directory, as ``langgraph dev`` in its own
process group with blocking-call detection on (the default), no reload, no browser, no version check, no
analytics and no tracing: it needs no network (loopback only). Every pause is answered with one
``resume_command`` built from the interrupt dicts the SDK returns. At the end the server's process group is
killed, and the test checks that no process it started is left behind.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from langgraph_mcp.examples.scripted_model import DEMO_PROMPT, demo_call_ids
from langgraph_mcp.examples.studio import CHAT_GRAPH_ID, CHAT_TOOL_CALLS, GRAPH_ID, make_graph
from langgraph_mcp.examples.studio_servers import SERVERS
from langgraph_mcp.questions.resume import pending_interrupts, resume_command
from tests.support.helpers import wait_exit

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
STARTUP_TIMEOUT = 120.0
CALLS = demo_call_ids()  # published name -> tool call id of the scripted model's first turn
HAVE_PROC = Path("/proc/self/stat").exists()
BLOCKING_MARKERS = ("BlockingError", "Blocking call to", "identified a synchronous blocking call")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _processes() -> dict[int, tuple[int, str]]:
    """``{pid: (ppid, command line)}`` of every live process, from ``/proc`` (Linux)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, ...
        if fields[0] != "Z":
            table[int(entry.name)] = (int(fields[1]), cmdline.strip())
    return table


def _descendants(root: int) -> dict[int, str]:
    """``{pid: command line}`` of every live process below ``root``, whatever session it started."""
    table = _processes()
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, cmdline) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = cmdline
                frontier.append(pid)
    return found


def _demo_servers(root: int) -> dict[int, str]:
    return {
        pid: cmd for pid, cmd in _descendants(root).items() if "langgraph_mcp.examples.demo_server" in cmd
    }


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"langgraph dev exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)  # polling a subprocess's port from a sync fixture, not synchronizing tasks
    pytest.fail(
        f"langgraph dev did not answer on {url} within {STARTUP_TIMEOUT:g}s:\n{log.read_text()[-4000:]}"
    )


@dataclass(frozen=True)
class DevServer:
    url: str
    pid: int
    log: Path
    events: Path

    def events_since(self, mark: int) -> list[dict[str, Any]]:
        """The demo server's events (its own record, one JSON line each) logged after line ``mark``."""
        lines = self.events.read_text().splitlines() if self.events.exists() else []
        return [json.loads(line) for line in lines[mark:] if line.strip()]

    def events_mark(self) -> int:
        return len(self.events.read_text().splitlines()) if self.events.exists() else 0

    def demo_servers(self) -> dict[int, str]:
        """Demo MCP servers the dev server has running now (each stdio server gets its own session)."""
        return _demo_servers(self.pid) if HAVE_PROC else {}

    def blocking_calls_flagged(self) -> list[str]:
        text = self.log.read_text(errors="replace")
        return [marker for marker in BLOCKING_MARKERS if marker in text]


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A ``langgraph dev`` server for the repository's ``langgraph.json``, killed (with its children) at the end."""
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli[inmem] is not installed in this environment")
    workdir = tmp_path_factory.mktemp("studio")
    log = workdir / "langgraph-dev.log"
    port = _free_port()
    env = {
        **os.environ,
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
    }
    env.pop("LANGGRAPH_ALLOW_BLOCKING", None)  # keep blockbuster on
    events = workdir / "demo-events.jsonl"
    env["DEMO_EVENTS_FILE"] = str(events)  # the demo server's own record (studio.py forwards it)
    # The server resolves langgraph.json's paths against its working directory and pickles its state to
    # ./.langgraph_api there. Serve the repository's langgraph.json, unchanged, from a scratch directory in which
    # ./langgraph_mcp is the repository's package: the checkout stays clean and concurrent runs don't collide.
    project = workdir / "project"
    project.mkdir()
    shutil.copy(ROOT / "langgraph.json", project / "langgraph.json")
    (project / "langgraph_mcp").symlink_to(ROOT / "langgraph_mcp", target_is_directory=True)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(LANGGRAPH),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=project,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = DevServer(f"http://127.0.0.1:{port}", process.pid, log, events)
    children: dict[int, str] = {}
    try:
        _wait_ready(server.url, process, log)
        yield server
    finally:
        if HAVE_PROC:
            children = _descendants(process.pid)  # before the kill: orphans lose their parent link
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        # The shared demo server runs in its own session (the SDK's stdio spawn): it leaves when its stdin closes
        # with the API process; wait (bounded, on pidfds) for that before counting what was left behind.
        for pid in children:
            with contextlib.suppress(TimeoutError, OSError):
                anyio.run(functools.partial(wait_exit, pid, bound=10.0))
        alive = _processes() if HAVE_PROC else {}
        leftovers = {pid: cmd for pid, cmd in children.items() if pid in alive and alive[pid][1] == cmd}
        for pid in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert not leftovers, f"processes left behind by langgraph dev: {leftovers}"


def _tool_results(messages: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """``{tool_call_id: (status, text)}`` of the ToolMessages in an SDK ``messages`` list."""
    results = {}
    for message in messages:
        if message["type"] != "tool":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        results[message["tool_call_id"]] = (message.get("status", "success"), content)
    return results


def test_factory_is_called_with_the_server_runtime() -> None:
    """langgraph-api passes ``runtime`` (not the config) to a factory whose parameter is a ServerRuntime."""
    factory_utils = pytest.importorskip("langgraph_api._factory_utils")
    hook = factory_utils._classify_factory(make_graph)
    assert hook is not None
    assert hook("<config>", "<runtime>") == {"runtime": "<runtime>"}


@pytest.mark.anyio
async def test_reads_reuse_one_graph_and_each_run_gets_its_own_graph_over_the_shared_servers() -> None:
    """Studio reads the graph often (schemas, drawing, state): those calls build nothing and start nothing. Each
    run gets a graph of its own; every graph uses the module's one ``McpServers`` (checked on a real server by
    ``test_many_threads_share_one_demo_server_process``)."""

    class Read:
        execution_runtime = None

    class Run:
        execution_runtime = object()

    async with make_graph(cast(Any, Read())) as first, make_graph(cast(Any, Read())) as second:
        assert first is second
    async with make_graph(cast(Any, Run())) as run_a, make_graph(cast(Any, Run())) as run_b:
        assert run_a is not run_b and run_a is not first
        assert {"agent", "approval_gate", "tools"} <= set(run_a.nodes)
    assert not SERVERS.closed  # leaving a run's context closes nothing: the next run reuses the connection


def test_repository_langgraph_json_points_at_the_factory() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    graph = config["graphs"][GRAPH_ID]
    path = graph["path"] if isinstance(graph, dict) else graph
    assert path == "./langgraph_mcp/examples/studio.py:make_graph"
    assert config["graphs"][CHAT_GRAPH_ID]["path"] == "./langgraph_mcp/examples/studio.py:make_chat_graph"
    assert config["dependencies"] == ["."]


async def _run(client: LangGraphClient, thread: str, **kwargs: Any) -> dict[str, Any]:
    """Run the Studio graph on ``thread`` to its next pause or its end; the thread's values (plus ``__interrupt__``)."""
    out = await client.runs.wait(thread, GRAPH_ID, **kwargs)
    assert isinstance(out, dict), out
    return out


def _one_shared_demo_server(server: DevServer) -> None:
    """The dev server runs at most one demo server, whatever number of runs it served (module-scope servers)."""
    if HAVE_PROC:
        running = server.demo_servers()
        assert len(running) <= 1, f"a demo server per run: {running}"


@pytest.mark.slow
@pytest.mark.anyio
async def test_graph_is_described_without_starting_an_mcp_server(studio: DevServer) -> None:
    client = get_client(url=studio.url)
    assistants = await client.assistants.search(graph_id=GRAPH_ID)
    assert assistants, f"no assistant for graph {GRAPH_ID!r}"
    assistant_id = assistants[0]["assistant_id"]

    drawn = await client.assistants.get_graph(assistant_id)
    schemas = await client.assistants.get_schemas(assistant_id)

    assert {"agent", "approval_gate", "tools"} <= {node["id"] for node in drawn["nodes"]}
    input_schema = schemas["input_schema"]
    assert input_schema is not None and "messages" in input_schema["properties"]
    assert studio.demo_servers() == {}


@pytest.mark.slow
@pytest.mark.anyio
async def test_thread_pauses_on_approval_and_question_and_one_payload_resumes_both(studio: DevServer) -> None:
    client = get_client(url=studio.url)
    thread = (await client.threads.create())["thread_id"]

    # 1. The model proposes three parallel calls. The read-only one runs; the gate asks about the destructive
    #    one; the booking call passed the policy, ran, and its server asks for a date — both pending at once.
    out = await _run(client, thread, input={"messages": [{"role": "user", "content": DEMO_PROMPT}]})
    pending = pending_interrupts(out)
    assert sorted((p.kind, p.tool_call_id) for p in pending) == [
        ("approval", CALLS["demo_delete_file"]),
        ("elicitation", CALLS["demo_book_trip"]),
    ]
    (approval,) = [p for p in pending if p.kind == "approval"]
    assert approval.approval["reason"].startswith("destructiveHint")
    (question,) = [p for p in pending if p.kind == "elicitation"]
    (request_key,) = question.elicitation["requests"]
    state = await client.threads.get_state(thread)
    assert {p.interrupt_id for p in pending_interrupts(state["interrupts"])} == {
        p.interrupt_id for p in pending
    }

    # 2. One payload, built from the thread state's interrupt dicts, approves the delete and answers the date.
    answer = {request_key: {"action": "accept", "content": {"date": "2026-12-01"}}}
    command = resume_command(
        state["interrupts"],
        decisions={CALLS["demo_delete_file"]: {"type": "approve"}},
        answers={CALLS["demo_book_trip"]: answer},
    )
    assert len(command.resume) == 2
    out = await _run(client, thread, command={"resume": command.resume})
    assert not out.get("__interrupt__")
    results = _tool_results(out["messages"])
    assert results[CALLS["demo_list_files"]][0] == "success"
    assert results[CALLS["demo_delete_file"]] == ("success", "Deleted todo.txt")
    assert results[CALLS["demo_book_trip"]] == ("success", "Booked Rome on 2026-12-01")
    assert out["messages"][-1]["type"] == "ai"
    assert "Booked Rome on 2026-12-01" in out["messages"][-1]["content"]
    assert (await client.threads.get(thread))["status"] == "idle"

    _one_shared_demo_server(studio)
    assert studio.blocking_calls_flagged() == []


async def _agent_chat_ui_turn(client: LangGraphClient, thread: str, **kwargs: Any) -> dict[str, Any]:
    """One turn as Agent Chat UI does it: stream a run, then read ``thread.interrupts``; the only interrupt
    (there must be at most one) is returned with its value, or ``{}`` when the thread is done."""
    async for _ in client.runs.stream(thread, CHAT_GRAPH_ID, stream_mode=["values"], **kwargs):
        pass
    interrupts = [i for items in (await client.threads.get(thread))["interrupts"].values() for i in items]
    assert len({i["id"] for i in interrupts}) <= 1, f"more than one pending interrupt: {interrupts}"
    if not interrupts:
        return {}
    value: dict[str, Any] = interrupts[0]["value"]
    assert len(value["action_requests"]) == len(value["review_configs"]) == 1, value  # a HITLRequest card
    return value


@pytest.mark.slow
@pytest.mark.anyio
async def test_agent_chat_ui_mode_completes_a_turn_with_bare_resumes_only(studio: DevServer) -> None:
    """The chat variant, driven exactly as Agent Chat UI drives it: ``thread.interrupts`` read, resumed with a
    bare ``{"decisions": [...]}`` (no interrupt id), edited values sent as strings."""
    client = get_client(url=studio.url)
    thread = (await client.threads.create())["thread_id"]
    ids = {f"demo_{tool}": f"call_{tool}_1" for tool, _ in CHAT_TOOL_CALLS}

    # 1. The destructive call's approval, alone (the read-only call waits for the gate in this mode).
    card = await _agent_chat_ui_turn(client, thread, input={"messages": [{"role": "user", "content": "go"}]})
    assert card["type"] == "mcp_approval" and card["tool_call_id"] == ids["demo_delete_file"]
    [request] = card["action_requests"]  # the card's Remember box: tests/questions/test_card_remember.py
    assert request["name"] == "demo_delete_file" and request["args"]["path"] == "todo.txt"
    assert request["args"]["remember"].startswith("no - type thread")
    assert request["description"].startswith(card["description"] + "\n\nNothing runs until you type")
    assert card["review_configs"][0]["allowed_decisions"] == ["edit"]  # the Decision box decides
    boxes = {**request["args"], "path": "notes.txt", "decision": "approve"}
    edited = {"type": "edit", "edited_action": {"name": "demo_delete_file", "args": boxes}}
    card = await _agent_chat_ui_turn(client, thread, command={"resume": {"decisions": [edited]}})

    # 2. The form as an editable card; every field comes back as a string, as the UI sends it.
    assert card["type"] == "mcp_elicitation" and card["tool_call_id"] == ids["demo_register"]
    assert card["review_configs"][0]["allowed_decisions"] == ["edit"]
    fields = {
        "name": "Ada Lovelace",
        "age": "36",
        "email": "ada@example.com",
        "plan": "pro",
        "newsletter": "true",
        "start": "2026-12-24",
    }
    assert set(card["action_requests"][0]["args"]) == {"how_to_answer", *fields, "decision"}
    answer = {
        "type": "edit",
        "edited_action": {"name": "demo_register", "args": {**fields, "decision": "accept"}},
    }
    card = await _agent_chat_ui_turn(client, thread, command={"resume": {"decisions": [answer]}})

    # 3. The payment page as a URL card: accept = the user visited it (it is never opened for them).
    assert card["type"] == "mcp_elicitation" and card["tool_call_id"] == ids["demo_pay_deposit"]
    shown = card["action_requests"][0]["args"]
    assert {k: v for k, v in shown.items() if k != "how_to_answer"} == {
        "message": "Please confirm the deposit of 20 EUR on the payment page.",
        "url": "https://pay.example.com/checkout/20",
        "host": "pay.example.com",
        "decision": "",
    }
    assert card["review_configs"][0]["allowed_decisions"] == ["edit"]
    accepted = {
        "type": "edit",
        "edited_action": {"name": "demo_pay_deposit", "args": {**shown, "decision": "accept"}},
    }
    assert await _agent_chat_ui_turn(client, thread, command={"resume": {"decisions": [accepted]}}) == {}

    state = await client.threads.get_state(thread)
    results = _tool_results(state["values"]["messages"])
    assert results[ids["demo_delete_file"]] == ("success", "Deleted notes.txt")
    assert results[ids["demo_list_files"]][0] == "success"
    status, registered = results[ids["demo_register"]]
    assert status == "success" and '"age": 36' in registered and '"newsletter": true' in registered
    assert '"start": "2026-12-24"' in registered
    assert results[ids["demo_pay_deposit"]] == ("success", "payment consent: accept")
    assert (await client.threads.get(thread))["status"] == "idle"
    _one_shared_demo_server(studio)
    assert studio.blocking_calls_flagged() == []


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_refused_card_answer_through_the_sdk_reads_as_words_and_stays_answerable(
    studio: DevServer,
) -> None:
    """What a client sees after a refused answer: the run's error is the refusal in words; the thread reads
    ``status="error"`` and lists no interrupts, yet the same card is still pending and answerable."""
    client = get_client(url=studio.url)
    thread = (await client.threads.create())["thread_id"]
    card = await _agent_chat_ui_turn(client, thread, input={"messages": [{"role": "user", "content": "go"}]})
    card = await _agent_chat_ui_turn(client, thread, command={"resume": {"decisions": [{"type": "approve"}]}})
    assert card["type"] == "mcp_elicitation"
    before = (await client.threads.get_state(thread))["interrupts"]
    fields = {"name": "Ada Lovelace", "email": "ada@example.com", "plan": "pro", "start": "2026-12-24"}
    bad = {"type": "edit", "edited_action": {"name": "demo_register", "args": {**fields, "age": "abc"}}}

    errors = [
        part.data
        async for part in client.runs.stream(
            thread, CHAT_GRAPH_ID, stream_mode=["values"], command={"resume": {"decisions": [bad]}}
        )
        if part.event == "error"
    ]
    assert errors == [
        {"error": "AnswerRefusedError", "message": "Age: 'abc' is not a whole number between 18 and 120"}
    ]
    after = await client.threads.get(thread)
    assert (
        after["status"] == "error" and after["interrupts"] == {}
    )  # what the SDK shows: no pending interrupt
    assert (await client.threads.get_state(thread))["interrupts"] == before  # ... but the state still has it

    good = {"type": "edit", "edited_action": {"name": "demo_register", "args": {**fields, "age": "36"}}}
    card = await _agent_chat_ui_turn(client, thread, command={"resume": {"decisions": [good]}})
    assert card["tool_call_id"] == "call_pay_deposit_1"  # the URL card comes next
    assert (
        await _agent_chat_ui_turn(client, thread, command={"resume": {"decisions": [{"type": "reject"}]}})
        == {}
    )
    results = _tool_results((await client.threads.get_state(thread))["values"]["messages"])
    assert results["call_register_1"][0] == "success" and '"age": 36' in results["call_register_1"][1]
    assert (await client.threads.get(thread))["status"] == "idle"


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_refused_approval_card_answer_through_the_sdk_reads_as_words_and_stays_answerable(
    studio: DevServer,
) -> None:
    """The approval card's refusal (a Remember box holding a word it does not offer) reaches the client as the
    decision's words, not "An internal error occurred" nor pydantic's framing; the card stays answerable."""
    client = get_client(url=studio.url)
    thread = (await client.threads.create())["thread_id"]
    card = await _agent_chat_ui_turn(client, thread, input={"messages": [{"role": "user", "content": "go"}]})
    assert card["type"] == "mcp_approval" and card["tool_call_id"] == "call_delete_file_1"
    shown = card["action_requests"][0]["args"]
    before = (await client.threads.get_state(thread))["interrupts"]
    bad = {
        "type": "edit",
        "edited_action": {
            "name": "demo_delete_file",
            "args": {**shown, "remember": "yes", "decision": "approve"},
        },
    }

    errors = [
        part.data
        async for part in client.runs.stream(
            thread, CHAT_GRAPH_ID, stream_mode=["values"], command={"resume": {"decisions": [bad]}}
        )
        if part.event == "error"
    ]
    offered = ", ".join(["no", *card["remember"]])
    assert errors == [
        {
            "error": "AnswerRefusedError",
            "message": "tool call 'call_delete_file_1' (demo_delete_file): Remember: 'yes' is not one of "
            f"{offered}; type one of them (or leave it at no)",
        }
    ]
    assert (await client.threads.get(thread))["status"] == "error"
    assert (await client.threads.get_state(thread))["interrupts"] == before  # the same card, still pending

    # The runs of this module share one demo server and its workspace: a path no test deletes, so the result
    # (the edited path, sent to the server) does not depend on the order the tests ran in.
    good = {
        "type": "edit",
        "edited_action": {
            "name": "demo_delete_file",
            "args": {**shown, "path": "drafts.txt", "decision": "approve"},
        },
    }
    card = await _agent_chat_ui_turn(client, thread, command={"resume": {"decisions": [good]}})
    assert card["type"] == "mcp_elicitation"  # the form comes next
    for _ in range(2):  # decline the form and the URL card: the turn ends
        card = await _agent_chat_ui_turn(
            client, thread, command={"resume": {"decisions": [{"type": "reject"}]}}
        )
    assert card == {}
    results = _tool_results((await client.threads.get_state(thread))["values"]["messages"])
    assert results["call_delete_file_1"] == (
        "error",
        "Error executing tool delete_file: No such file: drafts.txt",
    )
    assert (await client.threads.get(thread))["status"] == "idle"


THREADS = 4


@pytest.mark.slow
@pytest.mark.anyio
async def test_many_threads_share_one_demo_server_process(studio: DevServer) -> None:
    """Runs on several threads at once, each paused and resumed, are served by one demo server process: the
    server's own record (every tool run logs its pid) names one pid, and each side effect ran once per thread."""
    client = get_client(url=studio.url)
    mark = studio.events_mark()
    threads = [(await client.threads.create())["thread_id"] for _ in range(THREADS)]
    prompt = {"messages": [{"role": "user", "content": DEMO_PROMPT}]}

    paused = await asyncio.gather(*(_run(client, thread, input=prompt) for thread in threads))
    commands = []
    for out in paused:
        pending = pending_interrupts(out)
        assert sorted(p.kind for p in pending) == ["approval", "elicitation"]
        (question,) = [p for p in pending if p.kind == "elicitation"]
        (key,) = question.elicitation["requests"]
        commands.append(
            resume_command(
                out,
                decisions={CALLS["demo_delete_file"]: {"type": "reject", "message": "keep it"}},
                answers={
                    CALLS["demo_book_trip"]: {key: {"action": "accept", "content": {"date": "2026-12-01"}}}
                },
            )
        )
    done = await asyncio.gather(
        *(
            _run(client, thread, command={"resume": c.resume})
            for thread, c in zip(threads, commands, strict=True)
        )
    )

    for out in done:
        assert _tool_results(out["messages"])[CALLS["demo_book_trip"]] == (
            "success",
            "Booked Rome on 2026-12-01",
        )
    events = studio.events_since(mark)
    assert len({e["pid"] for e in events}) == 1, {e["pid"] for e in events}
    count = collections.Counter(f"{e['tool']}.{e['event']}" for e in events)
    assert count["list_files.enter"] == THREADS
    assert count["book_trip.commit"] == THREADS
    assert count["delete_file.enter"] == 0  # rejected: never reached the server
    if HAVE_PROC:
        assert set(studio.demo_servers()) == {events[0]["pid"]}
