"""The bundled example MCP server ("demo") used by the package's demo, notebooks, Studio graph and tests.

It exposes a fixed set of tools covering everything ``langgraph_mcp`` has to handle: tool annotations,
structured output, every content-block type, tool errors, progress, hangs, and elicitation
in both protocol eras (legacy ``elicitation/create`` pushed mid-call, and the 2026-07-28
``InputRequiredResult`` multi-round-trip). It also serves resources (``demo://logo.png``, the template
``demo://files/{name}`` over the workspace), the prompt ``review_file`` and, for per-user credentials over HTTP,
``whoami`` (reports the caller's ``X-User`` header).

Run it::

    python -m langgraph_mcp.examples.demo_server                  # stdio (default)
    python -m langgraph_mcp.examples.demo_server stdio
    python -m langgraph_mcp.examples.demo_server http 8765 [--stateless]   # streamable HTTP on 127.0.0.1

or use it in-process: ``mcp.Client(build_server(), mode="auto" | "legacy")``. ``server`` is a
module-level instance; ``build_server()`` returns a fresh one (fresh counters, fresh workspace);
``http_app()`` returns the Starlette ASGI app for serving with uvicorn in your own loop.

The server name is ``"demo"`` (environment variable ``DEMO_SERVER_NAME`` overrides it for the
module-level ``server`` and the command line).

Observability: every tool body run records events ``{"pid", "tool", "event", "server", "t", ...}``
in a per-instance counter keyed ``"<tool>.<event>"`` (read it with the ``stats`` tool, clear it with
``reset_stats``). When ``DEMO_EVENTS_FILE`` is set (read at each event), each event is also appended
as one JSON line to that file (open/append/close per event, so several processes can share it).
In the same process, ``await server.events.reached("<tool>.<event>", n)`` returns once it was recorded n times.
Events:

* ``enter`` - at the start of each run of a tool body (``stats``/``reset_stats`` record nothing).
  Resolver-driven tools (``Annotated[T, Resolve(...)]``) run their body only once all answers are in,
  so they record ``enter`` once per completed call; hand-rolled multi-round tools record it every round.
* ``commit`` - a tool with a side effect committed it (exactly once per successful call).
* ``asked`` - the tool body itself asked a question (``ctx.elicit``/``ctx.elicit_url``, a hand-rolled
  ``InputRequiredResult`` or a ``-32042`` URL-elicitation error). Questions asked by resolvers are
  not recorded (resolvers re-run on every modern round, so a count would be misleading).
* ``answered:<action>`` - the body received an answer (``accept``/``decline``/``cancel``).

Modern-era resolver request keys are ``"langgraph_mcp.examples.demo_server:<resolver>"`` whatever the
transport (even under ``python -m``, see the ``__main__`` block): ``ask_date``, ``ask_seats``,
``ask_seats_after_date``, ``ask_meal``, ``ask_registration``, ``ask_credentials``,
``modern_ask_date``, ``modern_ask_seats``. Hand-rolled tools use ``"pay"`` (``pay_deposit``,
``url_required``) and ``"q<n>"`` (``runaway``).
"""

import argparse
import asyncio
import base64
import contextlib
import datetime
import io
import json
import os
import re
import struct
import sys
import time
import uuid
import wave
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Audio,
    Context,
    Elicit,
    ElicitationResult,
    Image,
    MCPServer,
    Resolve,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcp.types.version import is_version_at_least
from pydantic import BaseModel, Field, field_validator
from starlette.applications import Starlette

__all__ = [
    "AUDIO_WAV",
    "DEFAULT_NAME",
    "EVENTS_FILE_ENV",
    "IMAGE_PNG",
    "NAME_ENV",
    "Booking",
    "Credentials",
    "DemoServer",
    "EventRecorder",
    "Forecast",
    "MealChoice",
    "Registration",
    "Seats",
    "TripDate",
    "build_server",
    "http_app",
    "main",
]

