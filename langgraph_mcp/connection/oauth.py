"""Per-user OAuth for an HTTP server: the mcp SDK's ``OAuthClientProvider``, stopped at the person instead of waiting.

The SDK's provider runs the whole authorization-code flow inside one HTTP request: on a 401 it discovers the
authorization server, registers a client, builds the authorization URL (its own PKCE pair, ``state``, resource
indicator and scopes), calls ``redirect_handler`` and then awaits ``callback_handler`` for the code, in that
request, for as long as the person takes. A graph cannot wait there across a checkpoint. So
:class:`SignInProvider` lets the SDK do every step up to the URL, keeps the PKCE verifier and ``state`` in the
store (never in a checkpoint), and ends the request with
:class:`~langgraph_mcp.errors.AuthorizationRequiredError`, which carries the URL to the graph, where the call
pauses. On resume :meth:`SignInProvider.complete` hands it the checked code, and the next 401 flow of the
connection exchanges it (the SDK's own token request) and goes on with the token.

Everything is stored in the LangGraph store (``BaseStore``) under ``("langgraph_mcp", "oauth", server,
principal)``, so any worker of a deployment can use it, never in a checkpoint, a payload or a log:

=========== ===========================================================================================
key         value
=========== ===========================================================================================
``tokens``  the SDK's ``OAuthToken`` (access and refresh token), its absolute expiry, and the discovered
            authorization-server and protected-resource metadata (to refresh from another process)
``client``  the client registration (``OAuthClientInformationFull``: dynamic registration or CIMD)
``pending`` the sign-in in progress: ``state``, PKCE ``verifier``, the authorization URL, when it was made
=========== ===========================================================================================

What the SDK's provider does not do, and how it is worked with here (its two private steps, behind
``_compat.OAuthProviderHooks``):

* its ``_initialize`` loads stored tokens without their expiry and without the discovered metadata, so a fresh
  process would send an expired token, and refresh against the resource server's origin (a 404): both are
  restored from the store (:meth:`SignInProvider.loaded`);
* its authorization step keeps the PKCE verifier in a local variable: the step is run with handlers that capture
  the URL and answer with a placeholder code (never sent anywhere), so the SDK returns the verifier;
* on a 401 it goes straight to a new authorization, never trying the refresh token it holds: the first time,
  the access token is marked expired instead and the connection is started again (:class:`RefreshFirst`), so the
  SDK refreshes; only if that fails is the person asked.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlparse

from langgraph.store.base import BaseStore
from mcp.client.auth import AuthorizationCodeResult
from mcp.client.auth.utils import union_scopes, validate_authorization_response_iss
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl

from langgraph_mcp._compat import OAuthProviderHooks
from langgraph_mcp.credentials import namespace_label
from langgraph_mcp.errors import AuthorizationRequiredError, LangGraphMcpError

__all__ = [
    "OAUTH_NAMESPACE",
    "OAUTH_RECORD_KEYS",
    "PENDING_SIGN_IN_TTL",
    "RefreshFirst",
    "SignInProvider",
    "StoredSignIn",
    "oauth_namespace",
    "revoke_at_server",
    "token_summary",
]

OAUTH_NAMESPACE: tuple[str, str] = ("langgraph_mcp", "oauth")
"""The store namespace prefix of every OAuth record; one server's records for one principal are under
``(*OAUTH_NAMESPACE, server, namespace_label(principal))``."""

PENDING_SIGN_IN_TTL = 600.0
"""Seconds a sign-in in progress is reused (the same authorization URL) before a new one is made."""

_PLACEHOLDER_CODE = "langgraph-mcp:not-a-code"


OAUTH_RECORD_KEYS = ("tokens", "client", "pending")
"""The keys of one principal's records (see the module docstring)."""


def oauth_namespace(server: str, principal: str | None = None) -> tuple[str, ...]:
    """Where one principal's records for ``server`` are (without ``principal``: the prefix of every principal's);
    the principal is a :func:`~langgraph_mcp.credentials.namespace_label`, so any string will do."""
    return (
        (*OAUTH_NAMESPACE, server)
        if principal is None
        else (*OAUTH_NAMESPACE, server, namespace_label(principal))
    )


class RefreshFirst(LangGraphMcpError):
    """A 401 came with a refresh token at hand: the access token is marked expired, start the connection again
    (the SDK refreshes before the next request). Never leaves the connection's start."""


