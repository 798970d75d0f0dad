"""Tests for the bundled example server `langgraph_mcp.examples.demo_server`, in both protocol eras."""

from __future__ import annotations

import base64
import io
import json
import os
import socket
import struct
import sys
import wave
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
import uvicorn
from mcp import Client, InputRequiredRoundsExceededError, MCPError, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError

from langgraph_mcp.examples import demo_server
from langgraph_mcp.examples.demo_server import build_server, http_app
from tests.support.helpers import CRASHING_SERVER, LoopbackUvicorn, start_uvicorn

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
MOD = "langgraph_mcp.examples.demo_server"
KEY_DATE = f"{MOD}:ask_date"

EXPECTED_TOOLS = {
    "show_files",
    "files_snapshot",
    "stats",
    "reset_stats",
    "get_forecast",
    "list_files",
    "read_file",
    "write_file",
    "delete_file",
    "move_file",
    "echo",
    "search_web",
    "add",
    "make_image",
    "make_audio",
    "mixed_content",
    "with_meta",
    "always_fails",
    "slow",
    "sleep",
    "book_trip",
    "book_two",
    "book_three_rounds",
    "book_trip_outcome",
    "register",
    "login",
    "pay_deposit",
    "url_required",
    "book_trip_legacy",
    "two_questions_commit",
    "runaway",
    "state_only",
    "whoami",
    "share_file",
}

# Answers by form field name; the asker fills each requested property from here.
FIELD_VALUES: dict[str, Any] = {
    "date": "2026-09-14",
    "seats": 2,
    "window": True,
    "meal": "vegan",
    "name": "Ada",
    "age": 36,
    "email": "ada@example.com",
    "plan": "pro",
    "newsletter": True,
    "start": "2026-01-01",
    "username": "ada",
    "password": "hunter2",
    "answer": "again",
}


class Asker:
    """Elicitation callback that records every request and answers it (accept/decline/cancel)."""

    def __init__(self, action: str = "accept", overrides: dict[str, Any] | None = None) -> None:
        self.action = action
        self.values = {**FIELD_VALUES, **(overrides or {})}
        self.calls: list[tuple[Any, types.ElicitRequestParams]] = []
        self.reached = anyio.Event()
        self.stop_after: int | None = None

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.calls.append((context.request_id, params))
        if self.stop_after is not None and len(self.calls) >= self.stop_after:
            self.reached.set()
        if self.action != "accept" or isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action=self.action)  # type: ignore[arg-type]
        content = {name: self.values[name] for name in params.requested_schema["properties"]}
        return types.ElicitResult(action="accept", content=content)

    @property
    def messages(self) -> list[str]:
        return [p.message for _, p in self.calls]


@asynccontextmanager
async def connect(
    mode: str, asker: Asker | None = None, server: MCPServer | None = None, **kwargs: Any
) -> AsyncIterator[Client]:
    async with Client(
        server if server is not None else build_server(),
        mode=mode,
        elicitation_callback=asker if asker is not None else Asker(),
        **kwargs,
    ) as client:
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.protocol_version == expected
        yield client


async def counts(client: Client) -> dict[str, int]:
    """What the tool bodies recorded (``<tool>.request`` round-trip counters are checked on their own)."""
    result = await client.call_tool("stats", {})
    assert not result.is_error
    return {k: v for k, v in result.structured_content["counts"].items() if not k.endswith(".request")}


