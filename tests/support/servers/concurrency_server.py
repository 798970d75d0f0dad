"""An ``MCPServer`` that counts its calls in flight, for the legacy-concurrency tests (stdio or in a test's loop).

Tools:

* ``meet(n)`` — wait (at most ``WAIT_SECONDS``) until ``n`` calls have been in flight together, then return the
  highest number seen. Calls run one at a time never meet: each then returns a peak below ``n``.
* ``ask(tag, meet=0)`` — optionally meet first (returning ``"<tag>:alone"`` without asking if the others never
  came), then ask the same question every time (``"Which code?"``, one string field ``code``) and return
  ``"<tag>=<code>"`` (or ``"<tag>:<action>"``). Identical questions make sure a crossed answer can't be told apart
  by its text.
* ``peak()`` — the highest number of calls seen in flight together so far.

``python tests/support/servers/concurrency_server.py`` serves it over stdio.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import AcceptedElicitation, Context, MCPServer
from pydantic import BaseModel

WAIT_SECONDS = 5.0


class Code(BaseModel):
    code: str


class ConcurrencyServer:
    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0
        self._changed = anyio.Event()
        self.server = self._build()

    def _enter(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def _leave(self) -> None:
        self.in_flight -= 1

    async def _meet(self, n: int) -> int:
        with anyio.move_on_after(WAIT_SECONDS):
            while self.peak < n:
                await self._changed.wait()
        return self.peak

    def _build(self) -> MCPServer:
        srv = MCPServer("concurrency")

        @srv.tool()
        async def meet(n: int) -> int:
            """Wait until n calls are in flight together; return the highest number seen."""
            self._enter()
            try:
                return await self._meet(n)
            finally:
                self._leave()

        @srv.tool()
        async def ask(tag: str, ctx: Context, meet: int = 0) -> str:
            """Optionally meet `meet` calls, then ask "Which code?" and return "<tag>=<code>"."""
            self._enter()
            try:
                if meet and await self._meet(meet) < meet:
                    return f"{tag}:alone"
                result = await ctx.elicit("Which code?", Code)
                if isinstance(result, AcceptedElicitation):
                    return f"{tag}={result.data.code}"
                return f"{tag}:{result.action}"
            finally:
                self._leave()

        @srv.tool()
        def peak() -> int:
            """The highest number of calls seen in flight together."""
            return self.peak

        return srv


if __name__ == "__main__":
    ConcurrencyServer().server.run("stdio")
