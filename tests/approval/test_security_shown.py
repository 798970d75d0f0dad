"""Issue 9, what the human is shown: the host a browser really goes to, links only for http(s), secrets flagged.

7. URL hosts follow the WHATWG URL standard (what browsers do), non-http(s) URLs are flagged and never offered
   as links, and the CLI shows the flag.
8. Secret form fields are found by name, title and description; forms that ask for secrets are flagged.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from langgraph_mcp.cli.prompts import ask_url
from langgraph_mcp.questions.elicitation import request_from_params
from langgraph_mcp.questions.inspection import inspect_url, sensitive_fields, url_host
from tests.support.checkpointers import StrictSaver
from tests.support.helpers import ERAS, OpenServers, demo_entry
from tests.support.node_support import call, one_turn_graph, start
from tests.support.security_support import SECURITY_TRANSPORTS, url_server

# ------------------------------------------------------------------------------ 7. URLs


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://evil.example\\@bank.example/", "evil.example"),  # "\" ends the authority, as "/" does
        ("https:evil.example", "evil.example"),
        ("https:///evil.example/", "evil.example"),
        ("https:\\\\evil.example/", "evil.example"),
        ("https://0x7f000001/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("https://bank.example@evil.example/login", "evil.example"),
        ("https://a@b@evil.example/", "evil.example"),
        (" \thttps://ev\nil.example/ ", "evil.example"),  # tabs/newlines removed, spaces trimmed
        ("HTTPS://EXAMPLE.com:443/", "example.com"),  # the default port is dropped
        ("https://exa%6Dple.com/", "example.com"),
        ("https://1.2.3.256/", ""),  # not a valid IPv4 address: a browser refuses it
        ("file:///etc/passwd", ""),
    ],
)
def test_the_host_is_what_a_browser_goes_to(url: str, host: str) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,<script>x</script>",
        "file:///etc/passwd",
        "vbscript:x",
        "ftp://files.example/x",
    ],
)
def test_non_http_urls_are_flagged_and_never_openable(url: str) -> None:
    seen = inspect_url(url)
    assert not seen.openable
    assert seen.warning and "never offered as a link" in seen.warning


URLS = ["https://evil.example\\@bank.example/", "javascript:alert(document.cookie)", "https://pay.example/ok"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_url_payloads_carry_the_browser_host_and_the_flag(
    open_servers: OpenServers, transport: str, mode: str
) -> None:
    servers = open_servers(
        {"links": await open_servers.enter(demo_entry(transport, mode, server=url_server(URLS)))}
    )
    seen: list[dict[str, Any]] = []
    for i, _ in enumerate(URLS):
        graph = one_turn_graph(servers, [call("links_open_link", f"c{i}", i=i)], StrictSaver())
        out = await graph.ainvoke(start(), {"configurable": {"thread_id": f"t{i}"}})
        [question] = out["__interrupt__"]
        [request] = question.value["requests"].values()
        seen.append(request)
    assert [(r["host"], r["scheme"], r["openable"]) for r in seen] == [
        ("evil.example", "https", True),
        ("", "javascript", False),
        ("pay.example", "https", True),
    ]
    assert "never offered as a link" in seen[1]["warning"] and "warning" not in seen[2]


def test_the_cli_shows_the_flag_and_no_link() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    request: Any = {
        "mode": "url",
        "message": "Open",
        "url": "javascript:alert(1)",
        "host": "",
    }  # an old payload
    console.input = lambda *a, **k: "decline"  # type: ignore[method-assign]
    ask_url(console, request)
    text = out.getvalue()
    assert "Warning: a javascript: URL" in text and "Open this URL yourself" not in text
    out.truncate(0)
    ask_url(console, {"mode": "url", "message": "Open", "url": URLS[0], "host": "bank.example"})
    assert "if you trust evil.example" in out.getvalue()  # the payload's stale host is not trusted


# ------------------------------------------------------------------------------ 8. secrets

POSITIVES = [
    "authorization",
    "bearer",
    "jwt",
    "mfa_code",
    "2fa",
    "twoFACode",
    "totp",
    "verification_code",
    "seed_phrase",
    "mnemonic",
    "recovery_codes",
    "session_cookie",
    "iban",
    "cc_number",
    "pass",
    "password",
    "api-key",
]
NEGATIVES = [
    "username",
    "token_count",
    "description",
    "secretary",
    "pinned",
    "tokenizer",
    "passenger",
    "bypass",
]


def test_secret_fields_by_name() -> None:
    schema = {"type": "object", "properties": {name: {"type": "string"} for name in [*POSITIVES, *NEGATIVES]}}
    assert sensitive_fields(schema) == POSITIVES


def test_secret_fields_by_description_and_title() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "description": "Your account password"},
            "b": {"type": "string", "description": "A bearer token for the API"},
            "c": {"type": "string", "title": "One-time passcode"},
            "d": {"type": "string", "description": "We pass this on to the pin service"},  # everyday words
            "e": {"type": "integer", "description": "How many tokens to generate"},
            "f": {"type": "integer", "title": "Token count"},
        },
    }
    assert sensitive_fields(schema) == ["a", "b", "c"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("transport", SECURITY_TRANSPORTS)
async def test_a_form_asking_for_secrets_is_flagged(
    open_servers: OpenServers, transport: str, mode: str
) -> None:
    servers = open_servers({"demo": await open_servers.enter(demo_entry(transport, mode))})
    graph = one_turn_graph(servers, [call("demo_login", "c1", service="mail")], StrictSaver())
    out = await graph.ainvoke(start(), {"configurable": {"thread_id": "t"}})
    [question] = out["__interrupt__"]
    [request] = question.value["requests"].values()
    assert request["asks_for_secrets"] is True and "password" in request["sensitive"]
    graph = one_turn_graph(servers, [call("demo_book_trip", "c2", destination="Rome")], StrictSaver())
    out = await graph.ainvoke(start(), {"configurable": {"thread_id": "t2"}})
    [question] = out["__interrupt__"]
    [request] = question.value["requests"].values()
    assert request["asks_for_secrets"] is False and request["sensitive"] == []


def test_request_from_params_flags() -> None:
    import mcp.types as types

    form = request_from_params(
        types.ElicitRequestFormParams(
            message="Log in", requested_schema={"type": "object", "properties": {"otp": {"type": "string"}}}
        )
    )
    assert form["sensitive"] == ["otp"] and form.get("asks_for_secrets") is True
