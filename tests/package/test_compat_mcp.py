"""Each private dependency internal behind ``langgraph_mcp._compat`` still exists in the installed versions.

A failure here means an upgrade moved an internal: the message names the dependency version and what moved.
"""

from __future__ import annotations

import pytest
from mcp import Client, MCPError
from mcp.types import CONNECTION_CLOSED, INVALID_REQUEST

from langgraph_mcp import _compat
from langgraph_mcp.examples.demo_server import build_server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_unvalidated_request_internals_exist_and_work(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        missing = _compat.missing_internals(client.session)
        assert missing == [], f"mcp {_compat.MCP_VERSION} no longer has ClientSession internals {missing}"
        raw = await _compat.send_unvalidated(client.session, "tools/list", None)
        assert isinstance(raw, dict) and any(t["name"] == "add" for t in raw["tools"]), (
            f"mcp {_compat.MCP_VERSION}: an unvalidated tools/list no longer returns the raw result"
        )


async def test_sse_event_limit_error_is_recognised() -> None:
    # The exact words the installed SDK and httpx2 produce for an SSE event past max_sse_event_size.
    import httpx2
    from httpx2._sse import _SSEEventDecoder

    decoder = _SSEEventDecoder(max_event_size=4)
    with pytest.raises(httpx2.SSEError) as caught:
        decoder.decode("data: 0123456789")
    sdk_error = MCPError(CONNECTION_CLOSED, f"SSE stream failed: {caught.value}")
    assert _compat.is_sse_event_too_large(sdk_error), (
        f"httpx2 {_compat.dependency_version('httpx2')} words an oversized SSE event differently: {caught.value}"
    )
    assert not _compat.is_sse_event_too_large(
        MCPError(CONNECTION_CLOSED, "SSE stream ended without a response")
    )


def test_session_gone_words() -> None:
    assert _compat.is_session_gone(MCPError(INVALID_REQUEST, "Session not found"))
    assert _compat.is_session_gone(MCPError(INVALID_REQUEST, "Session terminated"))
    assert not _compat.is_session_gone(MCPError(INVALID_REQUEST, "Invalid request"))


def test_oauth_provider_steps_exist_with_the_shapes_sign_in_overrides() -> None:
    # Per-user sign-in (langgraph_mcp.connection.oauth) overrides these two private steps of the SDK's provider.
    import inspect

    from mcp.client.auth import OAuthClientProvider

    for name in _compat.OAUTH_PROVIDER_STEPS:
        step = getattr(OAuthClientProvider, name, None)
        assert step is not None and inspect.iscoroutinefunction(step), (
            f"mcp {_compat.MCP_VERSION}: OAuthClientProvider.{name} is gone or no longer async"
        )
        assert list(inspect.signature(step).parameters) == ["self"], f"{name} takes arguments now"
    # The verifier comes back as the second item of the authorization step's result; the context keeps these.
    source = inspect.getsource(OAuthClientProvider._perform_authorization_code_grant)
    assert "return result.code, pkce_params.code_verifier" in source
    from mcp.client.auth.oauth2 import OAuthContext

    fields = set(OAuthContext.__dataclass_fields__)
    assert {"oauth_metadata", "protected_resource_metadata", "auth_server_url", "token_expiry_time"} <= fields