class _HideSignInPauses(logging.Filter):
    """The SDK logs every exception out of its flow with a traceback (``"OAuth flow error"``); a sign-in pause
    is not an error, so its record is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        return not (info and isinstance(info[1], AuthorizationRequiredError | RefreshFirst))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_HideSignInPauses())


class StoredSignIn:
    """The SDK's ``TokenStorage`` for one (server, principal), over a LangGraph store."""

    def __init__(self, store: BaseStore, server: str, principal: str) -> None:
        self.store = store
        self.namespace = oauth_namespace(server, principal)
        self.provider: SignInProvider | None = None
        """Set by the provider: its discovered metadata is saved with the tokens."""

    async def _get(self, key: str) -> dict[str, Any] | None:
        item = await self.store.aget(self.namespace, key)
        return dict(item.value) if item is not None else None

    async def _put(self, key: str, value: dict[str, Any]) -> None:
        await self.store.aput(self.namespace, key, value, index=False)  # never embedded

    async def token_record(self) -> dict[str, Any] | None:
        return await self._get("tokens")

    async def get_tokens(self) -> OAuthToken | None:
        record = await self._get("tokens")
        if record is None:
            return None
        token = OAuthToken.model_validate(record["token"])
        expires_at = record.get("expires_at")
        if expires_at is not None:  # what is left of it now: the provider computes its expiry from this
            token = token.model_copy(update={"expires_in": int(expires_at - time.time())})
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None
        record: dict[str, Any] = {"token": tokens.model_dump(mode="json"), "expires_at": expires_at}
        context = self.provider.context if self.provider is not None else None
        if self.provider is not None:
            self.provider.tokens_saved()
        if context is not None:
            record["auth_server_url"] = context.auth_server_url
            if context.oauth_metadata is not None:
                record["oauth_metadata"] = context.oauth_metadata.model_dump(mode="json", exclude_none=True)
            if context.protected_resource_metadata is not None:
                record["protected_resource_metadata"] = context.protected_resource_metadata.model_dump(
                    mode="json", exclude_none=True
                )
        await self._put("tokens", record)

    async def clear_tokens(self) -> None:
        await self.store.adelete(self.namespace, "tokens")

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        record = await self._get("client")
        return OAuthClientInformationFull.model_validate(record) if record is not None else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._put("client", client_info.model_dump(mode="json", exclude_none=True))

    async def pending(self) -> dict[str, Any] | None:
        record = await self._get("pending")
        if record is None or time.time() - float(record.get("created_at", 0)) > PENDING_SIGN_IN_TTL:
            return None
        return record

    async def set_pending(self, record: dict[str, Any]) -> None:
        await self._put("pending", record)

    async def clear_pending(self) -> None:
        await self.store.adelete(self.namespace, "pending")


def requested_scopes(authorization_url: str) -> list[str]:
    """The scopes an authorization URL asks for (its ``scope`` parameter, space-separated)."""
    values = parse_qs(urlparse(authorization_url).query).get("scope") or [""]
    return values[0].split()


def url_state(url: str) -> str | None:
    values = parse_qs(urlparse(url).query).get("state")
    return values[0] if values else None


