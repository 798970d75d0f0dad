"""Paused rounds: what a same-process resume needs to continue a tool call exactly where its graph paused.

A round is paused when the call driver raised an interrupt for a round of questions. Besides the answers (which
live in LangGraph's checkpoint), continuing the call needs state that only this process holds:

* legacy era — the ``tools/call`` itself, still open inside its ``elicitation/create`` (the answer goes straight
  to it, and the server sees one ordinary attempt);
* modern era — the round's ``requestState`` and its ``inputRequests``, sent back with the answers.

Nothing here is ever checkpointed. A round that is not found (another process, a restart, the park timeout) sends
the driver down the durable path: re-issue the call and answer it from the stored answers.

**The one re-issue rule for a parked legacy call** (:func:`may_reissue`): a parked call whose round can't be
continued (past ``max_parked_calls``, past its ``park_timeout``, or resumed where it is not parked: another worker,
or a restarted process) is sent again only when the two attempts can't both commit: its first attempt can no
longer complete (it ended, its session or server process ended, or the server confirmed the cancellation by
withdrawing its question), or its tool may run twice (read-only or idempotent by a trusted server's hints).
Otherwise the call fails with :class:`~langgraph_mcp.errors.ParkedCallNotReissuedError`, which says the first
attempt may still complete. What this process knows of a first attempt it ended is kept per paused call
(:meth:`PausedRounds.first_attempt`); a process that never held it knows nothing, so it may still complete.

A parked call whose thread has moved on (resumed elsewhere, or answered from the checkpoint) gives back its place
under ``max_parked_calls``: this layer sees the checkpointer (the connection layer does not). Each kept round holds
a :class:`StillPending` probe of its interrupt; when a new pause meets the cap, the probes are read (one
checkpoint read per parked call, only then) and the rounds whose interrupt is no longer pending are ended.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import logging
import os
import secrets
import socket
import time
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from langgraph.constants import CONFIG_KEY_CHECKPOINTER

from langgraph_mcp.connection.connection import ServerConnection
from langgraph_mcp.connection.legacy_calls import CallHandle, ProgressCallback
from langgraph_mcp.errors import ParkedCallNotReissuedError, TooManyParkedCallsError

logger = logging.getLogger("langgraph_mcp.elicitation")

PauseKey = tuple[str, ...]
"""(thread id, checkpoint namespace, tool call id): one paused tool call of one graph task."""


FirstAttempt = Literal["over", "may_complete"]
"""What is known of a parked legacy call's first attempt when the call would be sent again: ``over`` (it can no
longer complete) or ``may_complete`` (it may still complete, or nothing here knows)."""

ENDED_KEPT = 4096
"""How many ended first attempts a connection remembers (the oldest are forgotten, and then read as
``may_complete``: forgetting never allows a re-issue)."""


_LIVE: weakref.WeakValueDictionary[str, PausedRounds] = weakref.WeakValueDictionary()
"""This process's connections that may hold legacy calls open, by :attr:`PausedRounds.token`."""


@functools.cache
def _machine() -> str:
    """This machine, as a short digest (its host name and boot id), never the names themselves."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return hashlib.sha256(f"{socket.gethostname()}/{boot}".encode()).hexdigest()[:16]


def _started(pid: int) -> str | None:
    """When process ``pid`` started (its start time in clock ticks since boot, from ``/proc``): ``""`` when it is
    gone or a zombie, ``None`` when this system can't tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return "" if Path("/proc/self/stat").exists() else None
    except (OSError, IndexError):
        return None
    return "" if fields[0] in ("Z", "X") else fields[19]


def held_attempt(held_by: object) -> FirstAttempt:
    """What an interrupt's ``held_by`` token tells of the first attempt it names: ``over`` only when its connection
    in this process was closed or started a new session since, or its process on this machine has ended; anything
    else (another machine, a live process, no token) ``may_complete``."""
    parts = held_by.split(":") if isinstance(held_by, str) else []
    if len(parts) != 5 or parts[0] != _machine() or not parts[1].isdigit() or not parts[4].isdigit():
        return "may_complete"
    pid, started, token, starts = int(parts[1]), parts[2], parts[3], int(parts[4])
    if pid == os.getpid() and started == (_started(pid) or ""):
        rounds = _LIVE.get(token)
        owner = rounds.connection.owner if rounds is not None else None
        alive = owner is not None and not owner.closed and owner.starts == starts
        return "may_complete" if alive else "over"
    now = _started(pid)
    return "over" if now is not None and now != started else "may_complete"


