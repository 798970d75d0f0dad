"""The legacy HTTP+SSE transport: its config, its client, and what a decision binds to (the URL and every static
header, as for streamable HTTP)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from langgraph_mcp.transports.base import StartNotes, Transport, WatchStreams
from langgraph_mcp.transports.http import CredentialsFactory, expand_env_in_headers

if TYPE_CHECKING:
    from mcp import Client


class SseServer(Transport):
    """A server reached over the legacy HTTP+SSE transport."""

    transport: Literal["sse"] = "sse"
    """Optional when the ``url`` ends in ``/sse``; any other bare ``url`` means streamable HTTP."""
    url: str = Field(pattern=r"^https?://")
    """The server's SSE endpoint."""
    headers: dict[str, str] = Field(default_factory=dict)
    """As for streamable HTTP: ``${env:NAME}`` (at load) and ``${configurable:NAME}`` (per run)."""
    credentials: CredentialsFactory | None = Field(default=None, exclude=True)
    """As for streamable HTTP, headers only."""
    timeout: float = Field(5.0, gt=0)
    """HTTP connect/write timeout in seconds for its POSTs."""
    sse_read_timeout: float = Field(300.0, gt=0)
    """Seconds the event stream may stay silent before the connection counts as lost."""

    recognized_by: ClassVar[str] = "'url' (streamable HTTP or SSE)"

    @classmethod
    def recognizes(cls, entry: Mapping[str, Any]) -> bool:
        return "url" in entry and str(entry["url"]).rstrip("/").endswith("/sse")

    @field_validator("headers", mode="before")
    @classmethod
    def _fill_env(cls, value: Any) -> Any:
        return expand_env_in_headers(value)

    def binding(self) -> dict[str, Any]:
        return {"url": self.url, "headers": dict(self.headers)}

    def location(self) -> str:
        return self.url

    def open_client(self, notes: StartNotes, watch: WatchStreams, common: dict[str, Any]) -> Client:
        from mcp import Client  # the SDK on first use, not with the config
        from mcp.client.sse import sse_client

        sse = sse_client(
            self.url,
            headers=self.headers or None,
            timeout=self.timeout,
            sse_read_timeout=self.sse_read_timeout,
        )
        return Client(watch(sse), **common)
