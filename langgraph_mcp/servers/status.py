"""What is known about one server, as ``McpServers.server_status`` reports it: connection state, era, last error."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from langgraph_mcp.connection.connection import EraName, era_of
from langgraph_mcp.connection.owner import ClientOwner, ConnectionState
from langgraph_mcp.servers.listings import Listing


@dataclass(frozen=True, kw_only=True)
class ServerStatus:
    """One server's status in the calling event loop (a snapshot: ask again for a fresh one)."""

    server: str
    """The server's name in the config."""
    state: ConnectionState
    """``idle`` (not started), ``connected``, ``reconnecting`` (an outage with restarts left), ``down`` (waiting
    out its reconnect backoff: calls fail fast until ``next_attempt_in`` seconds pass) or ``closed``."""
    protocol_version: str | None
    """The negotiated MCP protocol version, once connected."""
    era: EraName | None
    """``"modern"`` (2026-07-28) or ``"legacy"`` (2025-11-25), once connected."""
    server_info: str | None
    """The name the server gave itself."""
    error: str | None
    """The last failed listing's error, or the connection's last error during an outage."""
    starts: int
    """Every (re)start of the connection."""
    failures: int
    """Failed attempts in the current outage."""
    next_attempt_in: float | None
    """Seconds until the next reconnect attempt, while ``down``."""
    tools: int | None
    """How many tools its current listing has (``None``: not listed yet)."""

    def __getitem__(self, key: str) -> Any:
        # server_status() returned a dict before; `status["state"]` keeps working.
        if key not in {field.name for field in dataclasses.fields(self)}:
            raise KeyError(key)
        return getattr(self, key)

    def as_dict(self) -> dict[str, Any]:
        """The status as a JSON-shaped dict (what ``langgraph-mcp tools --json`` prints)."""
        return dataclasses.asdict(self)


def status_of(
    server: str, owner: ClientOwner | None, listing_error: BaseException | None, listing: Listing | None
) -> ServerStatus:
    """The status of ``server`` from the owner of its connection in this loop (``None``: closed or not usable in
    this run), the error of its last failed listing, and its current listing."""
    error = listing_error
    if error is None and owner is not None and owner.backoff.in_outage:
        error = owner.last_error
    return ServerStatus(
        server=server,
        state=owner.state if owner else "closed",
        protocol_version=owner.protocol_version if owner else None,
        era=era_of(owner.protocol_version) if owner else None,
        server_info=owner.server_info.name if owner and owner.server_info else None,
        error=str(error) if error else None,
        starts=owner.starts if owner else 0,
        failures=owner.backoff.failures if owner else 0,
        next_attempt_in=round(owner.backoff.wait_remaining(), 3)
        if owner and owner.backoff.in_outage
        else None,
        tools=len(listing.tools) if listing is not None else None,
    )