DEFAULT_NAME = "demo"
NAME_ENV = "DEMO_SERVER_NAME"
EVENTS_FILE_ENV = "DEMO_EVENTS_FILE"
MODERN_VERSION = "2026-07-28"

# --------------------------------------------------------------------------- binary fixtures


def _tiny_png() -> bytes:
    """A valid 2x2 RGB PNG (built by hand so CRCs and zlib stream are correct)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    width = height = 2
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    rows = b"".join(b"\x00" + b"\xff\x00\x00\x00\x00\xff" for _ in range(height))  # red, blue
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _tiny_wav() -> bytes:
    """A valid 10 ms, 8 kHz, mono, 16-bit PCM WAV of silence."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * 80)
    return buf.getvalue()


IMAGE_PNG = _tiny_png()
AUDIO_WAV = _tiny_wav()

# --------------------------------------------------------------------------- models


class Forecast(BaseModel):
    """A fake weather forecast."""

    city: str
    days: int
    temps_c: list[float] = Field(description="Daily max temperature in °C")
    conditions: list[str] = Field(description="Daily conditions")


class SearchHit(BaseModel):
    """One fake search result."""

    title: str
    url: str
    snippet: str


class SearchResults(BaseModel):
    """Fake web search results."""

    query: str
    results: list[SearchHit]


class Stats(BaseModel):
    """Event counters of one server instance."""

    counts: dict[str, int] = Field(description='Event counts keyed "<tool>.<event>"')
    pid: int


# Elicitation forms. Keep fields primitive (the spec allows no nesting). A model's docstring becomes the
# form's top-level "description" on the legacy wire (the 2026-07-28 wire drops it), so keep it user-facing.


class TripDate(BaseModel):
    """Travel date."""

    date: datetime.date = Field(description="Departure date (YYYY-MM-DD)")


class Seats(BaseModel):
    """Seats and window preference."""

    seats: int = Field(description="Number of seats", ge=1, le=9)
    window: bool = Field(default=False, description="Window seat?")


class MealChoice(BaseModel):
    """Meal preference."""

    meal: Literal["none", "veg", "vegan"] = Field(description="Meal preference")


class Registration(BaseModel):
    """Registration details."""

    name: str = Field(min_length=2, description="Your full name")
    age: int = Field(ge=18, le=120, description="Age in years")
    email: str = Field(description="E-mail address", json_schema_extra={"format": "email"})
    plan: Literal["free", "pro"] = Field(description="Subscription plan")
    newsletter: bool = Field(default=False, description="Subscribe to the newsletter?")
    start: datetime.date = Field(description="Start date (YYYY-MM-DD)")

    @field_validator("email")
    @classmethod
    def _check_email(cls, value: str) -> str:
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
            raise ValueError("not a valid e-mail address")
        return value


# The spec's string formats are date, date-time, email and uri only (the SDK refuses "format": "password"
# when rendering), so the sensitive field is marked by its name and the JSON-Schema "writeOnly" keyword
# (passes the SDK's checks and survives on both eras' wire).
class Credentials(BaseModel):
    """Credentials for the service."""

    username: str = Field(description="User name")
    password: str = Field(description="Password (sensitive)", json_schema_extra={"writeOnly": True})


class Answer(BaseModel):
    """A free-text answer."""

    answer: str = Field(description="Anything")


class Booking(BaseModel):
    """A confirmed booking."""

    destination: str
    date: str
    seats: int | None = None
    window: bool | None = None
    meal: str | None = None


# --------------------------------------------------------------------------- resolvers (module level)
# Module-level so the modern request keys are stable: "langgraph_mcp.examples.demo_server:<name>".


def _is_modern(ctx: Context) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, MODERN_VERSION)


def ask_date(destination: str) -> TripDate | Elicit[TripDate]:
    """Ask for the travel date."""
    return Elicit(f"When do you want to travel to {destination}?", TripDate)