async def requests(client: Client) -> dict[str, int]:
    result = await client.call_tool("stats", {})
    return {k: v for k, v in result.structured_content["counts"].items() if k.endswith(".request")}


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def drive_manually(
    client: Client, tool: str, args: dict[str, Any]
) -> tuple[list[types.InputRequiredResult], types.CallToolResult]:
    """Modern era: answer every InputRequiredResult from FIELD_VALUES; return the rounds and the result."""
    rounds: list[types.InputRequiredResult] = []
    result = await client.session.call_tool(tool, args, allow_input_required=True)
    while isinstance(result, types.InputRequiredResult):
        rounds.append(result)
        assert len(rounds) <= 10
        responses: dict[str, Any] = {}
        for key, request in (result.input_requests or {}).items():
            assert isinstance(request, types.ElicitRequest)
            assert isinstance(request.params, types.ElicitRequestFormParams)
            props = request.params.requested_schema["properties"]
            responses[key] = types.ElicitResult(action="accept", content={p: FIELD_VALUES[p] for p in props})
        result = await client.session.call_tool(
            tool,
            args,
            allow_input_required=True,
            input_responses=responses or None,
            request_state=result.request_state,
        )
    assert isinstance(result, types.CallToolResult)
    return rounds, result


# --------------------------------------------------------------------------- listing, plain tools


