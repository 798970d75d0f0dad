"""What is known about one server, as ``McpServers.server_status`` reports it: connection state, era, last error."""

from __future__ import annotations

from typing import Any

from langgraph_mcp.connection.connection import ServerConnection, era_of
from langgraph_mcp.servers.listings import Listing


def status_of(
    server: str, conn: ServerConnection | None, listing_error: BaseException | None, listing: Listing | None
) -> dict[str, Any]:
    """The status of ``server`` from its connection in this loop (``None``: closed or not usable in this run),
    the error of its last failed listing, and its current listing."""
    error = listing_error
    if error is None and conn is not None and conn.backoff.in_outage:
        error = conn.last_error
    return {
        "server": server,
        "state": conn.state if conn else "closed",
        "protocol_version": conn.protocol_version if conn else None,
        "era": era_of(conn.protocol_version) if conn else None,
        "server_info": conn.server_info.name if conn and conn.server_info else None,
        "error": str(error) if error else None,
        "starts": conn.starts if conn else 0,
        "failures": conn.backoff.failures if conn else 0,
        "next_attempt_in": round(conn.backoff.wait_remaining(), 3)
        if conn and conn.backoff.in_outage
        else None,
        "tools": len(listing.tools) if listing is not None else None,
    }