def ask_seats(destination: str) -> Seats | Elicit[Seats]:
    """Ask for seats (independent of the date)."""
    return Elicit(f"How many seats to {destination}?", Seats)


def ask_seats_after_date(
    destination: str, when: Annotated[TripDate, Resolve(ask_date)]
) -> Seats | Elicit[Seats]:
    """Ask for seats once the date is known (second round)."""
    return Elicit(f"How many seats to {destination} on {when.date.isoformat()}?", Seats)


def ask_meal(
    destination: str, seats: Annotated[Seats, Resolve(ask_seats_after_date)]
) -> MealChoice | Elicit[MealChoice]:
    """Ask for the meal once the seats are known (third round)."""
    return Elicit(f"Which meal for your {seats.seats} seat(s) to {destination}?", MealChoice)


def ask_registration() -> Registration | Elicit[Registration]:
    """Ask for the registration form."""
    return Elicit("Please fill in the registration form.", Registration)


def ask_credentials(service: str) -> Credentials | Elicit[Credentials]:
    """Ask for credentials."""
    return Elicit(f"Log in to {service}", Credentials)


def modern_ask_date(destination: str, ctx: Context) -> TripDate | Elicit[TripDate] | None:
    """Ask for the date on the modern era only (legacy: the tool body asks via ctx.elicit)."""
    return ask_date(destination) if _is_modern(ctx) else None


def modern_ask_seats(destination: str, ctx: Context) -> Seats | Elicit[Seats] | None:
    """Ask for seats on the modern era only (legacy: the tool body asks via ctx.elicit)."""
    return ask_seats(destination) if _is_modern(ctx) else None


# --------------------------------------------------------------------------- server-side observability


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class EventRecorder:
    """Per-instance event counter, optionally mirrored to the ``DEMO_EVENTS_FILE`` JSON-lines file."""

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        self.counts: Counter[str] = Counter()
        self._waiters: list[tuple[str, int, asyncio.Future[None]]] = []

    def record(self, tool: str, event: str, **extra: Any) -> None:
        """Count ``<tool>.<event>`` and append it to the events file if configured."""
        self.counts[f"{tool}.{event}"] += 1
        self._wake()
        path = os.environ.get(EVENTS_FILE_ENV)
        if path:
            line = {
                "pid": os.getpid(),
                "tool": tool,
                "event": event,
                "server": self.server_name,
                "t": round(time.time(), 4),
                **extra,
            }
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(line, default=str) + "\n")

    async def reached(self, key: str, count: int = 1) -> None:
        """Return once ``counts[key]`` is at least ``count`` (tests wait on what the server did, not on time).

        Unbounded: bound it yourself (``anyio.fail_after``). Sync tools run in worker threads, so the wake-up is
        handed to the waiter's loop thread-safely."""
        if self.counts[key] >= count:
            return
        waiter = asyncio.get_running_loop().create_future()
        entry = (key, count, waiter)
        self._waiters.append(entry)
        try:
            self._wake()  # an event recorded between the check above and the registration
            await waiter
        finally:
            self._waiters.remove(entry)

    def _wake(self) -> None:
        for key, count, waiter in list(self._waiters):
            if self.counts[key] >= count and not waiter.done():
                with contextlib.suppress(RuntimeError):  # the waiter's loop is closed: nobody waits any more
                    waiter.get_loop().call_soon_threadsafe(_resolve, waiter)

    def snapshot(self) -> dict[str, int]:
        """A plain copy of the counters."""
        return dict(self.counts)

    def clear(self) -> None:
        """Reset the counters (the events file is left alone)."""
        self.counts.clear()


