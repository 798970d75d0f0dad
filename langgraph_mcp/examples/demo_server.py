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
import datetime
import os
import re
import sys
import uuid
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from mcp.types.version import is_version_at_least
from pydantic import BaseModel, Field, field_validator
from starlette.applications import Starlette

from langgraph_mcp.examples.demo_state import (
    ASKS_USER,
    AUDIO_WAV,
    DEFAULT_NAME,
    EVENTS_FILE_ENV,
    IMAGE_PNG,
    NAME_ENV,
    DemoServer,
    EventRecorder,
    Forecast,
)
from langgraph_mcp.examples.demo_tools import add_plain_tools, add_sharing_tools

MODERN_VERSION = "2026-07-28"

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


def _url_request(amount: int) -> tuple[str, str]:
    return (
        f"Please confirm the deposit of {amount} EUR on the payment page.",
        f"https://pay.example.com/checkout/{amount}",
    )


def build_server(name: str = DEFAULT_NAME) -> DemoServer:
    """Build a fresh demo server (fresh counters, workspace and URL-consent state)."""
    srv = DemoServer(name)
    rec = srv.events.record
    add_plain_tools(srv)

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

    add_sharing_tools(srv)
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