@pytest.mark.parametrize("mode", MODES)
async def test_tool_list_and_annotations(mode: str) -> None:
    async with connect(mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == EXPECTED_TOOLS
    assert all(t.description for t in tools.values()), "every tool needs a docstring"

    def hints(name: str) -> dict[str, Any] | None:
        ann = tools[name].annotations
        return ann.model_dump(by_alias=True, exclude_none=True) if ann else None

    forecast = tools["get_forecast"]
    assert forecast.title == "Weather forecast"
    assert hints("get_forecast") == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert forecast.output_schema is not None
    assert {"city", "days", "temps_c"} <= set(forecast.output_schema["properties"])
    assert hints("list_files") == {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
    assert hints("read_file") == {"readOnlyHint": True, "openWorldHint": False}
    assert hints("write_file") == {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}
    assert hints("delete_file") == {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
    assert hints("move_file") is None
    assert hints("echo") is None
    assert hints("search_web") == {"readOnlyHint": True, "openWorldHint": True}
    assert hints("add") is not None and hints("add")["readOnlyHint"] is True  # type: ignore[index]
    assert hints("book_trip") == {"readOnlyHint": False, "destructiveHint": False}
    # Resolver parameters are not part of the input schema.
    assert set(tools["book_trip"].input_schema["properties"]) == {"destination"}
    assert set(tools["book_three_rounds"].input_schema["properties"]) == {"destination"}
    assert tools["slow"].input_schema["properties"]["steps"]["default"] == 4


@pytest.mark.parametrize("mode", MODES)
async def test_structured_output(mode: str) -> None:
    async with connect(mode) as client:
        forecast = await client.call_tool("get_forecast", {"city": "Rome", "days": 2})
        added = await client.call_tool("add", {"a": 2, "b": 40})
        search = await client.call_tool("search_web", {"query": "langgraph mcp"})
        echoed = await client.call_tool("echo", {"text": "hi there"})
    assert not forecast.is_error
    sc = forecast.structured_content
    assert sc["city"] == "Rome" and sc["days"] == 2 and len(sc["temps_c"]) == 2
    assert json.loads(text_of(forecast)) == sc  # text rendering mirrors the structured content
    assert added.structured_content == {"result": 42}
    assert text_of(added) == "42"
    assert search.structured_content["query"] == "langgraph mcp"
    assert len(search.structured_content["results"]) == 3
    assert text_of(echoed) == "hi there"


def _png_chunks(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, kinds = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IDAT":
            zlib.decompress(body)
        kinds.append(kind)
        pos += 12 + length
    return kinds


@pytest.mark.parametrize("mode", MODES)
async def test_media_and_mixed_content(mode: str) -> None:
    async with connect(mode) as client:
        image = await client.call_tool("make_image", {})
        audio = await client.call_tool("make_audio", {})
        mixed = await client.call_tool("mixed_content", {})

    img = image.content[0]
    assert isinstance(img, types.ImageContent) and img.mime_type == "image/png"
    assert _png_chunks(base64.b64decode(img.data)) == [b"IHDR", b"IDAT", b"IEND"]
    assert image.structured_content is None

    snd = audio.content[0]
    assert isinstance(snd, types.AudioContent) and snd.mime_type == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(snd.data))) as w:
        assert w.getnframes() > 0 and w.getnchannels() == 1

    kinds = [type(b).__name__ for b in mixed.content]
    assert kinds == [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
        "EmbeddedResource",
    ]
    link = mixed.content[3]
    assert isinstance(link, types.ResourceLink)
    assert (str(link.uri), link.name, link.mime_type) == (
        "file:///workspace/notes.txt",
        "notes",
        "text/plain",
    )
    text_res, blob_res = mixed.content[4], mixed.content[5]
    assert isinstance(text_res, types.EmbeddedResource)
    assert (
        isinstance(text_res.resource, types.TextResourceContents) and "write tests" in text_res.resource.text
    )
    assert isinstance(blob_res, types.EmbeddedResource)
    assert isinstance(blob_res.resource, types.BlobResourceContents)
    assert blob_res.resource.mime_type == "application/octet-stream"
    assert base64.b64decode(blob_res.resource.blob) == bytes(range(16))


@pytest.mark.parametrize("mode", MODES)
async def test_errors_are_results(mode: str) -> None:
    async with connect(mode) as client:
        failed = await client.call_tool("always_fails", {"reason": "no quota"})
        missing = await client.call_tool("read_file", {"path": "nope.txt"})
        bad_days = await client.call_tool("get_forecast", {"city": "Rome", "days": 0})
        ok = await client.call_tool("add", {"a": 1, "b": 1})
    assert failed.is_error and "no quota" in text_of(failed)
    assert missing.is_error and "No such file: nope.txt" in text_of(missing)
    assert bad_days.is_error
    assert not ok.is_error  # session still usable


@pytest.mark.parametrize("mode", MODES)
async def test_with_meta_survives(mode: str) -> None:
    async with connect(mode) as client:
        result = await client.call_tool("with_meta", {})
    assert result.structured_content == {"trace": "abc", "ok": True}
    assert text_of(result) == "result with _meta"
    assert result.meta is not None and result.meta["demo/trace"] == "abc"
    stamp = "io.modelcontextprotocol/serverInfo"
    if mode == "auto":  # the modern SDK merges its serverInfo stamp into our _meta
        assert result.meta[stamp]["name"] == "demo"
    else:
        assert stamp not in result.meta


async def test_workspace_and_commit_counters() -> None:
    async with connect("auto") as client:
        listed = await client.call_tool("list_files", {})
        assert listed.structured_content == {"result": ["notes.txt", "todo.txt"]}
        assert not (await client.call_tool("write_file", {"path": "a.txt", "content": "A"})).is_error
        assert not (await client.call_tool("move_file", {"src": "a.txt", "dst": "b.txt"})).is_error
        assert text_of(await client.call_tool("read_file", {"path": "b.txt"})) == "A"
        assert not (await client.call_tool("delete_file", {"path": "b.txt"})).is_error
        assert (await client.call_tool("delete_file", {"path": "b.txt"})).is_error  # already gone
        after = await client.call_tool("list_files", {})
        c = await counts(client)
    assert after.structured_content == {"result": ["notes.txt", "todo.txt"]}
    assert c["delete_file.enter"] == 2 and c["delete_file.commit"] == 1
    assert c["write_file.commit"] == 1 and c["move_file.commit"] == 1
    assert c["list_files.enter"] == 2
    assert "stats.enter" not in c


async def test_instances_have_fresh_state_and_reset() -> None:
    first, second = build_server(), build_server("other")
    assert first is not second and isinstance(first, MCPServer)
    assert first.name == "demo" and second.name == "other"
    assert isinstance(demo_server.server, MCPServer)
    async with connect("auto", server=first) as client:
        await client.call_tool("echo", {"text": "x"})
        await client.call_tool("delete_file", {"path": "notes.txt"})
        assert (await counts(client))["echo.enter"] == 1
    async with connect("legacy", server=second) as client:
        assert await counts(client) == {}
        files = await client.call_tool("list_files", {})
        assert files.structured_content == {"result": ["notes.txt", "todo.txt"]}  # own workspace
        await client.call_tool("echo", {"text": "y"})
        stats = (await client.call_tool("stats", {})).structured_content
        assert stats["pid"] == os.getpid() and stats["counts"]["echo.enter"] == 1
        assert text_of(await client.call_tool("reset_stats", {})) == "ok"
        assert await counts(client) == {}


@pytest.mark.parametrize("mode", MODES)
async def test_progress_and_timeout(mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect(mode) as client:
        result = await client.call_tool("slow", {"seconds": 0.2, "steps": 4}, progress_callback=on_progress)
        with pytest.raises(MCPError) as exc:
            await client.call_tool("sleep", {"seconds": 5}, read_timeout_seconds=0.2)
        assert exc.value.error.code == types.REQUEST_TIMEOUT
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
    assert text_of(result) == "done"
    assert seen == [(float(i), 4.0, f"step {i}") for i in range(1, 5)]


# --------------------------------------------------------------------------- elicitation


@pytest.mark.parametrize("mode", MODES)
async def test_book_trip(mode: str) -> None:
    asker = Asker()
    async with connect(mode, asker) as client:
        result = await client.call_tool("book_trip", {"destination": "Lisbon"})
        c = await counts(client)
        trips = await requests(client)
    assert text_of(result) == "Booked Lisbon on 2026-09-14"
    # Modern: the question comes back as a result, so the answer costs a second tools/call; legacy: one call.
    assert trips == {"book_trip.request": 2 if mode == "auto" else 1}
    assert asker.messages == ["When do you want to travel to Lisbon?"]
    key, params = asker.calls[0]
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.requested_schema["properties"]["date"]["format"] == "date"
    if mode == "auto":
        assert key == KEY_DATE  # modern: the input_requests key
    else:
        assert isinstance(key, int)  # legacy: the server's JSON-RPC request id
    assert c == {"book_trip.enter": 1, "book_trip.commit": 1}


async def test_book_trip_modern_manual_round() -> None:
    async with connect("auto") as client:
        rounds, result = await drive_manually(client, "book_trip", {"destination": "Oslo"})
    assert len(rounds) == 1 and list(rounds[0].input_requests or {}) == [KEY_DATE]
    assert rounds[0].request_state  # sealed by the server
    assert text_of(result) == "Booked Oslo on 2026-09-14"


@pytest.mark.parametrize("mode", MODES)
async def test_book_two(mode: str) -> None:
    asker = Asker()
    async with connect(mode, asker) as client:
        result = await client.call_tool("book_two", {"destination": "Lisbon"})
        if mode == "auto":
            rounds, manual = await drive_manually(client, "book_two", {"destination": "Lisbon"})
            assert len(rounds) == 1
            assert set(rounds[0].input_requests or {}) == {KEY_DATE, f"{MOD}:ask_seats"}
            assert manual.structured_content == result.structured_content
    expected = {"destination": "Lisbon", "date": "2026-09-14", "seats": 2, "window": True, "meal": None}
    assert result.structured_content == expected
    assert sorted(asker.messages) == ["How many seats to Lisbon?", "When do you want to travel to Lisbon?"]
    if mode == "legacy":  # sequential, date first
        assert asker.messages[0] == "When do you want to travel to Lisbon?"


@pytest.mark.parametrize("mode", MODES)
async def test_book_three_rounds(mode: str) -> None:
    asker = Asker()
    async with connect(mode, asker) as client:
        result = await client.call_tool("book_three_rounds", {"destination": "Rome"})
        if mode == "auto":
            rounds, _ = await drive_manually(client, "book_three_rounds", {"destination": "Rome"})
            assert [list(r.input_requests or {}) for r in rounds] == [
                [KEY_DATE],
                [f"{MOD}:ask_seats_after_date"],
                [f"{MOD}:ask_meal"],
            ]
        c = await counts(client)
    assert asker.messages == [
        "When do you want to travel to Rome?",
        "How many seats to Rome on 2026-09-14?",  # each question uses the previous answer
        "Which meal for your 2 seat(s) to Rome?",
    ]
    meal_params = asker.calls[2][1]
    assert isinstance(meal_params, types.ElicitRequestFormParams)
    assert meal_params.requested_schema["properties"]["meal"]["enum"] == ["none", "veg", "vegan"]
    assert result.structured_content == {
        "destination": "Rome",
        "date": "2026-09-14",
        "seats": 2,
        "window": True,
        "meal": "vegan",
    }
    calls = 2 if mode == "auto" else 1
    assert c["book_three_rounds.commit"] == calls and c["book_three_rounds.enter"] == calls


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("action", "text"), [("decline", "User declined"), ("cancel", "User cancelled")])
async def test_book_trip_outcome(mode: str, action: str, text: str) -> None:
    async with connect(mode, Asker(action)) as client:
        result = await client.call_tool("book_trip_outcome", {"destination": "Rome"})
        aborted = await client.call_tool("book_trip", {"destination": "Rome"})
        c = await counts(client)
    assert not result.is_error and text_of(result) == text
    assert aborted.is_error and action in text_of(aborted)  # the unwrapped form aborts instead
    assert c[f"book_trip_outcome.answered:{action}"] == 1
    assert "book_trip_outcome.commit" not in c and "book_trip.enter" not in c


@pytest.mark.parametrize("mode", MODES)
async def test_register_form_and_validation(mode: str) -> None:
    asker = Asker()
    async with connect(mode, asker) as client:
        good = await client.call_tool("register", {})
    params = asker.calls[0][1]
    assert isinstance(params, types.ElicitRequestFormParams)
    props = params.requested_schema["properties"]
    assert props["name"]["minLength"] == 2
    assert (props["age"]["minimum"], props["age"]["maximum"]) == (18, 120)
    assert props["email"]["format"] == "email"
    assert props["plan"]["enum"] == ["free", "pro"]
    assert props["newsletter"]["default"] is False
    assert props["start"]["format"] == "date"
    assert set(params.requested_schema["required"]) == {"name", "age", "email", "plan", "start"}
    assert good.structured_content == {k: FIELD_VALUES[k] for k in props}

    async with connect(mode, Asker(overrides={"age": 12, "email": "not-an-email"})) as client:
        bad = await client.call_tool("register", {})
    assert bad.is_error and "does not match the requested schema" in text_of(bad)


@pytest.mark.parametrize("mode", MODES)
async def test_login_has_password_field(mode: str) -> None:
    asker = Asker()
    async with connect(mode, asker) as client:
        result = await client.call_tool("login", {"service": "github"})
    params = asker.calls[0][1]
    assert isinstance(params, types.ElicitRequestFormParams)
    assert set(params.requested_schema["properties"]) == {"username", "password"}
    assert params.requested_schema["properties"]["password"]["writeOnly"] is True  # sensitivity hint
    assert "writeOnly" not in params.requested_schema["properties"]["username"]
    assert text_of(result) == "Logged in to github as ada"
    assert "hunter2" not in text_of(result)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_pay_deposit_url_mode(mode: str, action: str) -> None:
    asker = Asker(action)
    async with connect(mode, asker) as client:
        result = await client.call_tool("pay_deposit", {"amount": 42})
        c = await counts(client)
    assert text_of(result) == f"payment consent: {action}"
    key, params = asker.calls[0]
    assert isinstance(params, types.ElicitRequestURLParams)
    assert params.url == "https://pay.example.com/checkout/42"
    if mode == "auto":
        assert key == "pay" and params.elicitation_id is None
    else:
        assert params.elicitation_id
    assert c[f"pay_deposit.answered:{action}"] == 1
    assert c.get("pay_deposit.commit", 0) == (1 if action == "accept" else 0)


@pytest.mark.parametrize("mode", MODES)
async def test_url_required(mode: str) -> None:
    asker = Asker()
    async with connect(mode, asker) as client:
        if mode == "legacy":
            with pytest.raises(MCPError) as exc:
                await client.call_tool("url_required", {"amount": 7})
            assert exc.value.error.code == types.URL_ELICITATION_REQUIRED
            (elicitation,) = UrlElicitationRequiredError.from_error(exc.value.error).elicitations
            assert elicitation.url == "https://pay.example.com/checkout/7"
            assert elicitation.elicitation_id == "deposit-7"
            second = await client.call_tool("url_required", {"amount": 7})
            assert "paid" in text_of(second)
            assert asker.calls == []
        else:
            second = await client.call_tool("url_required", {"amount": 7})
            assert text_of(second) == "payment consent: accept"
            assert isinstance(asker.calls[0][1], types.ElicitRequestURLParams)
        assert (await counts(client))["url_required.commit"] == 1


async def test_book_trip_legacy_only_on_legacy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv("DEMO_EVENTS_FILE", str(events))
    async with connect("legacy") as client:
        result = await client.call_tool("book_trip_legacy", {"destination": "Oslo"})
    assert text_of(result) == "Booked Oslo on 2026-09-14"
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["event"] for e in lines] == ["request", "enter", "asked", "answered:accept", "commit"]
    assert {e["tool"] for e in lines} == {"book_trip_legacy"} and {e["pid"] for e in lines} == {os.getpid()}

    async with connect("auto") as client:
        with pytest.raises(MCPError) as exc:
            await client.call_tool("book_trip_legacy", {"destination": "Oslo"})
    assert exc.value.error.code == types.INVALID_REQUEST


@pytest.mark.parametrize("mode", MODES)
async def test_two_questions_commit(mode: str) -> None:
    asker = Asker()
    async with connect(mode, asker) as client:
        result = await client.call_tool("two_questions_commit", {"destination": "Oslo"})
        c = await counts(client)
    assert text_of(result) == "Booked Oslo on 2026-09-14 for 2 seat(s)"
    assert sorted(asker.messages) == ["How many seats to Oslo?", "When do you want to travel to Oslo?"]
    assert c["two_questions_commit.commit"] == 1 and c["two_questions_commit.enter"] == 1
    if mode == "auto":
        assert {k for k, _ in asker.calls} == {f"{MOD}:modern_ask_date", f"{MOD}:modern_ask_seats"}
    else:
        assert asker.messages[0].startswith("When") and c["two_questions_commit.asked"] == 2


async def test_runaway_modern_never_finishes() -> None:
    asker = Asker()
    async with connect("auto", asker, input_required_max_rounds=3) as client:
        with pytest.raises(InputRequiredRoundsExceededError):
            await client.call_tool("runaway", {})
    assert [k for k, _ in asker.calls] == ["q1", "q2", "q3"]
    assert asker.messages == ["Runaway question #1", "Runaway question #2", "Runaway question #3"]


async def test_runaway_legacy_elicits_until_cancelled() -> None:
    asker = Asker()
    asker.stop_after = 5
    async with connect("legacy", asker) as client:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await client.call_tool("runaway", {})

            tg.start_soon(call)
            with anyio.fail_after(5):
                await asker.reached.wait()
            tg.cancel_scope.cancel()
        assert not (await client.call_tool("echo", {"text": "alive"})).is_error
        c = await counts(client)
    assert len(asker.calls) >= 5 and c["runaway.asked"] >= 5 and c["runaway.enter"] == 1


async def test_state_only_rounds() -> None:
    async with connect("auto") as client:
        rounds, result = await drive_manually(client, "state_only", {"n": 3})
        auto = await client.call_tool("state_only", {"n": 2})
        c = await counts(client)
    assert len(rounds) == 3
    assert all(r.input_requests is None and r.request_state for r in rounds)
    assert text_of(result) == "done after 3 state rounds"
    assert text_of(auto) == "done after 2 state rounds"
    assert c["state_only.enter"] == 4 + 3  # the hand-rolled body runs every round
    async with connect("legacy") as client:
        assert text_of(await client.call_tool("state_only", {"n": 3})) == "done"


# --------------------------------------------------------------------------- real transports


def _crashing_stdio_params(events: Path) -> StdioServerParameters:
    """The demo server plus its process-killing test tools (tests/support/servers/crashing_demo_server.py) over stdio."""
    return StdioServerParameters(
        command=sys.executable,
        args=[str(CRASHING_SERVER)],
        env={"DEMO_EVENTS_FILE": str(events), "DEMO_SERVER_NAME": "demo-stdio"},
    )


async def test_stdio_events_across_restarts(tmp_path: Path) -> None:
    events, marker = tmp_path / "events.jsonl", tmp_path / "marker"
    params = _crashing_stdio_params(events)
    asker = Asker()
    crashed = anyio.Event()
    replacement: dict[str, Any] = {}

    async def replacement_process() -> None:
        # The "restarted" server: spawned concurrently to overlap the (slow) interpreter start-up,
        # but only called after the first process has crashed.
        async with Client(params, mode="legacy") as client:
            await crashed.wait()
            replacement["again"] = await client.call_tool("flaky_read", {"marker": str(marker)})
            replacement["stats"] = (await client.call_tool("stats", {})).structured_content

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(replacement_process)
            try:
                async with Client(params, elicitation_callback=asker) as client:
                    assert client.server_info is not None and client.server_info.name == "demo-stdio"
                    booked = await client.call_tool("book_trip", {"destination": "Rome"})
                    first_pid = (await client.call_tool("stats", {})).structured_content["pid"]
                    with pytest.raises(MCPError) as exc:
                        await client.call_tool("flaky_read", {"marker": str(marker)})
                    assert exc.value.error.code == types.CONNECTION_CLOSED
            finally:
                crashed.set()

    assert marker.exists()
    assert text_of(booked) == "Booked Rome on 2026-09-14"
    assert asker.calls[0][0] == KEY_DATE  # same request key as in-process, even run as a script
    assert text_of(replacement["again"]) == "ok after restart"
    stats = replacement["stats"]
    assert stats["pid"] != first_pid
    assert stats["counts"] == {"flaky_read.request": 1, "flaky_read.enter": 1}

    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [(e["tool"], e["event"], e["pid"] == first_pid) for e in lines if e["event"] != "request"] == [
        ("book_trip", "enter", True),
        ("book_trip", "commit", True),
        ("flaky_read", "enter", True),
        ("flaky_read", "enter", False),
    ]
    assert {e["server"] for e in lines} == {"demo-stdio"}


async def test_request_keys_under_python_m(tmp_path: Path) -> None:
    """``python -m langgraph_mcp.examples.demo_server`` names its resolvers by the module, not ``__main__``."""
    params = StdioServerParameters(command=sys.executable, args=["-m", MOD, "stdio"])
    asker = Asker()
    with anyio.fail_after(60):
        async with Client(params, elicitation_callback=asker) as client:
            booked = await client.call_tool("book_trip", {"destination": "Rome"})
    assert text_of(booked) == "Booked Rome on 2026-09-14"
    assert asker.calls[0][0] == KEY_DATE


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def test_http_app_both_eras() -> None:
    port = _free_port()
    config = uvicorn.Config(http_app(build_server()), host="127.0.0.1", port=port, log_level="warning")
    web = LoopbackUvicorn(config)
    asker = Asker()
    async with anyio.create_task_group() as tg:
        await start_uvicorn(tg, web)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            async with Client(url, elicitation_callback=asker) as client:
                assert client.protocol_version == "2026-07-28"
                modern = await client.call_tool("book_trip", {"destination": "Rome"})
            async with Client(url, mode="legacy", elicitation_callback=asker) as client:
                legacy = await client.call_tool("book_trip_legacy", {"destination": "Oslo"})
        finally:
            web.should_exit = True
    assert text_of(modern) == "Booked Rome on 2026-09-14"
    assert text_of(legacy) == "Booked Oslo on 2026-09-14"
    assert asker.calls[0][0] == KEY_DATE and isinstance(
        asker.calls[1][0], int
    )  # modern key, legacy JSON-RPC id
