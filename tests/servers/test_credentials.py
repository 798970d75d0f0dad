"""Per-run credentials: headers filled from each run's config reach the server, in both eras over HTTP; connections
and catalogs are kept per identity, idle identities are closed and the live ones capped."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from langgraph_mcp import (
    APPROVAL_INTERRUPT_TYPE,
    ConfigError,
    CredentialError,
    McpServers,
    McpToolNode,
    ToolCallRouter,
    create_approval_gate,
)
from langgraph_mcp.credentials import resolve_identity
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, HANG_GUARD, OpenServers, serve_asgi
from tests.support.node_support import call, one_turn_graph
from tests.support.servers.identity_server import (
    REFUSED_TOKEN,
    UNUSABLE_ADMIN_TOOL,
    Binding,
    Record,
    binding_app,
    build_identity_server,
)

pytestmark = pytest.mark.anyio
TOKEN_HEADERS = {"Authorization": "Bearer ${configurable:token}"}


@asynccontextmanager
async def identity_server(middleware: Sequence[Any] = ()) -> AsyncIterator[tuple[str, Record, Binding]]:
    srv, record = build_identity_server(middleware=middleware)
    binding = Binding()
    async with serve_asgi(binding_app(srv.streamable_http_app(), binding)) as base:
        yield f"{base}/mcp", record, binding


def whoami_graph(servers: McpServers) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START → agent (asks ``whoami`` with the run's ``run`` value) → tools → END."""

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        run = config["configurable"]["run"]
        call = {"name": "ident_whoami", "args": {"run": run}, "id": f"call-{run}", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "tools")
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=StrictSaver())


class WhoamiModel(BaseChatModel):
    """Asks ``ident_whoami`` once after a human turn, then says "done"."""

    @property
    def _llm_type(self) -> str:
        return "whoami"

    def bind_tools(self, tools: Any, **kwargs: Any) -> WhoamiModel:  # type: ignore[override]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            call = {"name": "ident_whoami", "args": {"run": "x"}, "id": "c1", "type": "tool_call"}
            reply = AIMessage("", tool_calls=[call])
        else:
            reply = AIMessage("done")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def run_config(run: int, token: str | None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": f"thread-{run}", "run": str(run)}
    if token is not None:
        configurable["token"] = token
    return {"configurable": configurable}


@pytest.mark.parametrize("mode", ERAS)
async def test_concurrent_runs_reach_the_server_with_their_own_token(
    open_servers: OpenServers, mode: str
) -> None:
    (url, record, binding) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": mode, "headers": TOKEN_HEADERS}})
    graph = whoami_graph(servers)
    runs = range(24)
    outs = await asyncio.gather(
        *(graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(i, f"tok{i % 12}")) for i in runs)
    )
    assert all(isinstance(out["messages"][-1], ToolMessage) for out in outs)
    assert all(out["messages"][-1].status == "success" for out in outs)
    seen = {c["run"]: c["authorization"] for c in record.of("whoami")}
    assert seen == {str(i): f"Bearer tok{i % 12}" for i in runs}
    # Each token listed tools with its own credentials, too.
    assert server_access(servers).connections.live_identities("ident") == 12
    if mode == "legacy":
        sessions = {c["session"] for c in record.of("whoami")}
        assert len(sessions) == 12 and None not in sessions
        assert binding.violations == []


@pytest.mark.parametrize("mode", ERAS)
async def test_a_run_without_the_configurable_key_gets_an_error_toolmessage(
    open_servers: OpenServers, mode: str
) -> None:
    (url, record, _) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": mode, "headers": TOKEN_HEADERS}})
    graph = whoami_graph(servers)
    out = await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(1, token=None))
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert "configurable" in str(message.content) and "'token'" in str(message.content)
    assert record.calls == []  # nothing reached the server


async def test_a_legacy_session_never_serves_a_second_user(open_servers: OpenServers) -> None:
    (url, record, binding) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": "legacy", "headers": TOKEN_HEADERS}})
    graph = whoami_graph(servers)
    for i, token in enumerate(["alice", "bob", "alice", "bob"]):
        await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(i, token))
    by_session: dict[str, set[str]] = {}
    for c in record.of("whoami"):
        by_session.setdefault(c["session"], set()).add(c["authorization"])
    assert sorted(by_session.values(), key=sorted) == [{"Bearer alice"}, {"Bearer bob"}]
    assert binding.violations == []


