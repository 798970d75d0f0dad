"""The streamable-HTTP transport: its config, its HTTP client (pooled keep-alive connections, one POST's failure
kept to its request: :mod:`~langgraph_mcp.transports.http_stack`), and what a decision binds to.

What a decision binds to: the URL and every static header (after ``${env:NAME}`` expansion; a
``${configurable:NAME}`` template as written): tenants are often chosen by an API-key header, so another key is
another backend. Per-run credentials (a ``credentials`` callable, ``auth``, per-user OAuth) pick who is signed in,
not where the server is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

import httpx2
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from langgraph_mcp.credentials import expand_env
from langgraph_mcp.transports.base import StartNotes, Transport, WatchStreams

if TYPE_CHECKING:
    from mcp import Client

CredentialsFactory: TypeAlias = Callable[[Any], Mapping[str, str] | httpx2.Auth | None]
"""Receives the run's config (``None`` outside a graph) and returns headers for this run (merged over the
configured ones) or an ``httpx2.Auth``. See :mod:`langgraph_mcp.credentials`."""

# Connections beyond the parked legacy calls (each holds one open POST): the legacy GET stream and ordinary calls.
HTTP_POOL_HEADROOM = 32

# Pooled connections legacy calls never take: the GET stream, and the one notification or answer the SDK POSTs at a
# time (``notifications/cancelled`` of a call past ``max_parked_calls``, an answer to a question).
HTTP_POOL_RESERVE = 2

HTTP_KEEPALIVE_EXPIRY = 4.0
"""How long (s) an idle pooled connection is kept for reuse: below common servers' own keep-alive (uvicorn's and
Node's 5 s), so a connection is not reused at the instant the server closes it. httpx2's default is 5 s, the same as
uvicorn's, which made that race (``ReadError('')`` on a reused connection) a matter of luck under load."""


def expand_env_in_headers(value: Any) -> Any:
    """A ``headers`` value with ``${env:NAME}`` filled in (at load), for the HTTP-based transports."""
    if isinstance(value, dict):
        return {name: expand_env(v) if isinstance(v, str) else v for name, v in value.items()}
    return value


class OAuthOptions(BaseModel):
    """Per-user OAuth sign-in for a streamable-HTTP server (the MCP authorization spec, through the mcp SDK's
    ``OAuthClientProvider``): a call for a principal without a token pauses with an ``mcp_authorization``
    interrupt. Tokens and client registrations are kept per principal in the graph's store."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    redirect_uri: str = Field(pattern=r"^https?://")
    """Where the authorization server sends the browser after sign-in: a page of yours that hands the full
    address it was opened at back to the run (README, "Signing in to OAuth-protected servers")."""
    scopes: list[str] = Field(default_factory=list)
    """Scopes asked for on top of what the server names (its ``WWW-Authenticate`` or metadata)."""
    client_name: str | None = None
    """The client name shown on the authorization server's consent page (dynamic registration)."""
    client_metadata_url: str | None = Field(None, pattern=r"^https://")
    """A client ID metadata document URL (HTTPS, with a path): used as the client id where the authorization
    server supports it, instead of dynamic registration."""
    principal_key: str | None = None
    """Read the principal from ``config["configurable"][principal_key]`` instead of ``langgraph_auth_user_id`` /
    ``user_id``."""


