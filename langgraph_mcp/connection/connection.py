"""The requests of one MCP server connection in one event loop: calls come from anywhere.

:class:`~langgraph_mcp.connection.owner.ClientOwner` keeps the ``mcp.Client`` alive in its owner task; a
:class:`ServerConnection` runs a modern call in the caller's own task, a legacy call in a task of the session
(:class:`~langgraph_mcp.connection.legacy_calls.LegacyCalls`) that hands results and server questions back through a
:class:`~langgraph_mcp.connection.legacy_calls.CallHandle`, and
turns every failure under a request into one of our errors (a transport failure is never a bare cancellation). A
legacy call's task belongs to the connection, not to the caller, so a call that is waiting for a human's answer can
stay open ("parked") after the graph node that started it has been interrupted.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import mcp.types as types
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.extension import ClientExtension, advertise
from mcp.client.session import ClientSession
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from langgraph_mcp.config import ServerSpec
from langgraph_mcp.connection.failures import FailureReader, is_connection_lost
from langgraph_mcp.connection.legacy_calls import LegacyCalls
from langgraph_mcp.connection.legacy_calls import ProgressCallback as ProgressCallback
from langgraph_mcp.connection.legacy_routing import ElicitReply, LegacyCallRouter
from langgraph_mcp.connection.logs import ServerLogs, quiet_for
from langgraph_mcp.connection.owner import (
    ClientOwner,
    ListChanged,
    ListKind,
)
from langgraph_mcp.connection.requests import RequestJobs
from langgraph_mcp.connection.tasks import TaskCreated, TasksExtension, offers_tasks
from langgraph_mcp.connection.timers import EventDeadlines
from langgraph_mcp.credentials import CALL_META
from langgraph_mcp.errors import (
    InvalidResponseError,
    ToolCallTimeoutError,
)
from langgraph_mcp.payloads import APP_MIME_TYPE, APPS_EXTENSION

logger = logging.getLogger("langgraph_mcp.connection")

T = TypeVar("T")

_LIST_CHANGED: dict[type, ListKind] = {
    types.ToolListChangedNotification: "tools",
    types.ResourceListChangedNotification: "resources",
    types.PromptListChangedNotification: "prompts",
}
"""The legacy-era notifications that say a listing changed."""


class ServerConnection:
    """A connection to one MCP server, bound to the event loop it was started in: its requests, its modern calls
    and the server's callbacks. The client and its state (era, starts, backoff) are :attr:`owner`'s, the legacy
    calls :attr:`legacy`'s, the requests in flight :attr:`jobs`'."""

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        *,
        on_list_changed: ListChanged | None = None,
    ) -> None:
        self.name = name
        self.spec = spec
        self._on_list_changed = on_list_changed
        self.logs = ServerLogs(name, quiet=quiet_for(spec.mode, spec.log_level))
        """The server's log messages (see :mod:`langgraph_mcp.connection.logs`)."""
        self.router = LegacyCallRouter(name, spec.exclusive_tools)
        """Which legacy call a pushed question belongs to, and which calls must run alone."""
        self.owner = ClientOwner(
            name,
            spec,
            options=self._client_options,
            on_invalid=self._on_invalid_message,
            on_new_session=self.router.new_session,
            on_connected=self._on_connected,
            on_list_changed=on_list_changed,
        )
        """The owner task holding the ``Client``: starts, restarts with backoff, stops."""
        self.failures = FailureReader(name, spec, self.owner)
        """What a caller sees for a failure under a request."""
        self.event_deadlines = EventDeadlines()
        """The one timer for the waits of this connection's calls for their next event."""
        self.sampling_counts: collections.Counter[str] = collections.Counter()
        """Sampling requests answered per thread (see calls.sampling): the cap counts here."""
        self.jobs = RequestJobs(name, self.owner, self.failures, self.event_deadlines)
        """The requests in flight (a bad server message fails them at once), and :meth:`request`'s owner job."""
        self.legacy = LegacyCalls(
            name, spec, self.owner, self.router, self.failures, self.jobs, self.event_deadlines
        )
        """The legacy-era calls: each in a task of the session, which may stay parked inside its question."""
        self._tasks_session: Client | None = None
        self._offers_tasks = False
        """:attr:`offers_tasks` for the session of ``_tasks_session``."""

    # ------------------------------------------------------------------------------------------- the client

    def _client_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "elicitation_callback": self._on_elicit,
            "message_handler": self._on_message,
            "logging_callback": self.logs.on_message,
            "log_level": self.spec.log_level,
        }
        if self.spec.roots is not None:
            options["list_roots_callback"] = self._on_list_roots
        if self.spec.sampling_model is not None:  # legacy: pushed sampling/createMessage, routed to its call
            options["sampling_callback"] = self._on_sample
        extensions: list[ClientExtension] = []
        if self.spec.tasks:  # advertised on the 2026-07-28 revision only (the SDK drops the claim on legacy)
            extensions.append(TasksExtension())
        if self.spec.apps:  # only to a server that offers it (the owner task checks), with what can be shown
            extensions.append(advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]}))
        if extensions:
            options["extensions"] = extensions
        return options

    async def _on_connected(self, client: Client) -> None:
        await self.logs.ask_for_level(client, self.spec.log_level)

    # ------------------------------------------------------------------------------------------- failures

    def _on_invalid_message(self, error: Exception) -> None:
        """The server sent something that looks like JSON-RPC but cannot be parsed: whatever request it answered
        would wait forever, so every request in flight (except calls waiting for a human) fails at once."""
        self.jobs.fail_all(self.failures.invalid_message(error))

    def _call_error(self, tool: str, exc: BaseException, client: Client) -> BaseException:
        return self.failures.read(exc, client, what=f"the call to {tool!r}", tool=tool)

    # ------------------------------------------------------------------------------------------- requests

    async def request(
        self, make: Callable[[Client], Awaitable[T]], *, timeout: float, what: str = "a request"
    ) -> T:
        """Run one request as a job of the owner task; a finite timeout always applies.

        A transport failure is always a :class:`ServerConnectionError` for the caller, never a cancellation.
        """
        return await self.jobs.run(make, timeout=timeout, what=what)

    @property
    def offers_tasks(self) -> bool:
        """The live session is modern, this server offers the tasks extension, and the package advertises it.

        A fact of the session, read from its capabilities once (this is asked on every modern call)."""
        client = self.owner.current
        if client is not self._tasks_session:
            self._tasks_session = client
            self._offers_tasks = (
                client is not None
                and self.spec.tasks
                and not self.owner.is_legacy
                and offers_tasks(client.server_capabilities)
            )
        return self._offers_tasks

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        input_responses: dict[str, Any] | None = None,
        request_state: str | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult | TaskCreated:
        """One ``tools/call`` awaited in the caller's own task, for calls that can't pause inside the server
        (2026-07-28: questions come back as an ``InputRequiredResult``). No owner job and no event queue: those hops
        made a call cost ~1.1x the raw SDK call; a lost transport still fails the SDK request at once."""
        client = await self.owner.client()
        timeout = self.spec.tool_timeout
        try:
            # This bound covers the whole request in this very task (the write too), so the SDK gets none of its
            # own: a second timer per call that could never fire first. On the connection's one timer (see
            # event_deadlines): no timer per call, and none holding a copy of the caller's graph run once done.
            # The block is in flight for jobs.fail_all too (through this timer): an answer the SDK could not parse
            # fails the call at once, not at its timeout (the SDK drops such a message; no request ever gets it).
            async with self.event_deadlines.cancel_after(timeout):
                result = await client.session.call_tool(
                    tool,
                    arguments,
                    progress_callback=cast(Any, progress),
                    input_responses=cast(Any, input_responses),
                    request_state=request_state,
                    allow_input_required=True,
                    allow_claimed=True,  # a task handle comes back as TaskCreated (see calls.tasks)
                    meta=cast(Any, CALL_META.get()),  # a decided call's idempotency key
                )
            if isinstance(result, types.CallToolResult | types.InputRequiredResult | TaskCreated):
                return result
            raise InvalidResponseError(
                self.name, f"the call to {tool!r} was answered with {type(result).__name__}"
            )
        except TimeoutError:  # the deadline cancelled the request: the SDK sent notifications/cancelled
            raise ToolCallTimeoutError(self.name, tool, timeout) from None
        except Exception as exc:
            if getattr(self.spec, "oauth", None) is not None and is_connection_lost(exc):
                # A per-user OAuth transport ends under the call when the token was refused mid-call and its
                # refresh failed: what the owner records (a sign-in to ask for) says so, not "connection lost".
                raise await self.failures.transport_failed(
                    f"the call to {tool!r}", client, tool=tool
                ) from exc
            error = self._call_error(tool, exc, client)
            if error is exc:
                raise
            raise error from exc

    async def task_request(
        self, send: Callable[[ClientSession], Awaitable[T]], *, what: str, timeout: float | None = None
    ) -> T:
        """One ``tasks/*`` request on the live session, bounded by ``timeout`` (default: ``tool_timeout``)."""
        bound = self.spec.tool_timeout if timeout is None else timeout
        return await self.request(lambda client: send(client.session), timeout=bound, what=what)

    # ------------------------------------------------------------------------------------------- callbacks

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> ElicitReply:
        return await self.router.route(params)

    async def _on_sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        reply = await self.router.route(cast(Any, params))  # the call's driver answers it (calls.sampling)
        return cast(types.CreateMessageResult | types.ErrorData, reply)

    async def _on_list_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return roots_result(self.spec.roots)

    async def _on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, Exception):  # the transport watch takes parse failures out of the flow first
            self._on_invalid_message(message)
            return
        kind = _LIST_CHANGED.get(type(message))
        if kind is not None and self._on_list_changed is not None:
            self._on_list_changed(self.name, kind)


def roots_result(roots: list[str] | None) -> types.ListRootsResult:
    """The answer to ``roots/list`` in both eras: each configured root as a URI, a path resolved to an absolute
    ``file://`` URI (relative paths against the current directory), a URI as given."""
    return types.ListRootsResult(
        roots=[types.Root(uri=r if "://" in r else Path(r).resolve().as_uri()) for r in roots or []]  # type: ignore[arg-type]
    )


EraName = Literal["modern", "legacy"]


def era_of(version: str | None) -> EraName | None:
    if version is None:
        return None
    return "legacy" if version in HANDSHAKE_PROTOCOL_VERSIONS else "modern"
