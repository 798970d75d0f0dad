"""The demo server plus ``book_trip_idempotent`` (asks for a date like ``book_trip``, hinted idempotent), for P8.

Past ``max_parked_calls`` a legacy pause of an idempotent tool is cancelled on the server and re-issued on resume;
a non-idempotent one ends with ``TooManyParkedCallsError`` (issue 23), so P8's default-cap row needs this tool.

Usage: ``python bench/servers/idempotent_trip_server.py PORT`` (streamable HTTP on 127.0.0.1:PORT/mcp).
"""

from __future__ import annotations

import sys
from typing import Annotated

import uvicorn
from mcp.server.mcpserver import Resolve
from mcp.types import ToolAnnotations

from langgraph_mcp.examples.demo_server import TripDate, ask_date, build_server, http_app

srv = build_server()


@srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
def book_trip_idempotent(destination: str, when: Annotated[TripDate, Resolve(ask_date)]) -> str:
    """Book a trip (booking the same trip twice books it once); asks for the travel date."""
    srv.events.record("book_trip_idempotent", "commit", destination=destination)
    return f"Booked {destination} on {when.date.isoformat()}"


if __name__ == "__main__":
    uvicorn.run(http_app(srv), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
