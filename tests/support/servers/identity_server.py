"""An ``MCPServer`` that records who called it, for per-run credential and interceptor tests (both eras, HTTP).

Every tool records the call's ``authorization``, ``x-user`` and ``x-key`` headers and its arguments in ``calls``;
``tools/list`` fails for ``REFUSED_TOKEN`` and hides ``admin_reset`` (and an unusable tool) from all but
``ADMIN_TOKEN``. Over HTTP, :func:`binding_app` wraps the ASGI app like a server that binds a legacy session to the first caller's token: it
records every request whose token differs from the one that opened its ``mcp-session-id`` (``violations``), and
sets ``closed`` events when a client ends a session (``DELETE``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from mcp import MCPError
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import INTERNAL_ERROR, Tool, ToolAnnotations
from pydantic import BaseModel

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Confirm(BaseModel):
    """Confirmation of a transfer."""

    ok: bool


def ask_confirm(amount: int) -> Confirm | Elicit[Confirm]:
    """Ask to confirm the transfer of ``amount``."""
    return Elicit(f"Transfer {amount}?", Confirm)


@dataclass
class Record:
    calls: list[dict[str, Any]] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)

    def of(self, tool: str) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["tool"] == tool]


ADMIN_TOKEN = "Bearer admin"
"""Only calls with this ``authorization`` see the ``admin_reset`` tool listed (a per-user catalog), and
``admin_legacy_report`` too: a tool whose ``inputSchema`` is not an object, which a client must skip."""

UNUSABLE_ADMIN_TOOL = Tool(name="admin_legacy_report", inputSchema={"type": "string"})


async def _admin_only_listing(ctx: Any, call_next: Any) -> Any:
    result = await call_next(ctx)
    if ctx.method == "tools/list":
        request = ctx.request
        token = request.headers.get("authorization") if request is not None else None
        tools = result.tools if hasattr(result, "tools") else result["tools"]
        if token == ADMIN_TOKEN:
            kept = [
                *tools,
                UNUSABLE_ADMIN_TOOL if hasattr(result, "tools") else UNUSABLE_ADMIN_TOOL.model_dump(),
            ]
        else:
            kept = [t for t in tools if (t.name if hasattr(t, "name") else t["name"]) != "admin_reset"]
        if hasattr(result, "tools"):
            result = result.model_copy(update={"tools": kept})
        else:
            result = {**result, "tools": kept}
    return result


REFUSED_TOKEN = "Bearer refused"
"""Calls with this ``authorization`` get an error for ``tools/list`` (one user's listing fails, others' don't)."""


async def _refuse_listing(ctx: Any, call_next: Any) -> Any:
    request = ctx.request
    token = request.headers.get("authorization") if request is not None else None
    if ctx.method == "tools/list" and token == REFUSED_TOKEN:
        raise MCPError(INTERNAL_ERROR, "tools/list is refused to this token")
    return await call_next(ctx)


def build_identity_server(name: str = "ident", *, middleware: Sequence[Any] = ()) -> tuple[MCPServer, Record]:
    """The server and its record; ``middleware`` runs first (outermost), e.g. to hold a request open."""
    srv = MCPServer(name, middleware=[*middleware, _refuse_listing, _admin_only_listing])
    record = Record()

    def note(tool: str, ctx: Context, **args: Any) -> dict[str, Any]:
        headers = ctx.headers or {}
        entry = {
            "tool": tool,
            "authorization": headers.get("authorization"),
            "x_user": headers.get("x-user"),
            "x_key": headers.get("x-key"),
            "session": headers.get("mcp-session-id"),
            **args,
        }
        record.calls.append(entry)
        return entry

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami(run: str, ctx: Context) -> dict[str, Any]:
        """Say which credentials this call came with."""
        return note("whoami", ctx, run=run)

    @srv.tool()
    def add(a: int, ctx: Context, b: int = 0) -> int:
        """Add two numbers."""
        note("add", ctx, a=a, b=b)
        return a + b

    @srv.tool()
    def flaky(marker: str, ctx: Context, failures: int = 1) -> str:
        """Fail ``failures`` times per marker, then succeed."""
        note("flaky", ctx, marker=marker)
        if record.failures[marker] < failures:
            record.failures[marker] += 1
            raise ToolError(f"flaky failure {record.failures[marker]} for {marker}")
        return f"ok {marker}"

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True))
    def admin_reset(ctx: Context) -> str:
        """Listed for the admin only (and so only callable through a catalog the admin listed)."""
        note("admin_reset", ctx)
        return "reset"

    @srv.tool()
    def transfer(amount: int, confirm: Annotated[Confirm, Resolve(ask_confirm)], ctx: Context) -> str:
        """Transfer an amount after the user confirms."""
        note("transfer", ctx, amount=amount, ok=confirm.ok)
        return f"transferred {amount}" if confirm.ok else "cancelled"

    return srv, record


@dataclass
class Binding:
    """What :func:`binding_app` saw: the first token per legacy session, mismatches, and session ends."""

    first_token: dict[str, str | None] = field(default_factory=dict)
    violations: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    closed_tokens: list[str | None] = field(default_factory=list)
    """The token of every session a client ended (``DELETE``), in order."""
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def closes_reach(self, count: int) -> None:
        """Wait until ``count`` sessions have been ended."""
        async with self.changed:
            await self.changed.wait_for(lambda: len(self.closed_tokens) >= count)


def binding_app(app: App, binding: Binding) -> App:
    """``app`` behind a check that no legacy session is used with a token other than the one that opened it."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        session = headers.get("mcp-session-id")
        token = headers.get("authorization")
        if session is not None:
            first = binding.first_token.setdefault(session, token)
            if first != token:
                binding.violations.append((session, first, token))
            await app(scope, receive, send)
            if scope.get("method") == "DELETE":
                async with binding.changed:
                    binding.closed_tokens.append(token)
                    binding.changed.notify_all()
            return

        # A response that opens a session names it in a header: remember who opened it.
        async def capture(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.decode().lower() == "mcp-session-id":
                        binding.first_token.setdefault(value.decode(), token)
            await send(message)

        await app(scope, receive, capture)

    return wrapped
