"""Paused rounds: what a same-process resume needs to continue a tool call exactly where its graph paused.

A round is paused when the call driver raised an interrupt for a round of questions. Besides the answers (which
live in LangGraph's checkpoint), continuing the call needs state that only this process holds:

* legacy era — the ``tools/call`` itself, still open inside its ``elicitation/create`` (the answer goes straight
  to it, and the server sees one ordinary attempt);
* modern era — the round's ``requestState`` and its ``inputRequests``, sent back with the answers.

Nothing here is ever checkpointed. A round that is not found (another process, a restart, the park timeout) sends
the driver down the durable path: re-issue the call and answer it from the stored answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from langgraph_mcp.connection import CallHandle, ServerConnection

logger = logging.getLogger("langgraph_mcp.elicitation")

PauseKey = tuple[str, ...]
"""(thread id, checkpoint namespace, tool call id): one paused tool call of one graph task."""


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


class PausedRounds:
    """The paused rounds of one connection, by :data:`PauseKey`; a legacy round's open call ends at its deadline."""

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection
        self._rounds: dict[PauseKey, PausedRound] = {}

    def __len__(self) -> int:
        return len(self._rounds)

    def keep(self, key: PauseKey, paused: PausedRound) -> None:
        """Keep a paused round for a same-process resume; a legacy call lets other calls run while it waits."""
        paused.deadline = time.monotonic() + self.connection.spec.park_timeout
        paused.connection_start = self.connection.starts
        old = self._rounds.pop(key, None)
        if old is not None and old.legacy_call is not None and old.legacy_call is not paused.legacy_call:
            self.connection.spawn(old.legacy_call.abandon())
        call = paused.legacy_call
        if call is not None and self.open_legacy_calls() >= self.connection.parked_call_limit:
            # Each open legacy call holds a response (an HTTP connection) until it is answered: past the cap the
            # call is cancelled on the server instead, and the resume re-issues it (the durable path).
            logger.warning(
                "MCP server %r: %d legacy calls already wait for an answer (max_parked_calls, or fewer than the "
                "HTTP pool's max_connections); the call to %r is cancelled now and re-issued on resume",
                self.connection.name,
                self.connection.parked_call_limit,
                call.tool,
            )
            self.connection.spawn(call.abandon())
            return
        self._rounds[key] = paused
        if call is not None:
            self.connection.pause_legacy_call(call)
            self.connection.spawn(self._expire(key, paused))

    def open_legacy_calls(self) -> int:
        """How many kept rounds hold an open legacy call."""
        return sum(1 for paused in self._rounds.values() if paused.legacy_call is not None)

    def take(self, key: PauseKey) -> PausedRound | None:
        """The live paused round for ``key`` (removed), or ``None`` when it is gone: past its deadline, or (legacy)
        its call ended or the connection was restarted since (the server restarted): the durable path re-issues it."""
        paused = self._rounds.pop(key, None)
        if paused is None:
            return None
        call = paused.legacy_call
        if time.monotonic() > paused.deadline or (call is not None and not self._still_open(paused, call)):
            if call is not None:
                self.connection.spawn(call.abandon())
            return None
        return paused

    def _still_open(self, paused: PausedRound, call: CallHandle) -> bool:
        ended = call.route is not None and call.route.ended is not None
        return not (call.finished or ended or self.connection.starts != paused.connection_start)

    async def _expire(self, key: PauseKey, paused: PausedRound) -> None:
        await asyncio.sleep(max(0.0, paused.deadline - time.monotonic()))
        # A re-kept call gets a later deadline (and its own timer): only the timer that is due acts.
        if self._rounds.get(key) is paused and time.monotonic() >= paused.deadline:
            del self._rounds[key]
            call = paused.legacy_call
            assert call is not None
            await call.abandon()  # the router keeps it a possible owner of late questions for a grace period
            logger.info(
                "MCP server %r: a parked call to %r outlived its park timeout; cancelled",
                self.connection.name,
                call.tool,
            )
