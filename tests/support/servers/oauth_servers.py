"""The mcp SDK's ``simple-auth`` example servers on 127.0.0.1, as subprocesses for the OAuth tests.

``python oauth_servers.py as PORT`` runs the example's authorization server (``mcp_simple_auth.auth_server``:
dynamic registration, its login form, PKCE, token introspection) and ``python oauth_servers.py rs PORT AS_URL``
its resource server (``mcp_simple_auth.server``: one tool, ``get_time``, behind bearer tokens checked by
introspection, both protocol eras). Each prints ``READY`` on stdout once it listens.

The example authorization server issues no refresh tokens, has no revocation endpoint and its access tokens live an
hour, so the AS here is the example's own app with its provider extended in three ways only: it issues (and
rotates) refresh tokens, it serves the SDK's RFC 7009 revocation endpoint (``/revoke``, named in its metadata), and
it has test-only endpoints that end every access token (``POST /test/expire``), every refresh token
(``POST /test/revoke``) and that count what it did (``GET /test/stats``: registrations, token grants, refused refreshes and ``revoked`` tokens).
The example package comes from the mcp source distribution (``.ci/run`` installs it; see tests/support/oauth_support.py).
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from collections import Counter
from typing import Any

import mcp_simple_auth.auth_server as example_as
import uvicorn
from mcp.server.auth.provider import AccessToken, RefreshToken
from mcp.server.auth.settings import RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_simple_auth.server import ResourceServerSettings, create_resource_server
from mcp_simple_auth.simple_auth_provider import SimpleAuthSettings
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

STATS: Counter[str] = Counter()


class RefreshingProvider(example_as.SimpleAuthProvider):
    """The example's provider, plus refresh tokens (rotated on use) and a record of what it issued."""

    instance: RefreshingProvider | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refresh_tokens: dict[str, RefreshToken] = {}
        RefreshingProvider.instance = self

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        STATS["registrations"] += 1
        await super().register_client(client_info)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: Any
    ) -> OAuthToken:
        token = await super().exchange_authorization_code(client, authorization_code)
        STATS["authorization_code"] += 1
        return self._with_refresh(token)

    def _with_refresh(self, token: OAuthToken) -> OAuthToken:
        access = self.tokens[token.access_token]
        refresh = RefreshToken(
            token=f"mcp_rt_{secrets.token_hex(32)}",
            client_id=access.client_id,
            scopes=access.scopes,
            resource=access.resource,
            subject=access.subject,
        )
        self.refresh_tokens[refresh.token] = refresh
        return token.model_copy(update={"refresh_token": refresh.token})

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:  # type: ignore[override]
        """RFC 7009 through the SDK's handler: the token and every token of its client and subject."""
        STATS["revoked"] += 1
        for tokens in (self.tokens, self.refresh_tokens):
            for key, value in list(tokens.items()):
                if key == token.token or (
                    value.client_id == token.client_id and getattr(value, "subject", None) == token.subject
                ):
                    del tokens[key]

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        found = self.refresh_tokens.get(refresh_token)
        if found is None:
            STATS["refresh_refused"] += 1
        return found

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        STATS["refresh_token"] += 1
        del self.refresh_tokens[refresh_token.token]
        access = f"mcp_{secrets.token_hex(32)}"
        self.tokens[access] = AccessToken(
            token=access,
            client_id=refresh_token.client_id,
            scopes=scopes,
            expires_at=int(time.time()) + 3600,
            resource=refresh_token.resource,
            subject=refresh_token.subject,
        )
        token = OAuthToken(access_token=access, token_type="Bearer", expires_in=3600, scope=" ".join(scopes))
        return self._with_refresh(token)


async def _expire(request: Request) -> Response:
    provider = RefreshingProvider.instance
    assert provider is not None
    for token in provider.tokens.values():
        token.expires_at = int(time.time()) - 1
    return JSONResponse({"expired": len(provider.tokens)})


async def _revoke(request: Request) -> Response:
    provider = RefreshingProvider.instance
    assert provider is not None
    count = len(provider.refresh_tokens)
    provider.refresh_tokens.clear()
    return JSONResponse({"revoked": count})


async def _stats(request: Request) -> Response:
    return JSONResponse(dict(STATS))


class _Ready(uvicorn.Server):
    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            print("READY", flush=True)


def _serve(app: Any, port: int) -> None:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    asyncio.run(_Ready(config).serve())


def main(argv: list[str]) -> None:
    role, port = argv[0], int(argv[1])
    if role == "as":
        url = f"http://127.0.0.1:{port}"
        example_as.SimpleAuthProvider = RefreshingProvider  # type: ignore[misc]
        routes = example_as.create_auth_routes
        example_as.create_auth_routes = lambda **kw: routes(  # type: ignore[assignment]
            **{**kw, "revocation_options": RevocationOptions(enabled=True)}
        )
        app = example_as.create_authorization_server(
            example_as.AuthServerSettings(
                host="127.0.0.1", port=port, server_url=AnyHttpUrl(url), auth_callback_path=f"{url}/login"
            ),
            SimpleAuthSettings(),
        )
        app.router.routes.extend(
            [
                Route("/test/expire", _expire, methods=["POST"]),
                Route("/test/revoke", _revoke, methods=["POST"]),
                Route("/test/stats", _stats, methods=["GET"]),
            ]
        )
        _serve(app, port)
    elif role == "rs":
        auth_server = argv[2]
        settings = ResourceServerSettings(
            host="127.0.0.1",
            port=port,
            server_url=AnyHttpUrl(f"http://127.0.0.1:{port}/mcp"),
            auth_server_url=AnyHttpUrl(auth_server),
            auth_server_introspection_endpoint=f"{auth_server}/introspect",
        )
        _serve(create_resource_server(settings).streamable_http_app(host="127.0.0.1"), port)
    else:
        raise SystemExit(f"usage: {argv[0]} as PORT | rs PORT AS_URL")


if __name__ == "__main__":
    main(sys.argv[1:])