async def test_past_the_cap_the_least_recently_used_identity_is_closed(open_servers: OpenServers) -> None:
    (url, _, binding) = await open_servers.enter(identity_server())
    servers = open_servers(
        {"ident": {"url": url, "mode": "legacy", "headers": TOKEN_HEADERS}}, max_identities=2
    )
    graph = whoami_graph(servers)
    for i, token in enumerate(["a", "b", "a", "c"]):
        await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(i, token))
    # Opening "c" closed the least recently used identity ("b"); its session ended on the server.
    with anyio.fail_after(5):
        await binding.closes_reach(1)
    assert binding.closed_tokens == ["Bearer b"]
    assert server_access(servers).connections.live_identities("ident") == 2
    assert binding.violations == []


async def test_idle_identities_are_closed_and_come_back_on_their_next_run(open_servers: OpenServers) -> None:
    (url, record, binding) = await open_servers.enter(identity_server())
    servers = open_servers(
        {"ident": {"url": url, "mode": "legacy", "headers": TOKEN_HEADERS}}, identity_idle_timeout=0.2
    )
    graph = whoami_graph(servers)
    for i, token in enumerate(["a", "b"]):
        await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(i, token))
    # Nothing uses them any more: both are closed once idle, and their sessions end on the server.
    with anyio.fail_after(5):
        await binding.closes_reach(2)
    assert sorted(binding.closed_tokens) == ["Bearer a", "Bearer b"]
    assert server_access(servers).connections.live_identities("ident") == 0
    await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(9, "a"))
    first, second = [c["session"] for c in record.of("whoami") if c["authorization"] == "Bearer a"]
    assert first != second  # a fresh session for the returning identity
    assert binding.violations == []


class HeldListing:
    """Server middleware that holds every ``tools/list`` open until :attr:`release` is set (:attr:`entered` says
    one arrived); counts the listings."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.listings = 0

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/list":
            self.listings += 1
            self.entered.set()
            await self.release.wait()
        return await call_next(ctx)


class HeldToolStart(AsyncCallbackHandler):
    """A run's callback that holds the call between its proof and its send (``on_tool_start``) until released."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.entered.set()
        await self.release.wait()


class PoolClock:
    """The identity pool's clock, moved by the test (the sweep's real timer never comes due: 300 s)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def swept_after_idle(servers: McpServers, clock: PoolClock) -> int:
    """Let the idle timeout pass on the pool's clock, run the sweep its timer would run; the live identities left."""
    clock.now += 301
    connections = server_access(servers).connections
    connections._sweep(asyncio.get_running_loop())
    return connections.live_identities("ident")


def held_servers(open_servers: OpenServers, url: str, mode: str) -> tuple[McpServers, PoolClock]:
    servers = open_servers(
        {"ident": {"url": url, "mode": mode, "headers": TOKEN_HEADERS}}, identity_idle_timeout=300
    )
    clock = PoolClock()
    server_access(servers).connections.clock = clock
    return servers, clock


@pytest.mark.parametrize("mode", ERAS)
async def test_an_idle_sweep_while_a_run_lists_its_tools_leaves_its_connection_open(
    open_servers: OpenServers, mode: str
) -> None:
    held = HeldListing()
    (url, record, binding) = await open_servers.enter(identity_server([held]))
    servers, clock = held_servers(open_servers, url, mode)
    run = asyncio.create_task(
        whoami_graph(servers).ainvoke({"messages": [HumanMessage("who?")]}, run_config(1, "a"))
    )
    with anyio.fail_after(HANG_GUARD):
        await held.entered.wait()  # the run's fresh connection is listing its tools
    # The sweep comes with the idle timeout long past: the connection is the run's from its first use on.
    swept_after_idle(servers, clock)
    held.release.set()
    with anyio.fail_after(HANG_GUARD):
        out = await run
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage) and message.status == "success", message
    assert [c["authorization"] for c in record.of("whoami")] == ["Bearer a"]
    assert binding.closed_tokens == [] and held.listings == 1
    # The run is over: the lease went with it, and the next sweep closes the identity.
    assert swept_after_idle(servers, clock) == 0