class DemoServer(MCPServer):
    """``MCPServer`` carrying the demo's per-instance state (events, workspace, URL consents)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            name,
            version="1.0.0",
            instructions="Demo server bundled with langgraph-mcp: weather, a small file workspace, "
            "content-type samples, failures, and elicitation examples.",
            middleware=[self._count_requests],
        )
        self.events = EventRecorder(name)
        self.workspace: dict[str, str] = {
            "notes.txt": "Remember: LangGraph + MCP.\n",
            "todo.txt": "- write tests\n- ship it\n",
        }
        self.consented: set[str] = set()

    async def _count_requests(self, ctx: Any, call_next: Any) -> Any:
        """Record ``<tool>.request`` for every ``tools/call`` that reaches the server (every attempt and round)
        and ``server.cancelled`` for every ``notifications/cancelled``: tests count round trips server-side."""
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if ctx.method == "tools/call" and params.get("name") not in {"stats", "reset_stats"}:
            self.events.record(str(params.get("name")), "request")
        elif ctx.method == "notifications/cancelled":
            self.events.record("server", "cancelled")
        return await call_next(ctx)


# --------------------------------------------------------------------------- annotations

READ_ONLY_OPEN = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
READ_ONLY_CLOSED = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ASKS_USER = ToolAnnotations(read_only_hint=False, destructive_hint=False)


def _url_request(amount: int) -> tuple[str, str]:
    return (
        f"Please confirm the deposit of {amount} EUR on the payment page.",
        f"https://pay.example.com/checkout/{amount}",
    )


def build_server(name: str = DEFAULT_NAME) -> DemoServer:
    """Build a fresh demo server (fresh counters, workspace and URL-consent state)."""
    srv = DemoServer(name)
    rec = srv.events.record
    files = srv.workspace

    # ------------------------------------------------------------------ observability

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def stats() -> Stats:
        """Return this server instance's event counters ("<tool>.<event>") and process id."""
        return Stats(counts=srv.events.snapshot(), pid=os.getpid())

    @srv.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        )
    )
    def reset_stats() -> str:
        """Clear this server instance's event counters."""
        srv.events.clear()
        return "ok"

    # ------------------------------------------------------------------ plain tools

    @srv.tool(title="Weather forecast", annotations=READ_ONLY_OPEN)
    def get_forecast(city: str, days: int = 3) -> Forecast:
        """Return a (fake) weather forecast for a city."""
        rec("get_forecast", "enter")
        if not 1 <= days <= 14:
            raise ToolError("days must be between 1 and 14")
        cycle = ["sunny", "cloudy", "rain", "windy"]
        return Forecast(
            city=city,
            days=days,
            temps_c=[20.0 + i for i in range(days)],
            conditions=[cycle[i % len(cycle)] for i in range(days)],
        )

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
    def list_files() -> list[str]:
        """List the files in the in-memory workspace."""
        rec("list_files", "enter")
        return sorted(files)

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def read_file(path: str) -> str:
        """Read a file from the in-memory workspace."""
        rec("read_file", "enter")
        if path not in files:
            raise ToolError(f"No such file: {path}")
        return files[path]

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    def write_file(path: str, content: str) -> str:
        """Create or overwrite a file in the in-memory workspace."""
        rec("write_file", "enter")
        files[path] = content
        rec("write_file", "commit", path=path)
        return f"Wrote {len(content)} characters to {path}"

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False))
    def delete_file(path: str) -> str:
        """Delete a file from the in-memory workspace."""
        rec("delete_file", "enter")
        if path not in files:
            raise ToolError(f"No such file: {path}")
        del files[path]
        rec("delete_file", "commit", path=path)
        return f"Deleted {path}"

    @srv.tool()
    def move_file(src: str, dst: str) -> str:
        """Move (rename) a file in the in-memory workspace (no annotations: spec defaults apply)."""
        rec("move_file", "enter")
        if src not in files:
            raise ToolError(f"No such file: {src}")
        files[dst] = files.pop(src)
        rec("move_file", "commit", src=src, dst=dst)
        return f"Moved {src} to {dst}"

    @srv.tool()
    def echo(text: str) -> str:
        """Echo the text back (no annotations)."""
        rec("echo", "enter")
        return text

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
    def search_web(query: str) -> SearchResults:
        """Search the web (returns fake results)."""
        rec("search_web", "enter")
        slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-") or "empty"
        hits = [
            SearchHit(
                title=f"{query} - result {i}",
                url=f"https://example.com/{slug}/{i}",
                snippet=f"Everything about {query} (#{i}).",
            )
            for i in (1, 2, 3)
        ]
        return SearchResults(query=query, results=hits)

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def add(a: int, b: int) -> int:
        """Add two integers (structured output {"result": a + b})."""
        rec("add", "enter")
        return a + b

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def make_image() -> Image:
        """Return a tiny PNG image."""
        rec("make_image", "enter")
        return Image(data=IMAGE_PNG, format="png")

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def make_audio() -> Audio:
        """Return a tiny WAV audio clip."""
        rec("make_audio", "enter")
        return Audio(data=AUDIO_WAV, format="wav")

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def mixed_content() -> list[ContentBlock]:
        """Return one of each content block: text, image, audio, resource link, embedded text and blob."""
        rec("mixed_content", "enter")
        return [
            TextContent(text="Here is one of each content type."),
            ImageContent(data=base64.b64encode(IMAGE_PNG).decode(), mime_type="image/png"),
            AudioContent(data=base64.b64encode(AUDIO_WAV).decode(), mime_type="audio/wav"),
            ResourceLink(uri="file:///workspace/notes.txt", name="notes", mime_type="text/plain"),
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="file:///workspace/todo.txt", mime_type="text/plain", text=files.get("todo.txt", "")
                )
            ),
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="file:///workspace/data.bin",
                    mime_type="application/octet-stream",
                    blob=base64.b64encode(bytes(range(16))).decode(),
                )
            ),
        ]

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def with_meta() -> CallToolResult:
        """Return a result with content, structuredContent and a result-level _meta {"demo/trace": "abc"}.

        On the 2026-07-28 era the SDK merges its "io.modelcontextprotocol/serverInfo" stamp into the
        result _meta; the "demo/trace" key survives on both eras.
        """
        rec("with_meta", "enter")
        return CallToolResult(
            content=[TextContent(text="result with _meta")],
            structured_content={"trace": "abc", "ok": True},
            _meta={"demo/trace": "abc"},
        )

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def always_fails(reason: str) -> str:
        """Always fail with a tool error (isError result carrying the reason)."""
        rec("always_fails", "enter")
        raise ToolError(f"always_fails: {reason}")

    @srv.tool(annotations=READ_ONLY_CLOSED)
    async def slow(ctx: Context, seconds: float = 1.0, steps: int = 4) -> str:
        """Work for `seconds`, reporting progress after each of `steps` even steps, then return "done"."""
        rec("slow", "enter")
        steps = max(1, steps)
        for i in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(i, steps, f"step {i}")
        return "done"

    @srv.tool(annotations=READ_ONLY_CLOSED)
    async def sleep(seconds: float) -> str:
        """Sleep for `seconds` (for hang and timeout tests)."""
        rec("sleep", "enter")
        await anyio.sleep(seconds)
        return f"slept {seconds}s"

    # -------------------------------------------------------------- elicitation: resolver form (both eras)

    @srv.tool(annotations=ASKS_USER)
    def book_trip(destination: str, when: Annotated[TripDate, Resolve(ask_date)]) -> str:
        """Book a trip; asks for the travel date."""
        rec("book_trip", "enter")
        rec("book_trip", "commit", destination=destination)
        return f"Booked {destination} on {when.date.isoformat()}"

    @srv.tool(annotations=ASKS_USER)
    def book_two(
        destination: str,
        when: Annotated[TripDate, Resolve(ask_date)],
        seats: Annotated[Seats, Resolve(ask_seats)],
    ) -> Booking:
        """Book a trip; asks for the date and the seats (one modern round, two legacy questions)."""
        rec("book_two", "enter")
        rec("book_two", "commit", destination=destination)
        return Booking(
            destination=destination, date=when.date.isoformat(), seats=seats.seats, window=seats.window
        )

    @srv.tool(annotations=ASKS_USER)
    def book_three_rounds(
        destination: str,
        when: Annotated[TripDate, Resolve(ask_date)],
        seats: Annotated[Seats, Resolve(ask_seats_after_date)],
        meal: Annotated[MealChoice, Resolve(ask_meal)],
    ) -> Booking:
        """Book a trip; asks date, then seats, then meal (three rounds, each using the previous answer)."""
        rec("book_three_rounds", "enter")
        rec("book_three_rounds", "commit", destination=destination)
        return Booking(
            destination=destination,
            date=when.date.isoformat(),
            seats=seats.seats,
            window=seats.window,
            meal=meal.meal,
        )

    @srv.tool(annotations=ASKS_USER)
    def book_trip_outcome(
        destination: str, when: Annotated[ElicitationResult[TripDate], Resolve(ask_date)]
    ) -> str:
        """Book a trip; a declined or cancelled date question returns a message instead of failing."""
        rec("book_trip_outcome", "enter")
        rec("book_trip_outcome", f"answered:{when.action}")
        if isinstance(when, AcceptedElicitation):
            rec("book_trip_outcome", "commit", destination=destination)
            return f"Booked {destination} on {when.data.date.isoformat()}"
        return "User declined" if when.action == "decline" else "User cancelled"

    @srv.tool(annotations=ASKS_USER)
    def register(form: Annotated[Registration, Resolve(ask_registration)]) -> Registration:
        """Register a user; asks for a validated form and echoes it back."""
        rec("register", "enter")
        rec("register", "commit", email=form.email)
        return form

    @srv.tool(annotations=ASKS_USER)
    def login(service: str, creds: Annotated[Credentials, Resolve(ask_credentials)]) -> str:
        """Log in to a service; asks for a username and a password (sensitive field)."""
        rec("login", "enter")
        return f"Logged in to {service} as {creds.username}"

    # ------------------------------------------------------------------ elicitation: ctx.elicit / hand-rolled

    async def _url_consent(tool: str, amount: int, ctx: Context) -> str | InputRequiredResult:
        """URL-mode consent: modern -> InputRequiredResult key "pay"; legacy -> ctx.elicit_url."""
        message, url = _url_request(amount)
        if _is_modern(ctx):
            answer = (ctx.input_responses or {}).get("pay")
            if answer is None:
                rec(tool, "asked", mode="url")
                params = ElicitRequestURLParams(message=message, url=url)
                return InputRequiredResult(input_requests={"pay": ElicitRequest(params=params)})
            if not isinstance(answer, ElicitResult):
                raise ToolError("expected an elicitation result for 'pay'")
            action: str = answer.action
        else:
            rec(tool, "asked", mode="url")
            action = (await ctx.elicit_url(message, url, f"pay-{amount}-{uuid.uuid4().hex[:8]}")).action
        rec(tool, f"answered:{action}")
        if action == "accept":
            rec(tool, "commit", amount=amount)
        return f"payment consent: {action}"

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True))
    async def pay_deposit(amount: int, ctx: Context) -> str | InputRequiredResult:
        """Pay a deposit; asks for consent on an external payment page (URL-mode elicitation)."""
        rec("pay_deposit", "enter")
        return await _url_consent("pay_deposit", amount, ctx)

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True))
    async def url_required(amount: int, ctx: Context) -> str | InputRequiredResult:
        """Pay a deposit; legacy: first call fails with -32042 (URL elicitation required), then succeeds."""
        rec("url_required", "enter")
        if _is_modern(ctx):
            return await _url_consent("url_required", amount, ctx)
        elicitation_id = f"deposit-{amount}"
        if elicitation_id not in srv.consented:
            srv.consented.add(elicitation_id)  # the consent "completes" out of band
            rec("url_required", "asked", mode="url", elicitation_id=elicitation_id)
            message, url = _url_request(amount)
            raise UrlElicitationRequiredError(
                [ElicitRequestURLParams(message=message, url=url, elicitation_id=elicitation_id)]
            )
        rec("url_required", "commit", amount=amount)
        return f"deposit of {amount} EUR paid after out-of-band consent"

    @srv.tool(annotations=ASKS_USER)
    async def book_trip_legacy(destination: str, ctx: Context) -> str:
        """Book a trip asking via ctx.elicit (legacy era only; fails on 2026-07-28)."""
        rec("book_trip_legacy", "enter")  # pre-question work: repeats if the call is replayed
        rec("book_trip_legacy", "asked")
        result = await ctx.elicit(f"When do you want to travel to {destination}?", TripDate)
        rec("book_trip_legacy", f"answered:{result.action}")
        if not isinstance(result, AcceptedElicitation):
            return f"Not booked ({result.action})"
        rec("book_trip_legacy", "commit", destination=destination)
        return f"Booked {destination} on {result.data.date.isoformat()}"

    @srv.tool(annotations=ASKS_USER)
    async def two_questions_commit(
        destination: str,
        ctx: Context,
        when: Annotated[TripDate | None, Resolve(modern_ask_date)],
        seats: Annotated[Seats | None, Resolve(modern_ask_seats)],
    ) -> str:
        """Book a trip after two questions (date, seats), committing once (legacy: two ctx.elicit calls)."""
        rec("two_questions_commit", "enter")
        tool = "two_questions_commit"
        if when is None or seats is None:  # legacy: the resolvers deferred to the body
            rec(tool, "asked", question="date")
            r1 = await ctx.elicit(f"When do you want to travel to {destination}?", TripDate)
            rec(tool, f"answered:{r1.action}", question="date")
            if not isinstance(r1, AcceptedElicitation):
                return f"Not booked (date: {r1.action})"
            rec(tool, "asked", question="seats")
            r2 = await ctx.elicit(f"How many seats to {destination}?", Seats)
            rec(tool, f"answered:{r2.action}", question="seats")
            if not isinstance(r2, AcceptedElicitation):
                return f"Not booked (seats: {r2.action})"
            when, seats = r1.data, r2.data
        rec(tool, "commit", destination=destination)
        return f"Booked {destination} on {when.date.isoformat()} for {seats.seats} seat(s)"

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    async def runaway(ctx: Context) -> str | InputRequiredResult:
        """Never finish: ask a new question every round (modern) / elicit forever (legacy)."""
        rec("runaway", "enter")
        if _is_modern(ctx):
            state = ctx.request_state or ""
            n = int(state.removeprefix("runaway:")) + 1 if state.startswith("runaway:") else 1
            rec("runaway", "asked", round=n)
            schema: dict[str, Any] = {
                "type": "object",
                "properties": {"answer": {"type": "string", "title": "Answer"}},
                "required": ["answer"],
            }
            params = ElicitRequestFormParams(message=f"Runaway question #{n}", requested_schema=schema)
            return InputRequiredResult(
                input_requests={f"q{n}": ElicitRequest(params=params)}, request_state=f"runaway:{n}"
            )
        n = 0
        while True:
            n += 1
            rec("runaway", "asked", round=n)
            result = await ctx.elicit(f"Runaway question #{n}", Answer)
            rec("runaway", f"answered:{result.action}", round=n)

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    async def state_only(ctx: Context, n: int = 2) -> str | InputRequiredResult:
        """Modern: `n` InputRequiredResults carrying only request_state, then finish; legacy: "done"."""
        rec("state_only", "enter")
        if not _is_modern(ctx):
            return "done"
        state = ctx.request_state or ""
        done = int(state.removeprefix("state_only:")) if state.startswith("state_only:") else 0
        if done < n:
            return InputRequiredResult(request_state=f"state_only:{done + 1}")
        return f"done after {n} state rounds"

    # -------------------------------------------------------------- per-run credentials, resources, prompts

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def whoami(ctx: Context) -> dict[str, Any]:
        """Say who is calling: the request's X-User header, and whether it carried a bearer token (over HTTP)."""
        headers = ctx.headers or {}
        return {
            "user": headers.get("x-user"),
            "bearer": headers.get("authorization", "").startswith("Bearer "),
        }

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def share_file(name: str) -> list[ContentBlock]:
        """Share a workspace file as a link (``resource_link`` to ``demo://files/<name>``), not its content."""
        if name not in files:
            raise ToolError(f"no such file: {name}")
        link = ResourceLink(uri=f"demo://files/{name}", name=name, mime_type="text/plain")
        return [TextContent(text=f"Here is {name}."), link]

    @srv.resource("demo://files/{name}", mime_type="text/plain")
    def workspace_file(name: str) -> str:
        """A file of the demo workspace."""
        if name not in files:
            raise ValueError(f"no such file: {name}")
        return files[name]

    @srv.resource("demo://logo.png", mime_type="image/png")
    def logo() -> bytes:
        """The demo's tiny PNG."""
        return IMAGE_PNG

    @srv.prompt()
    def review_file(name: str) -> str:
        """Ask for a review of a workspace file."""
        return f"Please review {name}:\n\n{files.get(name, '(no such file)')}"

    return srv