def may_reissue(first_attempt: FirstAttempt, replayable: bool) -> bool:
    """The one rule for sending a parked legacy call again (past the cap, after the park timeout, on another
    worker): only when its first attempt can no longer complete, or its tool may run twice (``replayable``: trusted
    read-only or idempotent hints). Two attempts then never both commit."""
    return first_attempt == "over" or replayable


def not_reissued(server: str, tool: str, why: str) -> ParkedCallNotReissuedError:
    """The error for a parked legacy call :func:`may_reissue` does not let send again (``why``: where it was)."""
    detail = (
        f"the call to {tool!r} {why}, and is not sent again: its first attempt may still complete on the server, "
        "and its tool is not declared read-only or idempotent by a trusted server, so a second attempt could "
        "commit twice. Check on the server whether it ran; resume a thread on the worker that paused it (sticky "
        "routing of threads), or keep resumes within park_timeout"
    )
    return ParkedCallNotReissuedError(server, detail, tool=tool)


class StillPending:
    """Whether the interrupt a paused round raised is still pending in its thread's checkpoint: read from the
    checkpointer the paused run used (its thread, its checkpoints, the interrupt's id; nothing else of the run)."""

    __slots__ = ("_checkpointer", "_checkpoints", "_interrupt_id", "_thread")

    def __init__(self, configurable: Mapping[str, Any], interrupt_id: str) -> None:
        self._checkpointer = configurable.get(CONFIG_KEY_CHECKPOINTER)
        self._thread = configurable.get("thread_id")
        checkpoints = configurable.get("checkpoint_map")
        self._checkpoints = dict(checkpoints) if isinstance(checkpoints, Mapping) else {}
        self._interrupt_id = interrupt_id

    async def __call__(self) -> bool:
        """``False`` once the thread has moved on: a newer checkpoint (the paused step ended elsewhere), or the
        interrupt is no longer pending in it (answered, another question pending instead). ``True`` when it can't
        tell (the round stays kept)."""
        if self._checkpointer is None or self._thread is None or not self._checkpoints:
            return True
        for graph_ns, checkpoint_id in self._checkpoints.items():
            config: Any = {"configurable": {"thread_id": self._thread, "checkpoint_ns": graph_ns}}
            try:
                latest = await self._checkpointer.aget_tuple(config)
            except Exception:  # e.g. a sync-only checkpointer
                return True
            if latest is None:
                return True
            if latest.config["configurable"].get("checkpoint_id") != checkpoint_id:
                return False
            for write in latest.pending_writes or []:
                if (
                    len(write) == 3
                    and write[1] == "__interrupt__"
                    and isinstance(write[2], list | tuple)
                    and any(getattr(item, "id", None) == self._interrupt_id for item in write[2])
                ):
                    return True
        return False


class ProgressRelay:
    """A legacy call's progress callback, which outlives the graph run that started it when the call is parked: it
    forwards to the run the call belongs to now (nobody while parked), so the paused run is not kept alive and a
    resumed run streams the progress of the call it continues."""

    def __init__(self, target: ProgressCallback | None) -> None:
        self.target = target

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if self.target is not None:
            await self.target(progress, total, message)


@dataclass
class PausedRound:
    """One paused round of questions of one tool call."""

    legacy_call: CallHandle | None
    """Legacy: the open call, waiting inside its ``elicitation/create``. ``None`` for a modern round."""
    resume_index: int
    """Where this round's answer is in the task's resume values (the index of the interrupt it raised)."""
    round: int
    """Which round of questions of the call this is (1 for the first)."""
    request_state: str | None = None
    """Modern: the server's opaque ``requestState`` for this round, sent back with the answers."""
    input_requests: dict[str, Any] | None = None
    """Modern: the round's ``inputRequests`` as the server sent them (JSON), to rebuild the questions."""
    deadline: float = 0.0
    """``time.monotonic()`` after which the round is no longer continued (``park_timeout``)."""
    connection_start: int = 0
    """Which start of the connection the round belongs to: after a restart its open call is gone."""
    progress: ProgressRelay | None = None
    """Legacy: where the open call's progress goes (pointed at the resumed run by the driver)."""
    expiry: asyncio.TimerHandle | None = None
    """Legacy: the timer that ends the open call at ``deadline``."""
    replayable: bool = False
    """Legacy: the tool may safely run twice (trusted read-only or idempotent hints), so past
    ``max_parked_calls`` its call may be cancelled now and re-issued on resume."""
    still_pending: StillPending | None = None
    """Legacy: reads whether the thread still waits on this round (set when it pauses, by the asker)."""