@pytest.mark.parametrize("mode", ERAS)
async def test_an_idle_sweep_between_a_calls_proof_and_its_send_leaves_its_connection_open(
    open_servers: OpenServers, mode: str
) -> None:
    held = HeldListing()
    held.release.set()  # listings go through; the call is held by its run's callback instead
    (url, record, binding) = await open_servers.enter(identity_server([held]))
    servers, clock = held_servers(open_servers, url, mode)
    start = HeldToolStart()
    config = {**run_config(1, "a"), "callbacks": [start]}
    run = asyncio.create_task(whoami_graph(servers).ainvoke({"messages": [HumanMessage("who?")]}, config))
    with anyio.fail_after(HANG_GUARD):
        await start.entered.wait()  # listed and proven; not sent yet
    swept_after_idle(servers, clock)
    start.release.set()
    with anyio.fail_after(HANG_GUARD):
        out = await run
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage) and message.status == "success", message
    # Sent on the connection it was listed and proven on: not closed, not listed again on a new one.
    assert [c["authorization"] for c in record.of("whoami")] == ["Bearer a"]
    assert binding.closed_tokens == [] and held.listings == 1
    assert swept_after_idle(servers, clock) == 0


@pytest.mark.parametrize("ending", ["error", "interrupt", "cancelled"])
async def test_a_runs_hold_on_its_connection_ends_however_the_call_ends(
    open_servers: OpenServers, ending: str
) -> None:
    held = HeldListing()
    if ending != "cancelled":
        held.release.set()
    (url, _, _) = await open_servers.enter(identity_server([held]))
    servers, clock = held_servers(open_servers, url, "modern")
    calls = {
        "error": call("ident_whoami", "c1"),  # no 'run' argument: the server refuses it, an error ToolMessage
        "interrupt": call("ident_flaky", "c1", marker="m"),  # unannotated: the node asks first (mcp_approval)
        "cancelled": call("ident_whoami", "c1", run="1"),  # cancelled while its tools are being listed
    }
    graph = one_turn_graph(servers, [calls[ending]], StrictSaver())
    run = asyncio.create_task(graph.ainvoke({"messages": []}, run_config(1, "a")))
    with anyio.fail_after(HANG_GUARD):
        await held.entered.wait()
    if ending == "cancelled":
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    else:
        with anyio.fail_after(HANG_GUARD):
            out = await run
        if ending == "error":
            assert out["messages"][-1].status == "error"
        else:
            assert out["__interrupt__"][0].value["type"] == APPROVAL_INTERRUPT_TYPE
    assert swept_after_idle(servers, clock) == 0  # nothing holds the identity any more: closed as idle


@pytest.mark.parametrize("mode", ERAS)
async def test_a_credentials_callable_and_get_tools_inside_create_agent(
    open_servers: OpenServers, mode: str
) -> None:
    def credentials(config: Any) -> dict[str, str]:
        user = (config or {}).get("configurable", {}).get("user", "nobody")
        return {"Authorization": f"Bearer {user}-token", "X-User": user}

    (url, record, _) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": mode, "credentials": credentials}})
    tools = await servers.get_tools(config={"configurable": {"user": "lister"}})
    agent = create_agent(WhoamiModel(), tools)
    for user in ["ann", "ben"]:
        out = await agent.ainvoke({"messages": [HumanMessage("who?")]}, {"configurable": {"user": user}})
        assert out["messages"][-1].content == "done"
    users = [(c["x_user"], c["authorization"]) for c in record.of("whoami")]
    assert users == [("ann", "Bearer ann-token"), ("ben", "Bearer ben-token")]


async def test_a_get_tools_tool_without_the_run_credentials_answers_with_an_error(
    open_servers: OpenServers,
) -> None:
    (url, record, _) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "headers": TOKEN_HEADERS}})
    tools = await servers.get_tools(config={"configurable": {"token": "lister"}})
    agent = create_agent(WhoamiModel(), tools)
    out = await agent.ainvoke({"messages": [HumanMessage("who?")]}, {"configurable": {}})
    (message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert message.status == "error" and "'token'" in str(message.content)
    assert record.of("whoami") == []


def test_env_in_headers_is_filled_at_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDENT_API_KEY", "k-123")
    servers = McpServers(
        {
            "mcpServers": {
                "ident": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "${env:IDENT_API_KEY}"}}
            }
        }
    )
    assert servers.spec("ident").headers == {"X-Key": "k-123"}  # type: ignore[union-attr]
    monkeypatch.delenv("IDENT_API_KEY")
    with pytest.raises(ConfigError, match="IDENT_API_KEY"):
        McpServers({"ident": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "${env:IDENT_API_KEY}"}}})