# --------------------------------------------------------------------------- module instance, HTTP app, CLI

_module_server: DemoServer | None = None


def __getattr__(name: str) -> DemoServer:
    """``server``, the module-level instance, built on first use.

    Not at import: building an ``MCPServer`` runs the SDK's ``configure_logging``, which gives the *importing*
    process's root logger a rich handler on stderr (so every library's log records would print there).
    """
    global _module_server
    if name != "server":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _module_server is None:
        _module_server = build_server(os.environ.get(NAME_ENV, DEFAULT_NAME))
    return _module_server


def http_app(server: MCPServer | None = None, *, stateless: bool = False) -> Starlette:
    """The streamable-HTTP ASGI app (path ``/mcp``) for ``server`` (default: a fresh ``build_server()``).

    Each call builds a new session manager (it can run only once), so build one app per uvicorn run.
    ``stateless`` only affects the legacy era (no session ids, hence no legacy elicitation);
    2026-07-28 requests are always single-exchange.
    """
    srv = server if server is not None else build_server(os.environ.get(NAME_ENV, DEFAULT_NAME))
    return srv.streamable_http_app(stateless_http=stateless)


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: ``stdio`` (default) or ``http PORT [--stateless]``."""
    parser = argparse.ArgumentParser(prog="python -m langgraph_mcp.examples.demo_server", description=__doc__)
    sub = parser.add_subparsers(dest="transport")
    sub.add_parser("stdio", help="serve over stdio (default)")
    http = sub.add_parser("http", help="serve streamable HTTP on 127.0.0.1:PORT/mcp")
    http.add_argument("port", type=int, nargs="?", default=8765)
    http.add_argument("--stateless", action="store_true", help="stateless legacy-era HTTP")
    args = parser.parse_args(argv)
    name = os.environ.get(NAME_ENV, DEFAULT_NAME)
    if args.transport == "http":
        import copy

        import uvicorn
        from uvicorn.config import LOGGING_CONFIG

        log_config = copy.deepcopy(LOGGING_CONFIG)
        for handler in log_config["handlers"].values():
            handler["stream"] = "ext://sys.stderr"  # uvicorn's access log defaults to stdout
        print(f"[demo_server pid={os.getpid()}] http://127.0.0.1:{args.port}/mcp", file=sys.stderr)
        app = http_app(build_server(name), stateless=args.stateless)
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_config=log_config)
    else:
        build_server(name).run("stdio")


if __name__ == "__main__":
    # Re-import under the package name so resolver request keys read
    # "langgraph_mcp.examples.demo_server:ask_date" instead of "__main__:ask_date".
    from langgraph_mcp.examples.demo_server import main as _main

    _main()
