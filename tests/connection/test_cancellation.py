"""A cancellation is never swallowed (issue 11 §4): a caller cancelled while the connection layer waits gets its
``CancelledError``, and what the wait was for (a server's question answered, a call's turn released) still happens.

Real servers: the demo server in-process (legacy era) with one extra tool that keeps its question open when its
call is cancelled, the way servers on the TypeScript SDK 1.x do.
"""

from __future__ import annotations

import asyncio

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import AcceptedElicitation, Context

import langgraph_mcp.connection.legacy_calls as legacy_calls_module
from langgraph_mcp.config import InProcessServer
from langgraph_mcp.connection.legacy_calls import DoneEvent, ElicitEvent
from langgraph_mcp.connection.owner import ClientOwner
from langgraph_mcp.examples.demo_server import DemoServer, TripDate, build_server
from langgraph_mcp.servers.mcp_servers import server_access
from tests.support.helpers import OpenServers

STUBBORN = "ask_ignoring_cancel"


def stubborn_server() -> DemoServer:
    """The demo server plus a tool whose question outlives the cancellation of its call (it records the answer)."""
    srv = build_server()
    rec = srv.events.record

    @srv.tool(name=STUBBORN)
    async def ask_ignoring_cancel(ctx: Context) -> str:
        rec(STUBBORN, "asked")
        with anyio.CancelScope(shield=True):  # notifications/cancelled does not withdraw the question
            try:
                result = await ctx.elicit("When do you want to travel?", TripDate)
            except Exception as exc:  # the client answered the question with an error
                rec(STUBBORN, "answered:error", message=str(exc))
                raise
            rec(STUBBORN, f"answered:{result.action}")
        return "booked" if isinstance(result, AcceptedElicitation) else "not booked"

    return srv


@pytest.mark.anyio
async def test_a_caller_cancelled_during_the_abandon_grace_is_cancelled_and_the_question_still_answered(
    open_servers: OpenServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A grace far longer than the test: the cancellation below lands inside it, never after it ran out.
    monkeypatch.setattr(legacy_calls_module, "ABANDON_GRACE_SECONDS", 60.0)
    srv = stubborn_server()
    servers = open_servers(
        {"demo": {"transport": "in_process", "server": srv, "mode": "legacy", "exclusive_tools": [STUBBORN]}}
    )
    conn = server_access(servers).connections.connection("demo")
    handle = await conn.legacy.start_call(STUBBORN, {})
    event = await handle.next_event(10)
    assert isinstance(event, ElicitEvent)

    abandoning = asyncio.ensure_future(handle.abandon())
    # The server got notifications/cancelled and still holds its question open: abandon() is in its grace wait.
    with anyio.fail_after(10):
        await srv.events.reached("server.cancelled")
    assert not abandoning.done()
    assert srv.events.counts[f"{STUBBORN}.answered:error"] == 0
    abandoning.cancel()
    with pytest.raises(asyncio.CancelledError):
        await abandoning
    assert abandoning.cancelled()

    # The cancelled caller did not leave the server's question open: it got the error answer (server-side record).
    with anyio.fail_after(10):
        await srv.events.reached(f"{STUBBORN}.answered:error")
    assert srv.events.counts[f"{STUBBORN}.answered:error"] == 1
    assert srv.events.counts[f"{STUBBORN}.answered:accept"] == 0
    # ... nor the call holding its turn: a call that must run alone gets through.
    handle2 = await conn.legacy.start_call(STUBBORN, {})
    assert isinstance(await handle2.next_event(10), ElicitEvent)
    handle2.reply(types.ElicitResult(action="accept", content={"date": "2027-01-02"}))
    done = await handle2.next_event(10)
    assert isinstance(done, DoneEvent) and isinstance(done.result, types.CallToolResult)
    assert srv.events.counts[f"{STUBBORN}.answered:accept"] == 1


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_keyboard_interrupt_in_the_owner_task_stops_the_loop_instead_of_being_kept_as_an_error(
    stop: type[BaseException],
) -> None:
    # Its own event loop (not the test's): the interrupt must reach asyncio.run, which a test loop can't survive.
    seen: list[BaseException] = []

    async def stop_the_process(
        client: Client,
    ) -> None:  # e.g. Ctrl-C, or sys.exit(), in the owner task itself
        raise stop

    async def main() -> None:
        owner = ClientOwner(
            "demo",
            InProcessServer(server=build_server(), mode="legacy"),
            options=dict,
            on_invalid=lambda exc: None,
            on_new_session=lambda: None,
            on_connected=stop_the_process,
        )
        try:
            await owner.client()
        except Exception as exc:  # old code: the interrupt kept as a connection error ("could not connect")
            seen.append(exc)
        finally:
            await owner.close()

    with pytest.raises(stop):
        asyncio.run(main())
    assert seen == []
