"""The in-process transport: an ``MCPServer`` (or low-level ``Server``) object in this process, connected through
the SDK's in-memory streams; no subprocess, no sockets.

What a decision binds to: the server object's own name (the code that runs is this process's; a config cannot
point the name elsewhere without changing the code).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from langgraph_mcp.transports.base import StartNotes, Transport, WatchStreams

if TYPE_CHECKING:
    from mcp import Client


class InProcessServer(Transport):
    """An ``MCPServer`` (or low-level ``Server``) object in this process: no subprocess, no sockets."""

    transport: Literal["in_process"] = "in_process"
    """Optional: a ``server`` object says in-process (given in code, never loaded from a file)."""
    server: Any = Field(exclude=True)
    """The ``MCPServer`` or low-level ``Server`` object, connected through the SDK's in-memory streams."""

    aliases: ClassVar[tuple[str, ...]] = ("inprocess",)

    @classmethod
    def recognizes(cls, entry: Mapping[str, Any]) -> bool:
        return "server" in entry

    def binding(self) -> dict[str, Any]:
        name = getattr(self.server, "name", None)
        return {"server": name if isinstance(name, str) else type(self.server).__qualname__}

    def location(self) -> str:
        return "in-process"

    def open_client(self, notes: StartNotes, watch: WatchStreams, common: dict[str, Any]) -> Client:
        from mcp import Client  # the SDK on first use, not with the config

        return Client(self.server, **common)
