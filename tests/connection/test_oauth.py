"""Per-user OAuth sign-in as an interrupt, against the mcp SDK's own ``simple-auth`` example servers.

The authorization server and the resource server run as separate subprocesses on 127.0.0.1
(``tests/support/oauth_support.py``); a scripted person follows the authorization URL through the example's login form to
the redirect URI. The graph is the README's: a model turn, ``route_tool_calls``, ``McpToolNode``, on a SQLite
checkpointer and a LangGraph store. Both protocol eras (the example's resource server serves both).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.errors import is_invalid_resume
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from langgraph_mcp import McpServers, McpToolNode, pending_interrupts, resume_command, route_tool_calls
from langgraph_mcp.connection.oauth import oauth_namespace
from langgraph_mcp.errors import AnswerRefusedError, ResumeError
from tests.support.helpers import HANG_GUARD
from tests.support.oauth_support import OAuthServers, running_oauth_servers, sign_in_as_person

pytestmark = pytest.mark.anyio
ERAS = ["legacy", "modern"]
REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"


@pytest.fixture(scope="module")
def oauth() -> Iterator[OAuthServers]:
    with running_oauth_servers() as servers:
        yield servers


def server_config(oauth: OAuthServers, era: str) -> dict[str, Any]:
    return {
        "secure": {
            "url": oauth.rs_url,
            "mode": era,
            "oauth": {"redirect_uri": REDIRECT_URI, "client_name": "langgraph-mcp tests"},
        }
    }


def build_graph(
    servers: McpServers, checkpointer: Any, store: BaseStore | None, *, compat: bool = False
) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage):
            call = {"name": "secure_get_time", "args": {}, "id": "call_1", "type": "tool_call"}
            return {"messages": [AIMessage(content="", tool_calls=[call])]}
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    # These tests are about signing in, not approvals: the tool node runs the (unannotated) tool unasked.
    builder.add_node(
        "tools", McpToolNode(servers, agent_chat_ui=compat, policy={"tools": {"secure_*": "allow"}})
    )
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(checkpointer=checkpointer, store=store)


class Harness:
    def __init__(self, graph: Any, servers: McpServers, store: BaseStore | None, db: Path) -> None:
        self.graph, self.servers, self.store, self.db = graph, servers, store, db

    async def run(self, thread: str, principal: str | None = "alice", value: Any = None) -> dict[str, Any]:
        configurable: dict[str, Any] = {"thread_id": thread}
        if principal is not None:
            configurable["user_id"] = principal
        inputs = value if value is not None else {"messages": [HumanMessage("what time is it?")]}
        out: dict[str, Any] = await self.graph.ainvoke(inputs, {"configurable": configurable})
        return out

    async def pending_ids(self, thread: str) -> list[str]:
        state = await self.graph.aget_state({"configurable": {"thread_id": thread}}, subgraphs=True)
        return [p.interrupt_id for p in pending_interrupts(state)]


@pytest.fixture
async def harness(
    oauth: OAuthServers, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    era = getattr(request, "param", "legacy")
    db = tmp_path / "checkpoints.sqlite"
    store = InMemoryStore()
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        servers = McpServers(server_config(oauth, era))
        try:
            yield Harness(build_graph(servers, saver, store), servers, store, db)
        finally:
            await servers.aclose()


def the_sign_in(out: dict[str, Any]) -> Any:
    [pending] = pending_interrupts(out)
    assert pending.kind == "authorization"
    return pending


async def person(url: str) -> str:
    return await anyio.to_thread.run_sync(sign_in_as_person, url)


def tool_message(out: dict[str, Any]) -> ToolMessage:
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage), out
    return message


@pytest.mark.parametrize("harness", ERAS, indirect=True)
async def test_first_call_pauses_for_sign_in_and_the_callback_completes_it(
    harness: Harness, oauth: OAuthServers
) -> None:
    out = await harness.run("t1")
    pending = the_sign_in(out)
    payload = pending.payload
    assert payload["type"] == "mcp_authorization"
    assert payload["server"] == "secure"
    assert payload["tool_call_id"] == "call_1"
    assert payload["principal"] == "alice"
    assert payload["scopes"] == ["user"]
    assert payload["host"] == oauth.as_url.removeprefix("http://")
    assert payload["authorization_url"].startswith(f"{oauth.as_url}/authorize?")
    before = oauth.stats().get("authorization_code", 0)

    callback = await person(payload["authorization_url"])
    assert callback.startswith(REDIRECT_URI + "?")
    out = await harness.run("t1", value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}}))
    message = tool_message(out)
    assert message.status != "error", message.content
    assert "current_time" in str(message.content)
    assert oauth.stats()["authorization_code"] == before + 1

    # The same principal in a new thread: the stored token, no sign-in.
    out = await harness.run("t2")
    assert "__interrupt__" not in out
    assert tool_message(out).status != "error"
    assert oauth.stats()["authorization_code"] == before + 1

    # Another principal is asked, for their own sign-in.
    out = await harness.run("t3", principal="bob")
    other = the_sign_in(out).payload
    assert other["principal"] == "bob"
    assert other["authorization_url"] != payload["authorization_url"]


@pytest.mark.parametrize("principal", ["ann.lee", "ann@example.com"])
@pytest.mark.parametrize("harness", ERAS, indirect=True)
async def test_an_e_mail_shaped_principal_gets_the_sign_in_card_and_completes_under_its_own_records(
    harness: Harness, oauth: OAuthServers, principal: str
) -> None:
    out = await harness.run("e1", principal=principal)
    payload = the_sign_in(out).payload
    assert payload["principal"] == principal
    before = oauth.stats().get("authorization_code", 0)

    callback = await person(payload["authorization_url"])
    out = await harness.run(
        "e1", principal=principal, value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}})
    )
    assert "current_time" in str(tool_message(out).content)
    assert oauth.stats()["authorization_code"] == before + 1
    assert (await stored_tokens(harness.store, principal))["access_token"]
    # A principal whose name differs only where the encoding escapes is somebody else: asked to sign in.
    other = principal.replace(".", "%2E")
    out = await harness.run("e2", principal=other)
    assert the_sign_in(out).payload["principal"] == other


async def test_wrong_or_replayed_state_is_refused_and_the_sign_in_stays_pending(
    harness: Harness, oauth: OAuthServers
) -> None:
    out = await harness.run("w1")
    pending = the_sign_in(out)
    callback = await person(pending.payload["authorization_url"])
    forged = callback.replace("state=", "state=x")

    with pytest.raises(ResumeError, match="state"):
        resume_command(out, sign_ins={"call_1": {"callback_url": forged}})
    # Sent anyway, past the helper: LangGraph refuses it before saving (response_schema).
    with pytest.raises(Exception) as refused:
        await harness.run("w1", value=Command(resume={pending.interrupt_id: {"callback_url": forged}}))
    assert is_invalid_resume(refused.value)
    assert await harness.pending_ids("w1") == [pending.interrupt_id]

    out = await harness.run("w1", value=Command(resume={pending.interrupt_id: {"callback_url": callback}}))
    assert tool_message(out).status != "error"

    # The same callback again, for a later sign-in of the same person (their tokens were revoked): replayed.
    oauth.revoke_refresh_tokens()
    oauth.expire_access_tokens()
    await expire_stored_access_token(harness.store, "alice")
    out = await harness.run("w2")
    later = the_sign_in(out)
    with pytest.raises(Exception) as replayed:
        await harness.run("w2", value=Command(resume={later.interrupt_id: {"callback_url": callback}}))
    assert is_invalid_resume(replayed.value)
    assert await harness.pending_ids("w2") == [later.interrupt_id]


async def test_declined_sign_in_ends_the_call_with_an_error_message(harness: Harness) -> None:
    out = await harness.run("d1", principal="carol")
    the_sign_in(out)
    out = await harness.run(
        "d1", principal="carol", value=resume_command(out, sign_ins={"call_1": {"action": "decline"}})
    )
    message = tool_message(out)
    assert message.status == "error"
    assert "declined" in str(message.content)


async def test_agent_chat_ui_mode_shows_a_sign_in_card_answered_by_its_callback_and_decision_boxes(
    oauth: OAuthServers, tmp_path: Path
) -> None:
    store = InMemoryStore()
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "ui.sqlite")) as saver:
        servers = McpServers(server_config(oauth, "modern"))
        try:
            h = Harness(
                build_graph(servers, saver, store, compat=True), servers, store, tmp_path / "ui.sqlite"
            )
            out = await h.run("u1", principal="uma")
            pending = the_sign_in(out)
            [card] = pending.payload["action_requests"]
            assert card["name"] == "sign_in"
            assert card["args"]["authorization_url"] == pending.payload["authorization_url"]
            assert pending.payload["review_configs"][0]["allowed_decisions"] == ["edit"]
            assert card["args"]["callback_url"] == "" and card["args"]["decision"] == ""
            callback = await person(card["args"]["authorization_url"])

            def typed(**boxes: str) -> dict[str, Any]:  # what Agent Chat UI sends: the card's boxes, typed in
                args = {**card["args"], **boxes}
                return {"decisions": [{"type": "edit", "edited_action": {"name": "sign_in", "args": args}}]}

            for nothing, why in (
                (typed(), "Decision is empty"),  # Submit, Ctrl+Enter, Reset
                (typed(callback_url=callback, decision=" "), "Decision holds only spaces"),
                (typed(decision="accept"), "Callback Url is empty"),
            ):
                with pytest.raises(AnswerRefusedError, match=why):
                    await h.run("u1", principal="uma", value=Command(resume={pending.interrupt_id: nothing}))
            reply = typed(callback_url=callback, decision="accept")
            out = await h.run("u1", principal="uma", value=Command(resume={pending.interrupt_id: reply}))
            assert tool_message(out).status != "error"

            out = await h.run("u2", principal="vic")
            pending = the_sign_in(out)
            [card] = pending.payload["action_requests"]
            out = await h.run(
                "u2", principal="vic", value=Command(resume={pending.interrupt_id: typed(decision="decline")})
            )
            assert "declined" in str(tool_message(out).content)
        finally:
            await servers.aclose()


async def test_without_a_store_tokens_live_in_this_process(oauth: OAuthServers, tmp_path: Path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "n.sqlite")) as saver:
        servers = McpServers(server_config(oauth, "legacy"))
        try:
            h = Harness(build_graph(servers, saver, None), servers, None, tmp_path / "n.sqlite")
            out = await h.run("n1", principal="nia")
            callback = await person(the_sign_in(out).payload["authorization_url"])
            await h.run(
                "n1",
                principal="nia",
                value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}}),
            )
            assert "__interrupt__" not in await h.run("n2", principal="nia")
        finally:
            await servers.aclose()
        servers = McpServers(server_config(oauth, "legacy"))  # another process's McpServers: nothing is kept
        try:
            h = Harness(build_graph(servers, saver, None), servers, None, tmp_path / "n.sqlite")
            assert the_sign_in(await h.run("n3", principal="nia")).payload["principal"] == "nia"
        finally:
            await servers.aclose()


async def expire_stored_access_token(store: BaseStore | None, principal: str) -> None:
    """What the passing of time does to the stored token: its expiry is now in the past."""
    assert store is not None
    item = await store.aget(oauth_namespace("secure", principal), "tokens")
    assert item is not None
    await store.aput(oauth_namespace("secure", principal), "tokens", {**item.value, "expires_at": 0})


async def stored_tokens(store: BaseStore | None, principal: str) -> dict[str, Any]:
    assert store is not None
    item = await store.aget(oauth_namespace("secure", principal), "tokens")
    assert item is not None
    return dict(item.value["token"])


@pytest.mark.parametrize("era", ERAS)
async def test_expired_access_token_is_refreshed_without_asking(
    oauth: OAuthServers, tmp_path: Path, era: str
) -> None:
    store = InMemoryStore()
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as saver:
        servers = McpServers(server_config(oauth, era))
        try:
            h = Harness(build_graph(servers, saver, store), servers, store, tmp_path / "c.sqlite")
            out = await h.run("r1", principal="dave")
            callback = await person(the_sign_in(out).payload["authorization_url"])
            await h.run(
                "r1",
                principal="dave",
                value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}}),
            )
            first = await stored_tokens(store, "dave")
        finally:
            await servers.aclose()
        refreshes = oauth.stats().get("refresh_token", 0)
        oauth.expire_access_tokens()
        await expire_stored_access_token(store, "dave")

        servers = McpServers(server_config(oauth, era))  # a fresh process's view: only the store
        try:
            h = Harness(build_graph(servers, saver, store), servers, store, tmp_path / "c.sqlite")
            out = await h.run("r2", principal="dave")
            assert "__interrupt__" not in out
            assert tool_message(out).status != "error"
        finally:
            await servers.aclose()
    assert oauth.stats()["refresh_token"] == refreshes + 1
    assert (await stored_tokens(store, "dave"))["access_token"] != first["access_token"]


async def test_revoked_refresh_token_asks_again(harness: Harness, oauth: OAuthServers) -> None:
    out = await harness.run("v1", principal="erin")
    callback = await person(the_sign_in(out).payload["authorization_url"])
    await harness.run(
        "v1", principal="erin", value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}})
    )
    oauth.revoke_refresh_tokens()
    oauth.expire_access_tokens()
    await expire_stored_access_token(harness.store, "erin")
    out = await harness.run("v2", principal="erin")
    assert the_sign_in(out).payload["principal"] == "erin"


@pytest.mark.parametrize("harness", ERAS, indirect=True)
async def test_a_refresh_refused_mid_call_asks_to_sign_in_again_and_the_call_then_runs(
    harness: Harness, oauth: OAuthServers
) -> None:
    who = "fay.doe@example.com"
    out = await harness.run("x1", principal=who)
    callback = await person(the_sign_in(out).payload["authorization_url"])
    await harness.run(
        "x1", principal=who, value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}})
    )
    # The server ends the access token and will refuse its refresh token; the stored record still looks valid, so
    # the call meets the 401 mid-call (on tools/call), tries the refresh, and is refused.
    oauth.revoke_refresh_tokens()
    oauth.expire_access_tokens()
    before = oauth.stats()
    out = await harness.run("x2", principal=who)

    sign_in = the_sign_in(out)  # asked to sign in again, in the same call
    assert sign_in.tool_call_id == "call_1" and sign_in.payload["principal"] == who
    after = oauth.stats()
    assert after.get("refresh_refused", 0) > before.get(
        "refresh_refused", 0
    )  # the refresh was tried, refused
    assert after.get("refresh_token", 0) == before.get("refresh_token", 0)

    callback = await person(sign_in.payload["authorization_url"])
    out = await harness.run(
        "x2", principal=who, value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}})
    )
    message = tool_message(out)  # the call was not lost: it ran once the person signed in again
    assert message.status != "error" and "current_time" in str(message.content)
    assert oauth.stats()["authorization_code"] == before["authorization_code"] + 1


async def test_tokens_never_reach_the_checkpoint_the_stream_or_the_logs(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    config = {"configurable": {"thread_id": "s1", "user_id": "frank"}}
    events: list[Any] = []
    async for event in harness.graph.astream(
        {"messages": [HumanMessage("time?")]}, config, stream_mode=["updates", "values", "custom", "debug"]
    ):
        events.append(event)
    state = await harness.graph.aget_state(config)
    pending = pending_interrupts(state)
    pending_record = await harness.store.aget(oauth_namespace("secure", "frank"), "pending")  # type: ignore[union-attr]
    assert pending_record is not None
    verifier = pending_record.value["verifier"]
    callback = await person(pending[0].payload["authorization_url"])
    async for event in harness.graph.astream(
        resume_command(pending, sign_ins={"call_1": {"callback_url": callback}}),
        config,
        stream_mode=["updates", "values", "custom", "debug"],
    ):
        events.append(event)
    tokens = await stored_tokens(harness.store, "frank")
    secrets = [tokens["access_token"], tokens["refresh_token"], verifier]
    assert all(secrets)

    with sqlite3.connect(harness.db) as db:
        rows = [bytes(v) if isinstance(v, bytes | memoryview) else str(v).encode() for t in ("checkpoints", "writes") for row in db.execute(f"SELECT * FROM {t}") for v in row if v is not None]  # fmt: skip
    blob = b"\n".join(rows)
    assert b"current_time" in blob or b"mcp_authorization" in blob  # the scan reads the real rows
    streamed = repr(events)
    logged = caplog.text
    for secret in secrets:
        assert secret.encode() not in blob
        assert secret not in streamed
        assert secret not in logged


# ------------------------------------------------------------------------------------------- many workers

from tests.scale.test_multiworker import pg_dsn, pg_server  # noqa: E402, F401  (the PostgreSQL tier's fixtures)

CHILD = Path(__file__).resolve().parents[1] / "support" / "oauth_worker_child.py"


async def worker(dsn: str, oauth: OAuthServers, *args: str) -> dict[str, Any]:
    """One run in a fresh worker process (its own McpServers), on the shared PostgreSQL checkpointer and store."""
    import json
    import sys

    with anyio.fail_after(HANG_GUARD):
        result = await anyio.run_process([sys.executable, str(CHILD), dsn, oauth.rs_url, *args], check=False)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    lines = [line for line in result.stdout.decode().splitlines() if line.startswith("{")]
    reply: dict[str, Any] = json.loads(lines[-1])
    return reply


async def test_another_worker_resumes_the_sign_in_and_a_third_uses_the_stored_token(
    oauth: OAuthServers,
    pg_dsn: str,  # noqa: F811
) -> None:
    who = "grace.hopper@example.com"  # an e-mail-shaped principal, in PostgreSQL's store
    paused = await worker(pg_dsn, oauth, "start", "m1", who)
    [payload] = paused["pending"]
    assert payload["type"] == "mcp_authorization" and payload["principal"] == who
    callback = await person(payload["authorization_url"])

    resumed = await worker(pg_dsn, oauth, "resume", "m1", who, callback)
    assert resumed["pid"] != paused["pid"]
    assert resumed["pending"] == []
    status, text = resumed["tool_message"]
    assert status != "error" and "current_time" in text

    codes = oauth.stats()["authorization_code"]
    third = await worker(pg_dsn, oauth, "start", "m2", who)
    assert third["pending"] == []
    assert third["tool_message"][0] != "error"
    assert oauth.stats()["authorization_code"] == codes

    # The token expires: a fourth worker refreshes it from what the others stored, without asking anyone.
    from langgraph.store.postgres.aio import AsyncPostgresStore

    async with AsyncPostgresStore.from_conn_string(pg_dsn) as store:
        await expire_stored_access_token(store, who)
    refreshes = oauth.stats().get("refresh_token", 0)
    fourth = await worker(pg_dsn, oauth, "start", "m3", who)
    assert fourth["pending"] == [] and fourth["tool_message"][0] != "error"
    assert oauth.stats()["refresh_token"] == refreshes + 1
    assert oauth.stats()["authorization_code"] == codes


# ------------------------------------------------------------------------------------------- the CLI


def test_cli_call_prints_the_link_reads_the_pasted_address_and_auth_lists_and_revokes(
    oauth: OAuthServers, tmp_path: Path
) -> None:
    import json
    import os
    import re
    import subprocess
    import sys

    import pexpect

    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": server_config(oauth, "auto")}))
    db = tmp_path / "cli.sqlite"
    env = {**os.environ, "TERM": "dumb", "NO_COLOR": "1", "LANGGRAPH_MCP_DB": str(db)}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "langgraph_mcp", "call", "secure_get_time", "--config", str(config),
         "--configurable", "user_id=tess"],
        env=env, dimensions=(50, 400), encoding="utf-8", timeout=HANG_GUARD,
    )  # fmt: skip
    try:
        # The gate can't look the tool up before the sign-in: the sign-in comes first, then the approval of the
        # real tool (the default policy asks about a tool that does not say it is not destructive).
        child.expect(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)")
        url = child.match.group(1)
        child.expect("Paste the address your browser was sent to")
        child.sendline(sign_in_as_person(url).replace("state=", "state=x"))  # a wrong one first: asked again
        child.expect("state does not match")
        child.expect("Paste the address your browser was sent to")
        child.sendline(sign_in_as_person(url))
        child.expect("Decision for secure_get_time")
        child.sendline("approve")
        child.expect(r"Remember this approval\? .*: ")  # tests/cli/test_cli_remember.py
        child.sendline("")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0, child.before
    assert "current_time" in (child.before or "")

    def cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "langgraph_mcp", "auth", *args, "--server", "secure", "--db", str(db)],
            capture_output=True, text=True, env=env, timeout=HANG_GUARD, check=True,
        )  # fmt: skip
        return done.stdout

    tokens = [str(v) for v in json.loads(json.dumps(_stored_cli_tokens(db))).values()]
    listed = cli("list")
    assert re.search(r"tess: scopes user; expires \S+; refreshable", listed), listed
    assert not any(token in listed for token in tokens if token)
    revoked_before = oauth.stats().get("revoked", 0)
    said = " ".join(cli("revoke", "--principal", "tess").split())  # rich wraps at the terminal width
    assert "revoked: tess" in said and "revoked at the authorization server" in said, said
    assert "No sign-ins" in cli("list")
    # RFC 7009: the authorization server itself was told, and the access token is dead there too.
    assert oauth.stats()["revoked"] > revoked_before
    introspected = httpx2.post(f"{oauth.as_url}/introspect", data={"token": tokens[0]}).json()
    assert introspected == {"active": False}


def _stored_cli_tokens(db: Path) -> dict[str, Any]:
    from langgraph.store.sqlite import SqliteStore

    with sqlite3.connect(db, check_same_thread=False, isolation_level=None) as conn:
        store = SqliteStore(conn)
        item = store.get(oauth_namespace("secure", "tess"), "tokens")
        assert item is not None
        token = item.value["token"]
        return {"access": token["access_token"], "refresh": token.get("refresh_token")}


async def test_outside_a_graph_the_error_carries_the_link_and_complete_sign_in_finishes_it(
    oauth: OAuthServers,
) -> None:
    from langgraph_mcp.errors import AnswerError, AuthorizationRequiredError

    config = {"configurable": {"user_id": "olga"}}
    servers = McpServers(server_config(oauth, "modern"))
    try:
        with pytest.raises(AuthorizationRequiredError) as needed:
            await servers.list_tools(config=config)
        assert needed.value.principal == "olga" and needed.value.server == "secure"
        callback = await person(needed.value.authorization_url)
        with pytest.raises(AnswerError, match="state"):
            await servers.complete_sign_in("secure", callback.replace("state=", "state=x"), config=config)
        await servers.complete_sign_in("secure", callback, config=config)
        tools = await servers.list_tools(config=config)
        assert [t.published_name for t in tools] == ["secure_get_time"]
    finally:
        await servers.aclose()


@pytest.mark.parametrize("era", ERAS)
async def test_get_tools_in_a_model_node_says_which_server_needs_a_sign_in_and_how_then_works(
    oauth: OAuthServers, era: str
) -> None:
    from langgraph_mcp.errors import SignInRequiredError

    servers = McpServers(server_config(oauth, era))
    listed: list[str] = []

    async def model(state: MessagesState) -> dict[str, Any]:
        listed.extend(tool.name for tool in await servers.get_tools())
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    store = InMemoryStore()
    graph = builder.compile(store=store)
    config = {"configurable": {"user_id": "ann.lee@example.com"}}
    try:
        with pytest.raises(SignInRequiredError) as needed:
            await graph.ainvoke({"messages": []}, config)
        error = needed.value
        assert error.server == "secure" and error.principal == "ann.lee@example.com"
        assert "MCP server 'secure'" in str(error) and "McpServers.complete_sign_in('secure'" in str(error)
        assert error.authorization_url in str(error) and not listed

        # Doing what it says works: sign in, hand the address over, list again (the store keeps the token).
        callback = await person(error.authorization_url)

        async def finish(state: MessagesState) -> dict[str, Any]:
            await servers.complete_sign_in("secure", callback)
            return {}

        done = StateGraph(MessagesState)
        done.add_node("finish", finish)
        done.add_node("model", model)
        done.add_edge(START, "finish")
        done.add_edge("finish", "model")
        done.add_edge("model", END)
        await done.compile(store=store).ainvoke({"messages": []}, config)
        assert listed == ["secure_get_time"]
    finally:
        await servers.aclose()


@pytest.mark.parametrize("era", ERAS)
async def test_a_sign_in_then_the_nodes_own_approval_chain_and_the_call_runs_once(
    oauth: OAuthServers, tmp_path: Path, era: str
) -> None:
    """Issue 35 item 6: a gate-less node, a tool with no annotations (asked about by default): the sign-in comes
    first, then the node's approval; both answered, the call runs (it used to end "not run")."""

    def agent(state: MessagesState) -> dict[str, Any]:
        if isinstance(state["messages"][-1], HumanMessage):
            call = {"name": "secure_get_time", "args": {}, "id": "call_1", "type": "tool_call"}
            return {"messages": [AIMessage(content="", tool_calls=[call])]}
        return {}

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as saver:
        servers = McpServers(server_config(oauth, era))
        try:
            builder = StateGraph(MessagesState)
            builder.add_node("agent", agent)
            builder.add_node("tools", McpToolNode(servers))
            builder.add_edge(START, "agent")
            builder.add_conditional_edges("agent", route_tool_calls, ["tools", END])
            builder.add_edge("tools", END)
            harness = Harness(
                builder.compile(checkpointer=saver, store=InMemoryStore()), servers, None, tmp_path
            )
            before = oauth.stats().get("authorization_code", 0)
            out = await harness.run("chain")
            sign_in = the_sign_in(out)
            callback = await person(sign_in.payload["authorization_url"])
            out = await harness.run(
                "chain", value=resume_command(out, sign_ins={"call_1": {"callback_url": callback}})
            )
            [approval] = pending_interrupts(out)
            assert approval.kind == "approval" and approval.payload["tool_call_id"] == "call_1"
            out = await harness.run(
                "chain", value=resume_command(out, decisions={"call_1": {"type": "approve"}})
            )
            message = tool_message(out)
            assert message.status != "error", message.content
            assert "current_time" in str(message.content)
            assert oauth.stats()["authorization_code"] == before + 1
        finally:
            await servers.aclose()


async def test_a_client_asserted_principal_meeting_per_user_tokens_is_warned_about_once(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    from langgraph_mcp import credentials

    monkeypatch.setattr(credentials, "_warned", set())
    with warnings.catch_warnings(record=True) as seen:  # custom auth's user: nothing to say
        warnings.simplefilter("always")
        await harness.graph.ainvoke(
            {"messages": [HumanMessage("what time is it?")]},
            {"configurable": {"thread_id": "w1", "langgraph_auth_user_id": "alice"}},
        )
    assert not [w for w in seen if "OAuth sign-in" in str(w.message)]
    with warnings.catch_warnings(record=True) as seen:  # configurable.user_id: any client sets it
        warnings.simplefilter("always")
        await harness.run("w2")
        await harness.run("w3", principal="bob")
    [warning] = [w for w in seen if "OAuth sign-in" in str(w.message)]
    text = str(warning.message)
    assert "'secure'" in text and "configurable.user_id" in text and "docs/security.md" in text