class PausedRounds:
    """The paused rounds of one connection, by :data:`PauseKey`; a legacy round's open call ends at its deadline."""

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection
        self.kept: dict[PauseKey, PausedRound] = {}
        """The kept rounds (read it: empty means nothing to continue; :meth:`keep` and :meth:`take` change it)."""
        self._ending: dict[PauseKey, asyncio.Task[None]] = {}
        self._ended: OrderedDict[PauseKey, FirstAttempt] = OrderedDict()
        self.token = secrets.token_hex(8)
        """Names this connection's rounds in a ``held_by`` token (see :meth:`holder`)."""
        _LIVE[self.token] = self

    def holder(self) -> str:
        """The ``held_by`` token of a legacy call held open now on this connection (see :func:`held_attempt`)."""
        pid = os.getpid()
        return f"{_machine()}:{pid}:{_started(pid) or ''}:{self.token}:{self.connection.owner.starts}"

    def __len__(self) -> int:
        return len(self.kept)

    def keep(self, key: PauseKey, paused: PausedRound) -> None:
        """Keep a paused round for a same-process resume; a legacy call lets other calls run while it waits.

        Past the connection's cap on parked calls (``max_parked_calls``) a legacy call is not kept open: a
        replayable one is cancelled and re-issued on resume; any other raises :class:`TooManyParkedCallsError`
        (the caller cancels it), because a server that ignores the cancellation would run it twice."""
        paused.deadline = time.monotonic() + self.connection.spec.park_timeout
        paused.connection_start = self.connection.owner.starts
        self._ended.pop(key, None)  # a new attempt is the one that may be held open now
        old = self.kept.pop(key, None)
        if old is not None:
            _stop_expiry(old)
            if old.legacy_call is not None and old.legacy_call is not paused.legacy_call:
                self._end(key, old)
        call = paused.legacy_call
        if call is not None and self.open_legacy_calls() >= self.connection.legacy.parked_call_limit:
            # Each open legacy call holds a response (an HTTP connection) until it is answered: past the cap the
            # call is cancelled on the server instead, and the resume re-issues it (the durable path) - but only
            # when running it twice is safe: many servers don't honour a cancellation and finish the first run.
            # The first attempt is only being cancelled now: it may still complete.
            if not may_reissue("may_complete", paused.replayable):
                raise self._too_many(call)
            logger.warning(
                "MCP server %r: %d legacy calls already wait for an answer (max_parked_calls, or fewer than the "
                "HTTP pool's max_connections); the call to %r is cancelled now and re-issued on resume",
                self.connection.name,
                self.connection.legacy.parked_call_limit,
                call.tool,
            )
            self._end(key, paused)
            return
        self.kept[key] = paused
        if paused.progress is not None:
            paused.progress.target = None  # the run that started the call is pausing
        if call is not None:
            self.connection.legacy.pause(call)
            # A timer, not a task, and in an empty context: anything scheduled from the graph task carries a copy
            # of its context (the paused run's config, stream and callbacks) and would keep that run alive.
            paused.expiry = asyncio.get_running_loop().call_later(
                self.connection.spec.park_timeout, self._expire, key, paused, context=contextvars.Context()
            )

    def _too_many(self, call: CallHandle) -> TooManyParkedCallsError:
        conn = self.connection
        limit, cap = conn.legacy.parked_call_limit, conn.spec.max_parked_calls
        why = (
            f"max_parked_calls={cap}"
            if limit == cap
            else f"max_parked_calls={cap}; the HTTP pool allows {limit}"
        )
        detail = (
            f"the call to {call.tool!r} asked a question while {limit} legacy calls already wait for an answer on "
            f"this connection ({why}); it was cancelled on the server instead of pausing, and is not re-issued "
            "because its tool is not declared read-only or idempotent by a trusted server (what it did before "
            "asking may have happened). Answer the waiting calls first, or raise max_parked_calls"
        )
        return TooManyParkedCallsError(conn.name, detail, tool=call.tool)

    def open_legacy_calls(self) -> int:
        """How many kept rounds hold an open legacy call."""
        return sum(1 for paused in self.kept.values() if paused.legacy_call is not None)

    def take(self, key: PauseKey) -> PausedRound | None:
        """The live paused round for ``key`` (removed), or ``None`` when it is gone: past its deadline, or (legacy)
        its call ended or the connection was restarted since (the server restarted): the durable path re-issues it."""
        paused = self.kept.pop(key, None)
        if paused is None:
            return None
        _stop_expiry(paused)
        call = paused.legacy_call
        if time.monotonic() > paused.deadline or (call is not None and not self._still_open(paused, call)):
            if call is not None:
                self._end(key, paused)
            return None
        return paused

    def _still_open(self, paused: PausedRound, call: CallHandle) -> bool:
        ended = call.route is not None and call.route.ended is not None
        return not (call.finished or ended or self.connection.owner.starts != paused.connection_start)

    def _end(self, key: PauseKey, paused: PausedRound, why: str | None = None) -> None:
        """End a kept round's open call, in a task of its own, and remember what became of its first attempt."""
        call = paused.legacy_call
        assert call is not None
        # An empty context: a copy of the graph task's would keep its run alive while the call ends (and a timer
        # callback runs outside any task, where the owner's task group can't start a job).
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._ending_call(key, paused, why), context=contextvars.Context())
        self._ending[key] = task
        task.add_done_callback(
            lambda done: self._ending.pop(key, None) if self._ending.get(key) is done else None
        )

    async def _ending_call(self, key: PauseKey, paused: PausedRound, why: str | None) -> None:
        call = paused.legacy_call
        assert call is not None
        over = not self._still_open(paused, call)  # it ended, or its session did, before it was abandoned
        try:
            await call.abandon()  # the router keeps it a possible owner of late questions for a grace period
        finally:
            over = over or call.withdrawn or self.connection.owner.starts != paused.connection_start
            self._ended[key] = "over" if over else "may_complete"
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)
        if why is not None:
            logger.info(
                "MCP server %r: a parked call to %r %s; cancelled", self.connection.name, call.tool, why
            )

    async def first_attempt(self, key: PauseKey) -> FirstAttempt:
        """What this process knows of the first attempt of the paused call ``key``, which is sent again now: an
        attempt it is still ending is waited for (within the abandon grace); one it never held ``may_complete``."""
        ending = self._ending.get(key)
        if ending is not None:
            await asyncio.wait([ending])
        return self._ended.get(key, "may_complete")  # kept: the call's later attempts in this run ask again

    async def release_moved_on(self) -> int:
        """End the kept legacy rounds whose thread has moved on (their interrupt is no longer pending: resumed on
        another worker, or answered from the checkpoint), giving back their places under ``max_parked_calls``.
        One checkpoint read per parked call, run only when a new pause meets the cap. Returns how many ended."""
        probed = [(key, paused) for key, paused in self.kept.items() if paused.still_pending is not None]
        pending = await asyncio.gather(
            *(paused.still_pending() for _, paused in probed if paused.still_pending)
        )
        released = 0
        for (key, paused), still in zip(probed, pending, strict=True):
            if not still and self.kept.get(key) is paused:
                del self.kept[key]
                _stop_expiry(paused)
                self._end(key, paused, "belongs to a thread that has moved on")
                released += 1
        return released

    def _expire(self, key: PauseKey, paused: PausedRound) -> None:
        paused.expiry = None
        if self.kept.get(key) is not paused or self.connection.owner.closed:
            return
        del self.kept[key]
        self._end(key, paused, "outlived its park timeout")


def _stop_expiry(paused: PausedRound) -> None:
    timer, paused.expiry = paused.expiry, None
    if timer is not None:
        timer.cancel()
