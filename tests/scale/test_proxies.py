"""Servers behind a reverse proxy: two demo server replicas (processes of their own, streamable HTTP) behind our own
proxy (``tests/support/proxy.py``: round-robin or sticky by ``mcp-session-id``; a replica killed by pid is
answered with a gateway error). What ran is counted from the replicas' own records and the proxy's.

* a round's ``requestState`` refused by a replica that did not seal it: the error names every cause and its fix,
  the answer stays in the thread, one re-issue and no loop; with a shared key the answer lands (modern);
* a gateway's 502 is a transport fault: read-only calls are sent again, others are told they may or may not have
  run, an approved call is sent again only when read-only, an untrusted server's hints loosen nothing, a refused
  connection was not sent; a legacy session pinned to a dead replica starts again on a live one;
* a legacy server behind a proxy without session affinity: an error naming affinity and ``mcp-session-id``,
  without a new session per call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langgraph_mcp import ApprovalPolicy, McpServers
from langgraph_mcp.errors import CallInterruptedError, LangGraphMcpError, ServerConnectionError
from tests.support.node_support import accept_all, call, one_turn_graph, start, text_of, tool_messages
from tests.support.proxy import DownAnswer, Mode, Replicas, ReverseProxy, replicas, reverse_proxy

pytestmark = pytest.mark.anyio

NO_APPROVALS = ApprovalPolicy(tools={"*": "allow"})
SHARED_KEY = "a-request-state-key-every-replica-shares"


def config(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


class Behind:
    """Two replicas behind the proxy, and an ``McpServers`` pointed at the proxy."""

    def __init__(self, reps: Replicas, proxy: ReverseProxy, servers: McpServers) -> None:
        self.replicas, self.proxy, self.servers = reps, proxy, servers


async def behind_proxy(
    tmp_path: Path, mode: Mode, era: str, *, env: dict[str, str] | None = None, **options: Any
) -> AsyncIterator[Behind]:
    async with replicas(tmp_path, 2, env=env) as reps, reverse_proxy(reps.upstreams, mode=mode) as proxy:
        servers = McpServers({"demo": {"url": proxy.url, "mode": era, **options}})
        try:
            yield Behind(reps, proxy, servers)
        finally:
            await servers.aclose()


@pytest.fixture
async def round_robin_modern(tmp_path: Path) -> AsyncIterator[Behind]:
    async for setup in behind_proxy(tmp_path, "round_robin", "modern"):
        yield setup


# ------------------------------------------------------------------------------------------- requestState (37.1)


async def test_modern_replicas_without_a_shared_key_name_every_cause_keep_the_answer_and_reissue_once(
    round_robin_modern: Behind,
) -> None:
    setup = round_robin_modern
    graph = one_turn_graph(
        setup.servers,
        [call("demo_book_trip", "c1", destination="Rome")],
        InMemorySaver(),
        policy=NO_APPROVALS,
    )
    out = await graph.ainvoke(start(), config())
    (pending,) = out["__interrupt__"]
    answer = accept_all(pending)
    out = await graph.ainvoke(Command(resume={pending.id: answer}), config())
    message = tool_messages(out)["c1"]
    text = text_of(message)
    assert message.status == "error"
    for words in (
        "replicas",
        "request_state_security=RequestStateSecurity(keys=[shared_key])",
        "route each client to one replica",
        "restarted",
        "expired",
        "call the tool again",
    ):
        assert words in text, words
    assert message.artifact == [{"type": "mcp_unsent_answers", "answers": answer}]  # can be given again
    # The proxy's record: the question, its answer refused, one re-issue, its answer refused; no loop.
    calls = setup.proxy.rpc_calls()
    assert [r.status for r in calls] == [200, 400, 200, 400]
    assert {r.replica for r in calls if r.status == 400}.isdisjoint(
        {r.replica for r in calls if r.status == 200}
    )
    assert setup.replicas.counted("book_trip", "commit") == dict.fromkeys(setup.replicas.pids, 0)


async def test_modern_replicas_sharing_the_request_state_key_book_the_answer_once(tmp_path: Path) -> None:
    async for setup in behind_proxy(
        tmp_path, "round_robin", "modern", env={"DEMO_REQUEST_STATE_KEY": SHARED_KEY}
    ):
        graph = one_turn_graph(
            setup.servers,
            [call("demo_book_trip", "c1", destination="Rome")],
            InMemorySaver(),
            policy=NO_APPROVALS,
        )
        out = await graph.ainvoke(start(), config())
        (pending,) = out["__interrupt__"]
        out = await graph.ainvoke(Command(resume={pending.id: accept_all(pending)}), config())
        assert tool_messages(out)["c1"].status == "success", text_of(tool_messages(out)["c1"])
        asked, answered = setup.proxy.rpc_calls()
        assert asked.replica != answered.replica  # sealed by one replica, opened by the other
        assert sorted(setup.replicas.counted("book_trip", "commit").values()) == [0, 1]


# ------------------------------------------------------------------------------------------- gateways (37.2)


@pytest.mark.parametrize("down_answer", [502, "reset"])
async def test_a_dead_modern_replica_read_only_calls_are_sent_again_and_others_may_or_may_not_have_run(
    round_robin_modern: Behind, down_answer: DownAnswer
) -> None:
    setup = round_robin_modern
    servers, reps, proxy = setup.servers, setup.replicas, setup.proxy
    proxy.down_answer = down_answer
    assert not (await servers.call_tool("demo_list_files", {})).is_error
    dead, live = reps.pids
    await reps.kill(dead)
    for _ in range(6):  # read-only (trusted): a call that met the dead replica is sent again
        assert not (await servers.call_tool("demo_list_files", {})).is_error
    assert reps.counted("list_files", "enter")[live] == 7 - reps.counted("list_files", "enter")[dead]
    answered = None if down_answer == "reset" else 502
    assert any(r.status == answered for r in proxy.rpc_calls(tool="list_files"))
    assert servers.server_status("demo").state == "connected"

    await reps.kill(live)
    with pytest.raises(CallInterruptedError) as caught:  # not read-only: sent once, and told it may have run
        await servers.call_tool("demo_delete_file", {"path": "todo.txt"})
    if down_answer == 502:
        assert "gateway" in caught.value.detail and "502 Bad Gateway" in caught.value.detail
    assert "the call may or may not have run" in caught.value.detail
    assert [r.status for r in proxy.rpc_calls(tool="delete_file")] == [answered]


async def test_after_a_gateway_error_an_approved_call_is_sent_again_only_when_read_only(
    round_robin_modern: Behind,
) -> None:
    setup = round_robin_modern
    reps, proxy = setup.replicas, setup.proxy
    asked = one_turn_graph(
        setup.servers,
        [call("demo_list_files", "c1"), call("demo_write_file", "c2", path="a.txt", content="x")],
        InMemorySaver(),
        policy=ApprovalPolicy(tools={"*": "ask"}),
    )
    out = await asked.ainvoke(start(), config())
    assert len(out["__interrupt__"]) == 2
    for pid in reps.pids:
        await reps.kill(pid)  # every request now meets the gateway's 502
    out = await asked.ainvoke(
        Command(resume={i.id: {"type": "approve"} for i in out["__interrupt__"]}), config()
    )
    messages = tool_messages(out)
    assert all("may or may not have run" in text_of(m) for m in messages.values())
    retries = setup.servers.spec("demo").retries
    assert len(proxy.rpc_calls(tool="list_files")) == 1 + retries  # approved, read-only: sent again
    assert len(proxy.rpc_calls(tool="write_file")) == 1  # approved, idempotent but not read-only: once

    unasked = one_turn_graph(
        setup.servers,
        [call("demo_write_file", "c3", path="b.txt", content="x")],
        InMemorySaver(),
        policy=NO_APPROVALS,
    )
    out = await unasked.ainvoke(start(), config("t2"))
    assert "may or may not have run" in text_of(tool_messages(out)["c3"])
    assert len(proxy.rpc_calls(tool="write_file")) == 2 + retries  # not approved, idempotent: sent again


async def test_untrusted_hints_never_loosen_the_retry_rule(tmp_path: Path) -> None:
    async for setup in behind_proxy(tmp_path, "round_robin", "modern", trust_annotations=False):
        servers, reps, proxy = setup.servers, setup.replicas, setup.proxy
        assert not (await servers.call_tool("demo_list_files", {})).is_error
        for pid in reps.pids:
            await reps.kill(pid)
        with pytest.raises(CallInterruptedError):
            await servers.call_tool("demo_list_files", {})
        assert [r.status for r in proxy.rpc_calls(tool="list_files")] == [
            200,
            502,
        ]  # "read-only": its word only


async def test_a_refused_connection_is_not_a_call_that_may_have_run(tmp_path: Path) -> None:
    async for setup in behind_proxy(tmp_path, "round_robin", "modern"):
        servers, reps, proxy = setup.servers, setup.replicas, setup.proxy
        assert not (await servers.call_tool("demo_list_files", {})).is_error
        await proxy.stop_listening()
        with pytest.raises(
            ServerConnectionError
        ) as caught:  # any tool: nothing was sent (sent again, refused)
            await servers.call_tool("demo_delete_file", {"path": "todo.txt"})
        assert not isinstance(caught.value, CallInterruptedError)
        assert "may or may not" not in str(caught.value)
        assert proxy.rpc_calls(tool="delete_file") == []
        await proxy.listen()
        assert not (await servers.call_tool("demo_delete_file", {"path": "todo.txt"})).is_error
        assert sum(reps.counted("delete_file", "commit").values()) == 1


@pytest.mark.parametrize("down_answer", [502, 503, 504])
async def test_a_legacy_session_pinned_to_a_dead_replica_starts_again_on_a_live_one(
    tmp_path: Path, down_answer: DownAnswer
) -> None:
    async with replicas(tmp_path, 2) as reps, reverse_proxy(reps.upstreams, mode="sticky") as proxy:
        proxy.down_answer = down_answer
        servers = McpServers({"demo": {"url": proxy.url, "mode": "legacy"}})
        try:
            assert not (await servers.call_tool("demo_list_files", {})).is_error
            [first] = {r.replica for r in proxy.rpc_calls()}
            await reps.kill(reps.pids[first])
            for _ in range(
                20
            ):  # read-only: the call that met the dead replica is sent again on a new session
                assert not (await servers.call_tool("demo_list_files", {})).is_error
            live = reps.pids[1 - first]
            assert reps.counted("list_files", "enter")[live] == 20
            assert len(proxy.rpc_calls("initialize")) == 2  # one new session, on the live replica
            await reps.kill(live)
            with pytest.raises(CallInterruptedError):  # not read-only: reported, not sent again
                await servers.call_tool("demo_delete_file", {"path": "todo.txt"})
            assert len(proxy.rpc_calls(tool="delete_file")) == 1
        finally:
            await servers.aclose()


# ------------------------------------------------------------------------------------------- affinity (37.4)


async def test_legacy_behind_a_proxy_without_affinity_names_it_once_not_a_session_per_call(
    tmp_path: Path,
) -> None:
    async for setup in behind_proxy(tmp_path, "round_robin", "legacy"):
        errors = []
        for _ in range(30):
            try:
                await setup.servers.call_tool("demo_list_files", {})
            except LangGraphMcpError as exc:
                errors.append(str(exc))
        assert len(errors) == 30
        assert all("session affinity" in e and "mcp-session-id" in e for e in errors)
        assert not any("restarted?" in e for e in errors)
        assert len(setup.proxy.rpc_calls("initialize")) <= 3  # not a session per call
        assert setup.replicas.counted("list_files", "enter") == dict.fromkeys(setup.replicas.pids, 0)


async def test_legacy_behind_a_sticky_proxy_keeps_its_session(tmp_path: Path) -> None:
    async for setup in behind_proxy(tmp_path, "sticky", "legacy"):
        for _ in range(20):
            assert not (await setup.servers.call_tool("demo_list_files", {})).is_error
        assert len(setup.proxy.rpc_calls("initialize")) == 1
        assert sorted(setup.replicas.counted("list_files", "enter").values()) == [0, 20]
