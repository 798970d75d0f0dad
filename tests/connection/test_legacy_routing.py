"""The legacy router's rules on their own (no transport: stdio-like, nothing names the sending call).

The end-to-end behaviour over real servers is in ``tests/connection/test_legacy_concurrency.py``; these pin the rules the
module docstring states, including the ones a real server can't trigger on demand (a question in transit when its
call is cancelled, a question after a reconnect).
"""

from __future__ import annotations

import asyncio
import contextvars

import mcp.types as types
import pytest

from langgraph_mcp.connection.legacy_routing import ElicitReply, LegacyCallRouter, RoutedCall

pytestmark = pytest.mark.anyio
QUESTION = types.ElicitRequestFormParams(
    message="Which code?", requested_schema={"type": "object", "properties": {}}
)


class Answering:
    """A call's side of the router: records the questions it got and answers each with its own name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.got = 0

    async def __call__(self, params: types.ElicitRequestParams) -> ElicitReply:
        self.got += 1
        return types.ElicitResult(action="accept", content={"code": self.name})


async def begin(router: LegacyCallRouter, tool: str) -> tuple[RoutedCall, Answering]:
    answering = Answering(tool)
    return await router.begin(tool, answering), answering


async def push(router: LegacyCallRouter) -> asyncio.Task[ElicitReply]:
    """A question from the server, arriving with no sender in context (as on stdio)."""
    task = asyncio.get_running_loop().create_task(router.route(QUESTION), context=contextvars.Context())
    await asyncio.sleep(0)  # let it reach the router (held or answered)
    return task


async def test_the_only_running_call_gets_the_question_and_its_tool_then_runs_alone() -> None:
    router = LegacyCallRouter("s")
    a, _ = await begin(router, "ask")
    reply = await (await push(router))
    assert isinstance(reply, types.ElicitResult) and reply.content == {"code": "ask"}
    assert router.runs_alone("ask") and not router.runs_alone("other")
    router.end(a, "server")


async def test_a_held_question_goes_to_the_call_left_when_the_others_finish() -> None:
    router = LegacyCallRouter("s")
    a, got_a = await begin(router, "a")
    b, got_b = await begin(router, "b")
    question = await push(router)
    assert not question.done()  # two possible owners: held
    router.end(b, "server")  # the server finished b: the question is a's
    reply = await question
    assert isinstance(reply, types.ElicitResult) and reply.content == {"code": "a"}
    assert (got_a.got, got_b.got) == (1, 0)
    router.end(a, "server")


async def test_as_many_held_questions_as_running_calls_are_refused_never_guessed() -> None:
    router = LegacyCallRouter("s")
    calls = [await begin(router, tool) for tool in ("a", "b")]
    first = await push(router)
    second = await push(router)
    for question in (first, second):
        reply = await question
        assert isinstance(reply, types.ErrorData)
        assert "could not tell which of 2 concurrent tool calls (a, b)" in reply.message
    assert all(answering.got == 0 for _, answering in calls)
    assert router.runs_alone("a") and router.runs_alone("b")


async def test_a_call_cancelled_while_running_stays_a_possible_owner_for_the_grace() -> None:
    router = LegacyCallRouter("s")
    a, got_a = await begin(router, "a")
    router.end(a, "unsettled")  # cancelled: a question it sent may be in transit
    b, got_b = await begin(router, "b")
    reply = await (await push(router))
    # Either a's late question or b's: it can't be told, so b never gets it.
    assert isinstance(reply, types.ErrorData) and got_b.got == 0 and got_a.got == 0
    router.end(b, "server")


async def test_after_a_reconnect_calls_of_the_old_session_own_nothing() -> None:
    router = LegacyCallRouter("s")
    a, _ = await begin(router, "a")
    router.end(a, "unsettled")
    router.new_session()
    b, got_b = await begin(router, "b")
    reply = await (await push(router))
    assert isinstance(reply, types.ElicitResult) and got_b.got == 1
    router.end(b, "server")


async def test_a_tool_that_runs_alone_waits_for_the_others_and_holds_new_ones_back() -> None:
    router = LegacyCallRouter("s", exclusive_tools=["ask"])
    shared, _ = await begin(router, "read")
    alone = asyncio.ensure_future(begin(router, "ask"))
    await asyncio.sleep(0)
    assert not alone.done()  # waits for the running call
    later = asyncio.ensure_future(begin(router, "read"))
    await asyncio.sleep(0)
    assert not later.done()  # held back while a call that runs alone waits
    router.end(shared, "server")
    ask, _ = await alone
    await asyncio.sleep(0)
    assert not later.done() and router.in_flight == 1
    router.pause(ask)  # parked in its question: others may run
    read, _ = await later
    resumed = asyncio.ensure_future(router.resume(ask))
    await asyncio.sleep(0)
    assert not resumed.done()  # takes its turn again only once it is alone
    router.end(read, "server")
    await resumed
    router.end(ask, "server")
    assert router.in_flight == 0
