"""Legacy call routing: which in-flight ``tools/call`` a pushed ``elicitation/create`` belongs to.

Calls on one 2025-11-25 connection run concurrently. The legacy wire names no originating request for a server's
question, so each question is attributed by the first rule that applies, and never guessed:

1. **The sending call** (streamable HTTP, in-process). The server sends a request's questions on that request's
   own channel (its POST's response stream), and the SDK runs the elicitation callback in a copy of the contextvars
   of the task that wrote the request; the call job marks itself in a contextvar, so the owner is known exactly.
2. **The only possible owner** (stdio, SSE, a question on the HTTP GET stream). The possible owners are the calls
   running and not already suspended in a question, plus, for a short grace, calls cancelled while running (a
   question may already be on its way); a call sent on an earlier session of the connection owns nothing on this
   one. One possible owner: the question is its. Several: the question is held, and each call the server finishes
   (with a result or an error response) is crossed off. If the owner still cannot be told — no possible owner
   running, or as many held questions as running possible owners (they may all be waiting for each other) — the
   server gets an **error answer** saying why, and every possible owner's tool runs alone from then on.

A tool that asked under rule 2, or is listed in the server's ``exclusive_tools`` (``"all"``: every tool), **runs
alone**: it waits for the connection's other calls and holds new ones back while it runs, so its questions are
never ambiguous. A parked call (paused inside its question for a human) lets other calls run, and takes its turn
again when resumed.
"""

from __future__ import annotations

import asyncio
import contextvars
import weakref
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Literal

import mcp.types as types

ElicitReply = types.ElicitResult | types.ErrorData
Deliver = Callable[[types.ElicitRequestParams], Awaitable[ElicitReply]]
CallEnd = Literal["server", "unsettled", "unsent"]
"""How a call ended: the server finished it (result or error response); it ended without that (cancelled, timed
out, connection lost), so a question of its may still arrive; or it was never sent."""

# How long a call that ended without the server finishing it stays a possible owner of a question.
UNSETTLED_GRACE_SECONDS = 1.0

# A weak reference: the contextvar is copied into every timer and task the call's request starts, and a cancelled
# timer stays in the loop's heap with that copy until its deadline (the SDK's read timeout: minutes), which kept
# finished calls (their handle, queue, scope) alive by the hundred.
_SENDING_CALL: contextvars.ContextVar[weakref.ref[RoutedCall] | None] = contextvars.ContextVar(
    "langgraph_mcp_sending_call", default=None
)


@dataclass(eq=False)
class RoutedCall:
    """One legacy ``tools/call`` as the router sees it."""

    tool: str
    deliver: Deliver
    """Hand a question to the call and wait for its answer."""
    alone: bool = False
    """Runs alone on the connection (its tool asks, or is configured so)."""
    running: bool = False
    """Has its turn (started and not parked)."""
    questions: int = 0
    """Questions routed to it and not answered yet (the server's tool is suspended in them)."""
    ended: CallEnd | None = None
    session: int = 0
    """The connection start it was sent on: a question on a later session can't be its."""