class BearerAuth(httpx2.Auth):
    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx2.Request) -> Any:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


async def test_a_credentials_callable_may_return_an_httpx_auth_per_user(open_servers: OpenServers) -> None:
    auths: dict[str, BearerAuth] = {}

    def credentials(config: Any) -> httpx2.Auth:
        user = config["configurable"]["user"]
        return auths.setdefault(user, BearerAuth(f"{user}-secret"))  # one object per user

    (url, record, binding) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": "legacy", "credentials": credentials}})
    graph = whoami_graph(servers)
    for i, user in enumerate(["ann", "ben", "ann"]):
        config = run_config(i, None)
        config["configurable"]["user"] = user
        await graph.ainvoke({"messages": [HumanMessage("who?")]}, config)
    seen = [c["authorization"] for c in record.of("whoami")]
    assert seen == ["Bearer ann-secret", "Bearer ben-secret", "Bearer ann-secret"]
    assert server_access(servers).connections.live_identities("ident") == 2
    assert binding.violations == []


async def test_the_cli_fills_env_and_configurable_headers_from_a_json_config(tmp_path: Path) -> None:
    async with identity_server() as (url, record, _):
        config = tmp_path / "servers.json"
        headers = {"Authorization": "Bearer ${configurable:token}", "X-Key": "${env:IDENT_CLI_KEY}"}
        config.write_text(json.dumps({"mcpServers": {"ident": {"url": url, "headers": headers}}}))
        env = {**os.environ, "IDENT_CLI_KEY": "key-from-env", "LANGGRAPH_MCP_DB": str(tmp_path / "t.sqlite")}

        def cli(*args: str, env: dict[str, str] = env) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "langgraph_mcp", *args, "--config", str(config), "--no-input"]
            return subprocess.run(
                command, capture_output=True, text=True, timeout=HANG_GUARD, env=env, check=False
            )

        done = await anyio.to_thread.run_sync(
            lambda: cli("call", "ident_whoami", "--args", '{"run": "cli"}', "--configurable", "token=abc")
        )
        assert done.returncode == 0, done.stderr
        (seen,) = record.of("whoami")
        assert (seen["authorization"], seen["x_key"], seen["run"]) == ("Bearer abc", "key-from-env", "cli")

        missing_env = {k: v for k, v in env.items() if k != "IDENT_CLI_KEY"}
        failed = await anyio.to_thread.run_sync(
            lambda: cli(
                "call",
                "ident_whoami",
                "--args",
                '{"run": "x"}',
                "--configurable",
                "token=abc",
                env=missing_env,
            )
        )
        assert failed.returncode == 2 and "IDENT_CLI_KEY" in failed.stderr

        no_token = await anyio.to_thread.run_sync(
            lambda: cli("call", "ident_whoami", "--args", '{"run": "y"}')
        )
        assert no_token.returncode != 0 and "'token'" in no_token.stderr + no_token.stdout
        assert len(record.of("whoami")) == 1  # neither reached the server


