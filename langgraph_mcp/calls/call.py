"""One tool call: where it goes (:class:`CallTarget`), and the call as the driver runs it (:class:`DrivenCall`).

The servers layer resolves the target once for the current run (:mod:`langgraph_mcp.servers.access`): this event
loop's connection for the run's credentials, the paused rounds kept on it, the headers, the output routing and, for
the tool node's calls, the listing the tool was resolved from and judged on, whose freshness is the one answer to "is
the tool still what its server lists?" (:meth:`CallTarget.listed_now`). The driver (:mod:`.driver`) and the
interceptors (:mod:`.interceptors`) take only this object; nothing in them reaches back up to the servers layer.

While the driver runs the call, it is a :class:`DrivenCall`: the target, the arguments and the call's
:class:`~.asker.InterruptAsker` (``None``: nobody can answer a question), which is also what answering its sampling
requests (:mod:`.sampling`) and following its task (:mod:`.tasks`) take. A target of fixed credentials outlives its
calls (the servers layer hands it out again while its listing holds); the asker outlives one drive (a call is driven
again after a sign-in, a re-listing or an interceptor's retry, and its place among the answers goes on).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.calls.observers import server_metadata
from langgraph_mcp.calls.paused import PausedRound, PausedRounds
from langgraph_mcp.catalog import McpTool
from langgraph_mcp.config import OutputRouting
from langgraph_mcp.connection.connection import ProgressCallback, ServerConnection
from langgraph_mcp.connection.logs import LOG_SINK, LogSink
from langgraph_mcp.credentials import Identity
from langgraph_mcp.errors import ElicitationUnavailableError, TooManyRoundsError
from langgraph_mcp.payloads import (
    ELICITATION_INTERRUPT_TYPE,
    ElicitationAnswers,
    ElicitationInterrupt,
    ElicitationRequest,
)

__all__ = ["CallTarget", "DrivenCall", "ToolListing"]


class ToolListing(Protocol):
    """The listing a tool was resolved from (a :class:`~langgraph_mcp.servers.listings.Listing`)."""

    @property
    def by_name(self) -> Mapping[str, McpTool]: ...

    @property
    def fresh(self) -> bool: ...


@dataclass(frozen=True)
class CallTarget:
    """One tool call's destination for the current run (the servers layer builds it, see the module docstring)."""

    tool: McpTool
    conn: ServerConnection
    """This event loop's connection to the tool's server for the credentials the call is sent with."""
    paused: PausedRounds
    """The paused rounds kept on :attr:`conn` (see :mod:`.paused`)."""
    identity: Identity
    """The credentials the call is sent with (their digest goes with a task handle)."""
    routing: OutputRouting
    """Where the parts of the server's result go (see :mod:`.results`)."""
    retarget: Callable[[dict[str, str]], CallTarget]
    """The same call sent with other headers (an interceptor's override): another identity, another connection."""
    listing: ToolListing | None = None
    """The run's listing the tool was resolved from and judged on (``None``: there was none: never sent when
    :attr:`checked`)."""
    checked: bool = False
    """Whether :meth:`listed_now` holds the call back when the tool is no longer what the server lists (the tool
    node's calls, which were proven on that listing)."""
    lease: Callable[[], contextlib.AbstractContextManager[None]] | None = None
    """Keeps a per-run identity's connection from being closed as idle while the call runs (``None``: fixed
    credentials, nothing to hold)."""

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP headers the call is sent with (empty for stdio and in-process servers)."""
        return dict(self.identity.headers or {})

    def listed_now(self) -> bool:
        """Whether the tool is still what its server lists: the listing its resolution found it in, and it was
        judged on, is fresh (same process or session, within its ``ttlMs`` or ``listing_max_age``, not dropped or
        replaced since) and holds this very tool. The one tool-level answer (the driver asks it after connecting,
        before every send); always true for a call that is not :attr:`checked`. No I/O."""
        if not self.checked:
            return True
        listing = self.listing
        return (
            listing is not None
            and listing.fresh
            and listing.by_name.get(self.tool.published_name) is self.tool
        )

    def run_metadata(self) -> dict[str, Any]:
        """What the call's tool run says about its server (:func:`~.observers.server_metadata`)."""
        return server_metadata(self.conn.spec.transport, self.conn.owner.protocol_version)

    def for_headers(self, headers: dict[str, str]) -> CallTarget:
        """This call sent with ``headers`` (itself when they are the ones it has)."""
        return self if headers == self.headers else self.retarget(headers)

    def held(self) -> contextlib.AbstractContextManager[None]:
        """While the call runs: the server's log messages go to this context's
        :data:`~langgraph_mcp.connection.logs.LOG_SINK`, and a per-run connection is not closed as idle."""
        logs = self.conn.logs
        sink = (
            LOG_SINK.get() if not logs.quiet else None
        )  # quiet: the server sends none (see ServerLogs.quiet)
        if sink is None and self.lease is None:
            return _NOTHING_TO_HOLD  # nothing to listen for, fixed credentials: nothing to do around the call
        return self._holding(sink)

    @contextlib.contextmanager
    def _holding(self, sink: LogSink | None) -> Iterator[None]:
        with (
            self.conn.logs.listening(sink) if sink is not None else _NOTHING_TO_HOLD,
            self.lease() if self.lease is not None else _NOTHING_TO_HOLD,
        ):
            yield