class SignInProvider(OAuthProviderHooks):
    """The SDK's OAuth client for one server and one principal, pausing for the person instead of waiting.

    ``complete(code, state, iss)`` (after the person signed in) makes the next authorization step use that code;
    anything else that needs the person raises :class:`~langgraph_mcp.errors.AuthorizationRequiredError`.
    """

    def __init__(
        self,
        *,
        server: str,
        principal: str,
        url: str,
        redirect_uri: str,
        scopes: list[str],
        client_name: str | None,
        client_metadata_url: str | None,
        storage: StoredSignIn,
    ) -> None:
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect_uri)],
            client_name=client_name,
            scope=" ".join(scopes) or None,
            grant_types=["authorization_code", "refresh_token"],
        )
        super().__init__(url, metadata, storage, client_metadata_url=client_metadata_url)
        storage.provider = self
        self.server = server
        self.principal = principal
        self.storage = storage
        self.scopes = list(scopes)
        self._completion: AuthorizationCodeResult | None = None
        self._refresh_tried = False

    def tokens_saved(self) -> None:
        """New tokens came (a sign-in or a refresh): a later 401 may try the refresh token first again, and a code
        handed over meanwhile by a sibling call of the same sign-in is not needed any more."""
        self._refresh_tried = False
        self._completion = None

    def complete(self, code: str, state: str, iss: str | None = None) -> None:
        """The person signed in: the next authorization step exchanges ``code`` (for the sign-in with ``state``)."""
        self._completion = AuthorizationCodeResult(code=code, state=state, iss=iss)

    async def loaded(self) -> None:
        record = await self.storage.token_record()
        context = self.context
        if record is None:
            return
        if context.current_tokens is not None and context.current_tokens.expires_in is not None:
            context.update_token_expiry(context.current_tokens)
        if context.oauth_metadata is None and record.get("oauth_metadata"):
            context.oauth_metadata = OAuthMetadata.model_validate(record["oauth_metadata"])
        if context.protected_resource_metadata is None and record.get("protected_resource_metadata"):
            context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                record["protected_resource_metadata"]
            )
        if context.auth_server_url is None:
            context.auth_server_url = record.get("auth_server_url")

    async def authorization_code(self) -> tuple[str, str]:
        completion, self._completion = self._completion, None
        if completion is None and not self._refresh_tried and self.context.can_refresh_token():
            self._refresh_tried = True
            self.context.token_expiry_time = 1.0  # long past: the next request refreshes first
            raise RefreshFirst()
        self._refresh_tried = False
        pending = await self.storage.pending()
        client_id = self.context.client_info.client_id if self.context.client_info is not None else None
        if pending is not None and pending.get("client_id") != client_id:
            pending = None  # made for another registration: its code could not be exchanged
        if completion is not None and pending is not None and completion.state == pending["state"]:
            await self.storage.clear_pending()  # a code is exchanged once, whatever happens next
            validate_authorization_response_iss(completion.iss, self.context.oauth_metadata)
            return completion.code, str(pending["verifier"])
        # The tokens held did not do (a 401, or a refresh that failed): they are not offered again.
        await self.storage.clear_tokens()
        if pending is None:
            pending = await self._new_sign_in(client_id)
        raise AuthorizationRequiredError(
            self.server,
            principal=self.principal,
            authorization_url=str(pending["authorization_url"]),
            scopes=requested_scopes(str(pending["authorization_url"])),
        )

    async def _new_sign_in(self, client_id: str | None) -> dict[str, Any]:
        """Run the SDK's authorization step up to the person: it builds the URL, and returns the PKCE verifier
        because the callback answers its own state with a placeholder code (never sent anywhere)."""
        self.context.client_metadata.scope = union_scopes(
            self.context.client_metadata.scope, " ".join(self.scopes) or None
        )
        shown: list[str] = []

        async def redirect(url: str) -> None:
            shown.append(url)

        async def callback() -> AuthorizationCodeResult:
            return AuthorizationCodeResult(
                code=_PLACEHOLDER_CODE, state=url_state(shown[-1]), iss=_issuer(self)
            )

        self.context.redirect_handler, self.context.callback_handler = redirect, callback
        try:
            _, verifier = await self.sdk_authorization_code()
        finally:
            self.context.redirect_handler = self.context.callback_handler = None
        record = {
            "state": url_state(shown[-1]),
            "verifier": verifier,
            "authorization_url": shown[-1],
            "client_id": client_id,
            "created_at": time.time(),
        }
        await self.storage.set_pending(record)
        return record


def _issuer(provider: SignInProvider) -> str | None:
    metadata = provider.context.oauth_metadata
    return str(metadata.issuer) if metadata is not None else None


REVOCATION_TIMEOUT = 10.0
"""Seconds ``revoke_at_server`` waits for the authorization server's revocation endpoint, per token."""


def revoke_at_server(tokens: Mapping[str, Any] | None, client: Mapping[str, Any] | None) -> list[str]:
    """Revoke a stored sign-in's tokens at its authorization server (RFC 7009), when that server's metadata (kept
    with the tokens) names a ``revocation_endpoint``: the refresh token first (a server revokes its access tokens
    with it), then the access token. Returns what could not be revoked, in words (empty: all done, or nothing to
    do: no tokens, or a server without a revocation endpoint; the local records are deleted either way)."""
    import httpx2

    metadata = (tokens or {}).get("oauth_metadata") or {}
    endpoint = metadata.get("revocation_endpoint")
    token = (tokens or {}).get("token") or {}
    if not endpoint or not token:
        return []
    auth: dict[str, str] = {}
    if client and client.get("client_id"):
        auth["client_id"] = str(client["client_id"])
        if client.get("client_secret"):
            auth["client_secret"] = str(client["client_secret"])
    problems: list[str] = []
    for hint in ("refresh_token", "access_token"):
        value = token.get(hint)
        if not value:
            continue
        try:
            response = httpx2.post(
                str(endpoint),
                data={"token": str(value), "token_type_hint": hint, **auth},
                timeout=REVOCATION_TIMEOUT,
            )
        except httpx2.HTTPError as exc:
            problems.append(f"{hint}: {endpoint} did not answer ({type(exc).__name__}: {exc})")
            continue
        if response.status_code != 200:  # RFC 7009: 200 for a revoked, unknown or expired token alike
            problems.append(f"{hint}: {endpoint} answered HTTP {response.status_code} {response.text[:200]}")
    return problems


def token_summary(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """What may be shown about a stored token: never the token itself."""
    if record is None:
        return {}
    token = record.get("token") or {}
    return {
        "scopes": str(token.get("scope") or "").split(),
        "expires_at": record.get("expires_at"),
        "refreshable": bool(token.get("refresh_token")),
    }