@pytest.mark.parametrize("mode", ERAS)
async def test_the_gate_and_the_node_look_tools_up_in_the_callers_own_catalog(
    open_servers: OpenServers, mode: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """The admin's listing has ``admin_reset``; a user's run must not find it there (nor run it)."""
    (url, record, _) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": mode, "headers": TOKEN_HEADERS}})
    builder = StateGraph(MessagesState)

    def agent(state: MessagesState) -> dict[str, Any]:
        call = {"name": "ident_admin_reset", "args": {}, "id": "reset-1", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "approval_gate")
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", END), ["tools", END])
    builder.add_edge("tools", END)
    graph = builder.compile(checkpointer=checkpointer)

    admin = await graph.ainvoke({"messages": [HumanMessage("reset")]}, run_config(1, "admin"))
    assert admin["messages"][-1].status == "success"
    user = await graph.ainvoke({"messages": [HumanMessage("reset")]}, run_config(2, "user"))
    assert "__interrupt__" not in user
    assert user["messages"][-1].status == "error"
    assert [c["authorization"] for c in record.of("admin_reset")] == ["Bearer admin"]


def gated_graph(servers: McpServers, tool: str) -> CompiledStateGraph[Any, Any, Any, Any]:
    """START → agent (calls ``tool``) → approval gate → tools → END."""

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        run = config["configurable"]["run"]
        call = {"name": tool, "args": {"run": run}, "id": f"call-{run}", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("approval_gate", create_approval_gate(servers))
    builder.add_node("tools", McpToolNode(servers))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "approval_gate")
    builder.add_conditional_edges("approval_gate", ToolCallRouter("tools", END), ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=StrictSaver())


async def failures_seen_by(servers: McpServers, token: str) -> tuple[set[str], str | None]:
    """What a run with ``token`` sees: the servers in ``report.failed_servers``, and ``ident``'s status error;
    its name resolution of ``ident_whoami`` must agree (an owner it can't establish while the listing fails)."""
    seen: dict[str, Any] = {}

    async def look(state: MessagesState) -> dict[str, Any]:
        seen["failed"] = set(servers.report.failed_servers)
        seen["error"] = servers.server_status("ident")["error"]
        seen["resolution"] = await servers.resolve_tool("ident_whoami")
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("look", look)
    builder.add_edge(START, "look")
    builder.add_edge("look", END)
    await builder.compile().ainvoke({"messages": []}, run_config(0, token))
    resolution = seen["resolution"]
    if seen["failed"]:
        assert not resolution.tools and set(resolution.unknown) == {"ident"}
    else:
        assert [t.name for t in resolution.tools] == ["whoami"] and not resolution.unknown
    return seen["failed"], seen["error"]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_failed_listing_is_one_users_a_healthy_one_another_users(
    open_servers: OpenServers, mode: str
) -> None:
    """``tools/list`` fails for one token only: that user's gate asks (nothing runs) every time, and only that
    user's report and status name the failure; other users' read-only calls are allowed and run, and their
    successful listings don't clear the first user's failure."""
    (url, record, _) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": mode, "headers": TOKEN_HEADERS}})
    graph = gated_graph(servers, "ident_whoami")
    refused = REFUSED_TOKEN.removeprefix("Bearer ")

    alice = await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(1, "alice"))
    assert alice["messages"][-1].status == "success"
    denied = await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(2, refused))
    (pending,) = denied["__interrupt__"]  # the gate could not establish the owner: it asks, never allows
    assert pending.value["type"] == APPROVAL_INTERRUPT_TYPE
    assert [c["authorization"] for c in record.of("whoami")] == ["Bearer alice"]

    assert await failures_seen_by(servers, "alice") == (set(), None)
    failed, error = await failures_seen_by(servers, refused)
    assert failed == {"ident"} and error is not None and "refused to this token" in error

    bob = await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(3, "bob"))
    assert bob["messages"][-1].status == "success"
    assert (await failures_seen_by(servers, refused))[0] == {"ident"}  # bob's listing did not clear it
    again = await graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(4, refused))
    assert "__interrupt__" in again
    assert [c["authorization"] for c in record.of("whoami")] == ["Bearer alice", "Bearer bob"]


async def skipped_seen_by(servers: McpServers, token: str, *, list_first: bool) -> set[str]:
    """The tools ``report.skipped`` names in a run with ``token`` (after that run listed its tools, if asked)."""
    seen: set[str] = set()

    async def look(state: MessagesState) -> dict[str, Any]:
        if list_first:
            await servers.list_tools()
        seen.update(skip.tool for skip in servers.report.skipped)
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("look", look)
    builder.add_edge(START, "look")
    builder.add_edge("look", END)
    await builder.compile().ainvoke({"messages": []}, run_config(0, token))
    return seen


@pytest.mark.parametrize("mode", ERAS)
async def test_skipped_tools_are_reported_per_user(open_servers: OpenServers, mode: str) -> None:
    """Only the admin's listing has an unusable tool: only the admin's runs report it skipped, whoever listed last."""
    (url, _, _) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": mode, "headers": TOKEN_HEADERS}})

    assert await skipped_seen_by(servers, "admin", list_first=True) == {UNUSABLE_ADMIN_TOOL.name}
    assert await skipped_seen_by(servers, "alice", list_first=True) == set()
    # Both listings are cached now; each user's report reads their own, not the last one made.
    assert await skipped_seen_by(servers, "admin", list_first=False) == {UNUSABLE_ADMIN_TOOL.name}
    assert await skipped_seen_by(servers, "alice", list_first=False) == set()