@dataclass(eq=False)
class _HeldQuestion:
    possible_owners: set[RoutedCall]
    verdict: asyncio.Future[RoutedCall | types.ErrorData] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class LegacyCallRouter:
    """Turns (who may run now) and question routing for the legacy calls of one connection."""

    def __init__(self, server: str, exclusive_tools: Collection[str] | Literal["all"] = ()) -> None:
        self.server = server
        self._all_alone = exclusive_tools == "all"
        self._alone_tools: set[str] = set() if exclusive_tools == "all" else set(exclusive_tools)
        self._calls: set[RoutedCall] = set()
        """Calls that may own a question: started and not finished by the server (and not past the grace)."""
        self._held: list[_HeldQuestion] = []
        self._shared = 0
        self._alone: RoutedCall | None = None
        self._alone_waiting = 0
        self._changed = asyncio.Event()
        self._waiting = 0
        """Calls waiting for a turn (on ``_changed``)."""
        self._session = 0

    def new_session(self) -> None:
        """The connection (re)started: calls sent on the old session can't own questions on the new one."""
        self._session += 1
        self._calls = {c for c in self._calls if c.session == self._session}

    # ------------------------------------------------------------------------------------------- turns

    def runs_alone(self, tool: str) -> bool:
        return self._all_alone or tool in self._alone_tools

    @property
    def in_flight(self) -> int:
        """Calls holding a turn now."""
        return self._shared + (self._alone is not None)

    def begin_now(self, tool: str, deliver: Deliver) -> RoutedCall | None:
        """:meth:`begin` without waiting: the registered call if it may run at once, else ``None``."""
        # _may_run, _run and _register in one go: this runs on every legacy call.
        alone = self._all_alone or tool in self._alone_tools
        if self._alone is not None or (self._shared if alone else self._alone_waiting):
            return None
        call = RoutedCall(tool, deliver, alone=alone, running=True, session=self._session)
        if alone:
            self._alone = call
        else:
            self._shared += 1
        self._calls.add(call)
        return call

    async def begin(self, tool: str, deliver: Deliver) -> RoutedCall:
        """Register a call about to be sent, once it may run (a call that runs alone waits for the others)."""
        call = RoutedCall(tool, deliver)
        await self._take_turn(call)
        return self._register(call)

    def _register(self, call: RoutedCall) -> RoutedCall:
        call.session = self._session
        self._calls.add(call)
        return call

    def enter(self, call: RoutedCall) -> None:
        """Mark the current task (the call's job, before it sends) as the sender of ``call``."""
        _SENDING_CALL.set(weakref.ref(call))

    def pause(self, call: RoutedCall) -> None:
        """The call is parked inside its question: let other calls run meanwhile."""
        self._give_turn(call)

    async def resume(self, call: RoutedCall) -> None:
        """A parked call is about to get its answer: take a turn again."""
        if not call.running and call.ended is None:
            await self._take_turn(call)

    def end(self, call: RoutedCall, how: CallEnd) -> None:
        """The call's job is over (idempotent: the first end counts)."""
        if call.ended is not None:
            return
        call.ended = how
        # An ended call is never delivered to (see _ask). Its handle's deliver would keep the cycle handle -> route
        # -> handle.deliver alive, so a finished call would wait for the cycle collector instead of being freed.
        call.deliver = _ended
        if how != "unsettled" and not self._held and not self._waiting:
            # Nothing is held or waits for a turn (every call that asked nothing): _give_turn and _forget, with
            # nothing to notify or settle.
            if call.running:
                call.running = False
                if self._alone is call:
                    self._alone = None
                else:
                    self._shared -= 1
            self._calls.discard(call)
            return
        self._give_turn(call)
        if how == "unsettled" and not call.questions:
            # Cancelled while running: a question it sent just before may still be on its way. (A call cancelled
            # while suspended in a question sends nothing new before that question is answered.)
            asyncio.get_running_loop().call_later(UNSETTLED_GRACE_SECONDS, self._forget, call)
            self._settle()
        else:
            for held in self._held:
                held.possible_owners.discard(call)  # the server finished it, so the question is not its
            self._forget(call)

    def _may_run(self, call: RoutedCall) -> bool:
        """Whether ``call`` may take a turn now (one that runs alone needs the connection to itself; a shared one
        waits while a call that runs alone runs or waits)."""
        if call.alone:
            return self._alone is None and not self._shared
        return self._alone is None and not self._alone_waiting

    def _run(self, call: RoutedCall) -> None:
        if call.alone:
            self._alone = call
        else:
            self._shared += 1
        call.running = True

    async def _take_turn(self, call: RoutedCall) -> None:
        call.alone = self.runs_alone(call.tool)
        if call.alone:
            self._alone_waiting += 1
            try:
                while not self._may_run(call):
                    await self._wait_for_change()
            finally:
                self._alone_waiting -= 1
        else:
            while not self._may_run(call):
                await self._wait_for_change()
        self._run(call)

    def _give_turn(self, call: RoutedCall) -> None:
        if not call.running:
            return
        call.running = False
        if self._alone is call:
            self._alone = None
        else:
            self._shared -= 1
        self._notify()

    async def _wait_for_change(self) -> None:
        self._waiting += 1
        try:
            await self._changed.wait()
        finally:
            self._waiting -= 1

    def _notify(self) -> None:
        if not self._waiting:
            return  # nobody to wake: keep the event (a new one per turn given back cost every call)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _forget(self, call: RoutedCall) -> None:
        self._calls.discard(call)
        self._settle()

    # ------------------------------------------------------------------------------------------- questions

    async def route(self, params: types.ElicitRequestParams) -> ElicitReply:
        """Answer a pushed question: through the call it belongs to, or with an error if that can't be told."""
        sending = _SENDING_CALL.get()
        if sending is not None:  # even if it has ended: then the question is a late one of a finished call
            sender = sending()
            return await self._ask(sender, params) if sender is not None else _abandoned()
        owners = self._possible_owners()
        if not owners:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message="langgraph-mcp received an elicitation it cannot attribute to a tool call; declined.",
            )
        if len(owners) == 1:
            (owner,) = owners
            self._alone_tools.add(owner.tool)
            return await self._ask(owner, params)
        held = _HeldQuestion(owners)
        self._held.append(held)
        try:
            self._settle()
            verdict = await held.verdict
        finally:
            self._held.remove(held)
            self._settle()
        if isinstance(verdict, types.ErrorData):
            return verdict
        return await self._ask(verdict, params)

    def _possible_owners(self) -> set[RoutedCall]:
        return {c for c in self._calls if c.questions == 0 and (c.running or c.ended is not None)}

    async def _ask(self, call: RoutedCall, params: types.ElicitRequestParams) -> ElicitReply:
        if call.ended is not None:
            return _abandoned()
        call.questions += 1
        try:
            return await call.deliver(params)
        finally:
            call.questions -= 1

    def _settle(self) -> None:
        """Decide every held question that can be decided now."""
        open_questions = [h for h in self._held if not h.verdict.done()]
        decisions: list[tuple[_HeldQuestion, RoutedCall | types.ErrorData]] = []
        for held in open_questions:
            running = {c for c in held.possible_owners if c.running and c.ended is None and c.questions == 0}
            if len(held.possible_owners) == 1:
                (owner,) = held.possible_owners
                if owner in running or owner.ended is not None:  # an ended owner gets the abandoned answer
                    decisions.append((held, owner))
                    continue
            competing = sum(1 for h in open_questions if h.possible_owners & held.possible_owners)
            if len(running) <= competing:
                decisions.append((held, self._unattributable(held)))
        for held, verdict in decisions:
            if isinstance(verdict, RoutedCall):
                self._alone_tools.add(verdict.tool)
            held.verdict.set_result(verdict)

    def _unattributable(self, held: _HeldQuestion) -> types.ErrorData:
        tools = sorted({c.tool for c in held.possible_owners})
        self._alone_tools.update(tools)
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message=(
                f"langgraph-mcp could not tell which of {len(held.possible_owners)} concurrent tool calls "
                f"({', '.join(tools)}) this question belongs to (this transport names no originating request), "
                "so it was not answered. From now on these tools run one call at a time: call it again, or list "
                "them in this server's exclusive_tools to start that way."
            ),
        )


async def _ended(params: types.ElicitRequestParams) -> ElicitReply:
    return _abandoned()


def _abandoned() -> types.ErrorData:
    return types.ErrorData(code=types.INTERNAL_ERROR, message="The client abandoned this tool call.")