class HttpServer(Transport):
    """A server reached over streamable HTTP."""

    transport: Literal["streamable_http"] = "streamable_http"
    """Optional in a config file: a ``url`` says streamable HTTP (unless it ends in ``/sse``)."""
    url: str = Field(pattern=r"^https?://")
    """The server's MCP endpoint (``http://`` or ``https://``)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request; values may use ``${env:NAME}`` (at load) and ``${configurable:NAME}`` (per run)."""
    auth: httpx2.Auth | None = Field(default=None, exclude=True)
    """Any ``httpx2.Auth`` (e.g. mcp's ``OAuthClientProvider``); not loadable from JSON."""
    credentials: CredentialsFactory | None = Field(default=None, exclude=True)
    """Per-run credentials in code: called with the run's config, returns headers or an ``httpx2.Auth`` (return
    the same Auth object for the same user: connections are kept per credentials); not loadable from JSON."""
    timeout: float = Field(30.0, gt=0)
    """HTTP connect/write timeout in seconds."""
    read_timeout: float = Field(300.0, gt=0)
    """HTTP read timeout in seconds (also bounds a held-open legacy SSE stream)."""
    max_connections: int | None = Field(None, ge=1)
    """The HTTP connection pool size; default ``max_parked_calls`` + 32."""
    listing_max_age: float | None = Field(60.0, gt=0)
    """Seconds a ``tools/list`` without a ``ttlMs`` hint is trusted before it is listed again (``None``: until the
    server says its tools changed). A 2026-07-28 server has no session, so nothing else tells a redeploy on the
    same URL; a legacy server's new session drops the listing at once. Re-listing costs one request."""
    oauth: OAuthOptions | None = None
    """Per-user OAuth sign-in (see :class:`OAuthOptions`); not together with ``auth`` or ``credentials``."""

    aliases: ClassVar[tuple[str, ...]] = ("http", "streamablehttp")
    recognized_by: ClassVar[str] = "'url' (streamable HTTP or SSE)"

    @classmethod
    def recognizes(cls, entry: Mapping[str, Any]) -> bool:
        return "url" in entry and not str(entry["url"]).rstrip("/").endswith("/sse")

    @model_validator(mode="after")
    def _one_way_to_authenticate(self) -> HttpServer:
        if self.oauth is not None and (self.auth is not None or self.credentials is not None):
            raise ValueError("'oauth' signs each user in itself: give it without 'auth' or 'credentials'")
        return self

    @field_validator("headers", mode="before")
    @classmethod
    def _fill_env(cls, value: Any) -> Any:
        return expand_env_in_headers(value)

    def binding(self) -> dict[str, Any]:
        return {"url": self.url, "headers": dict(self.headers)}

    def location(self) -> str:
        return self.url

    def open_client(self, notes: StartNotes, watch: WatchStreams, common: dict[str, Any]) -> Client:
        from mcp import Client  # the SDK (and the HTTP stack) on first use, not with the config

        return Client(watch(_streamable_http(self)), **common)

    def listing_expiry(self) -> float | None:
        return self.listing_max_age

    def session_gone(self, error: BaseException) -> bool:
        from langgraph_mcp import _compat  # LangGraph's and the SDK's internals, not with the config

        return _compat.is_session_gone(error)

    def legacy_call_slots(self) -> int | None:
        """A legacy call holds its POST until it ends, and a call past ``max_parked_calls`` lets go of it only once
        its ``notifications/cancelled`` is sent, which needs a free connection too: with every connection held by
        calls, nothing could ever be sent again. Calls past these slots wait for one (within ``tool_timeout``)
        unsent."""
        return max(1, http_pool_size(self) - HTTP_POOL_RESERVE)


def http_client(spec: HttpServer) -> httpx2.AsyncClient:
    """The HTTP client for one streamable-HTTP connection: the spec's headers, auth, timeouts and pool limits.

    Each parked legacy call holds one POST response open, so the pool is sized past ``max_parked_calls``. A POST's
    event stream is read to its end before it is closed, so its connection is reused (``http_keepalive``), and
    every pooled connection may stay open idle (for httpx2's 5 s keep-alive): after a burst of N parallel calls the
    next burst reuses all N instead of opening N - 20 new ones (for ``HTTP_KEEPALIVE_EXPIRY``). The pool's check
    of its idle connections for a server hang-up is one ``poll()`` each, and a request goes out in one write
    (``http_keepalive.PoolBackend``). A network failure under one request's POST fails that request alone
    (``post_failures.ContainedPosts``), not the whole connection.
    """
    from langgraph_mcp._compat import wrap_pool_backend  # the SDK's internals, not with the config
    from langgraph_mcp.transports.http_stack import ContainedPosts, PoolBackend, drain_event_streams_on_close

    max_connections = http_pool_size(spec)
    limits = httpx2.Limits(
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=HTTP_KEEPALIVE_EXPIRY,
    )
    client = ContainedPosts(
        headers=spec.headers or None,
        timeout=httpx2.Timeout(spec.timeout, read=spec.read_timeout),
        auth=spec.auth,
        limits=limits,
        event_hooks={"response": [drain_event_streams_on_close]},
    )
    wrap_pool_backend(client, PoolBackend)
    return client


def http_pool_size(spec: HttpServer) -> int:
    """How many HTTP connections one streamable-HTTP connection may open at once."""
    return spec.max_connections or spec.max_parked_calls + HTTP_POOL_HEADROOM


@asynccontextmanager
async def _streamable_http(spec: HttpServer) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client

    # The SDK leaves a passed-in HTTP client open: it is closed here, with the transport.
    async with (
        http_client(spec) as http,
        streamable_http_client(
            spec.url, http_client=http, max_sse_event_size=spec.max_result_bytes
        ) as streams,
    ):
        yield streams