@pytest.mark.parametrize("resumer", ["alice", "bob"])
@pytest.mark.parametrize("mode", ERAS)
async def test_a_paused_call_continues_only_with_the_credentials_that_started_it(
    open_servers: OpenServers, mode: str, resumer: str, checkpointer: BaseCheckpointSaver[Any]
) -> None:
    """The same user's resume continues the paused call; another user's resume of that thread never touches
    the first user's open call or session. A modern call runs again with the resumer's credentials; a legacy
    call still held open in the first user's session is not sent a second time (the one re-issue rule: that
    first attempt may still complete, and the tool is not declared safe to run twice)."""
    (url, record, binding) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "mode": mode, "headers": TOKEN_HEADERS}})
    calls = [call("ident_transfer", "t1", amount=7)]
    graph = one_turn_graph(servers, calls, checkpointer)
    config = run_config(1, "alice")
    out = await graph.ainvoke({"messages": [HumanMessage("pay")]}, config)
    (approval,) = out["__interrupt__"]  # transfer has no annotations (destructive): the tool node asks first
    assert approval.value["type"] == "mcp_approval"
    out = await graph.ainvoke(Command(resume={approval.id: {"type": "approve"}}), config)
    (pending,) = out["__interrupt__"]
    (key,) = pending.value["requests"]
    config["configurable"]["token"] = resumer
    answer = Command(resume={pending.id: {key: {"action": "accept", "content": {"ok": True}}}})
    out = await graph.ainvoke(answer, config)
    if mode == "legacy" and resumer != "alice":
        assert out["messages"][-1].status == "error"
        assert "first attempt may still complete" in out["messages"][-1].text
        assert record.of("transfer") == []
    else:
        assert out["messages"][-1].status == "success"
        assert [c["authorization"] for c in record.of("transfer")] == [f"Bearer {resumer}"]
    assert binding.violations == []


async def test_sse_servers_get_per_run_headers_too(open_servers: OpenServers) -> None:
    srv, record = build_identity_server()
    base = await open_servers.enter(serve_asgi(srv.sse_app()))
    servers = open_servers({"ident": {"url": f"{base}/sse", "mode": "legacy", "headers": TOKEN_HEADERS}})
    graph = whoami_graph(servers)
    runs = range(4)
    await asyncio.gather(
        *(graph.ainvoke({"messages": [HumanMessage("who?")]}, run_config(i, f"sse{i % 2}")) for i in runs)
    )
    seen = {c["run"]: c["authorization"] for c in record.of("whoami")}
    assert seen == {str(i): f"Bearer sse{i % 2}" for i in runs}
    assert server_access(servers).connections.live_identities("ident") == 2


async def test_sync_invoke_uses_each_runs_credentials(open_servers: OpenServers) -> None:
    (url, record, _) = await open_servers.enter(identity_server())
    servers = open_servers({"ident": {"url": url, "headers": TOKEN_HEADERS}})
    graph = whoami_graph(servers)
    for i, token in enumerate(["s1", "s2"]):
        # graph.invoke from a thread without a loop: the node runs on McpServers' private loop.
        await anyio.to_thread.run_sync(
            lambda i=i, token=token: graph.invoke({"messages": [HumanMessage("who?")]}, run_config(i, token))
        )
    assert [c["authorization"] for c in record.of("whoami")] == ["Bearer s1", "Bearer s2"]


def test_a_run_value_with_a_line_break_is_refused_not_sent() -> None:
    spec = McpServers({"ident": {"url": "http://127.0.0.1:1/mcp", "headers": TOKEN_HEADERS}}).spec("ident")
    with pytest.raises(CredentialError, match="line break"):
        resolve_identity("ident", spec, {"configurable": {"token": "abc\r\nX-Admin: yes"}})
    assert resolve_identity("ident", spec, {"configurable": {"token": "abc"}}).headers == {
        "Authorization": "Bearer abc"
    }