_NOTHING_TO_HOLD = contextlib.nullcontext()


@dataclass(frozen=True)
class DrivenCall:
    """One tool call being driven (by :mod:`.driver`, and by :mod:`.sampling` and :mod:`.tasks` for it): where it
    goes, what it sends, and who answers its questions."""

    target: CallTarget
    arguments: dict[str, Any]
    tool_call_id: str
    asker: InterruptAsker | None
    """Who answers the call's questions (``None``: nobody can; a question is an error)."""
    progress: ProgressCallback | None
    approved: bool = False
    """A human approved this call (the policy alone would not run it): after a transport failure it is sent again
    only when its trusted hints say read-only (see :func:`~.driver.may_send_again`)."""
    said_no: list[tuple[str, str]] = field(default_factory=list)
    """``(mode, action)`` of every question of this call the person declined or cancelled (``form``/``url``,
    ``decline``/``cancel``), in the order asked: the result then says so in words (see the driver)."""

    @property
    def conn(self) -> ServerConnection:
        return self.target.conn

    @property
    def tool(self) -> McpTool:
        return self.target.tool

    async def ask(
        self, round_: int, requests: dict[str, ElicitationRequest], live: PausedRound | None = None
    ) -> ElicitationAnswers:
        """Answers for one round (stored, or a new interrupt). When the graph must pause, ``live`` (an open legacy
        call or a modern requestState) is kept so a same-process resume can continue it (see the asker)."""
        if self.asker is None:
            detail = (
                f"MCP tool {self.tool.published_name!r} asked for user input; run it through McpToolNode (or the "
                "tools from get_tools() inside a graph with a checkpointer) so the question can become an interrupt"
            )
            raise ElicitationUnavailableError(self.tool.server, detail, tool=self.tool.name, message=detail)
        payload: ElicitationInterrupt = {
            "type": ELICITATION_INTERRUPT_TYPE,
            "tool_call_id": self.tool_call_id,
            "server": self.tool.server,
            "tool": self.tool.name,
            "published_name": self.tool.published_name,
            "arguments": self.arguments,
            "round": round_,
            "requests": requests,
        }
        if live is not None and live.legacy_call is not None:  # held open while it waits: say where
            payload["held_by"] = self.target.paused.holder()
        answers = await self.asker.answer(
            payload, requests, (self.target.paused, live) if live is not None else None
        )
        for key, answer in answers.items():
            if answer.get("action") in ("decline", "cancel") and key in requests:
                self.said_no.append((str(requests[key].get("mode", "form")), str(answer["action"])))
        return answers

    def start_over(self) -> None:
        if self.asker is not None:
            self.asker.start_over()

    def check_rounds(self, round_: int, what: str) -> None:
        cap = self.conn.spec.max_elicitation_rounds
        if round_ > cap:
            detail = (
                f"MCP tool {self.tool.published_name!r} on server {self.tool.server!r} asked more than {cap} "
                f"{what} (max_elicitation_rounds); stopped it"
            )
            raise TooManyRoundsError(self.tool.server, detail, tool=self.tool.name, message=detail)
