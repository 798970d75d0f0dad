"""Which credentials a call is sent with: the current run's identity per server, and its OAuth sign-in.

A server with fixed credentials has one identity for the life of ``McpServers``; one whose headers come from the
run (:mod:`langgraph_mcp.credentials`) gets one per run's values, and one with an ``oauth`` config one per principal,
signed in through a :class:`~langgraph_mcp.connection.oauth.SignInProvider` over the graph's store.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from langgraph.config import get_store
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_mcp.config import OAuthOptions, ServerSpec
from langgraph_mcp.connection.oauth import SignInProvider, StoredSignIn
from langgraph_mcp.credentials import (
    RUN_CONFIG,
    Identity,
    current_config,
    current_principal,
    principal_origin,
    resolve_identity,
    warn_client_principal,
)
from langgraph_mcp.errors import AnswerError, ConfigError, CredentialError
from langgraph_mcp.questions.sign_in import SignInResult, check_sign_in_answer, sign_in_result


def current_store() -> BaseStore | None:
    """The running graph's store (``compile(store=...)``, Agent Server's), or ``None``."""
    try:
        return get_store()
    except (RuntimeError, KeyError):  # outside a run, or a config without LangGraph's runtime
        return None


@contextlib.contextmanager
def run_config(config: Mapping[str, Any] | None) -> Iterator[None]:
    """Inside the block, credentials come from ``config`` (``None``: from the running graph's config, as always)."""
    if config is None:
        yield
        return
    token = RUN_CONFIG.set(config)
    try:
        yield
    finally:
        RUN_CONFIG.reset(token)


class Identities:
    """The credential identity of each call, and the OAuth client of each (server, principal, store).

    ``spec`` looks a server's configuration up (raising for an unknown name)."""

    def __init__(self, spec: Callable[[str], ServerSpec]) -> None:
        self.spec = spec
        self._static: dict[str, Identity] = {}
        self._sign_ins: dict[tuple[str, str, int], SignInProvider] = {}
        self._fallback_store: BaseStore = InMemoryStore()
        """Where OAuth tokens go when the graph has no store: this process's memory (README says what that means)."""

    def identity(self, server: str, headers: dict[str, str] | None = None) -> Identity:
        """The credentials a call to ``server`` is sent with in the current run (see :mod:`.credentials`);
        ``headers`` (an interceptor's) replace the run's.

        Raises :class:`~langgraph_mcp.credentials.CredentialError` when the run lacks a ``configurable`` value
        the server's headers need."""
        override = headers
        if override is None:
            static = self._static.get(server)
            if static is not None:
                return static
        config = RUN_CONFIG.get()
        spec = self.spec(server)
        run_config = config if config is not None else current_config()
        identity = resolve_identity(server, spec, run_config, override)
        oauth = getattr(spec, "oauth", None)
        if oauth is not None:
            identity = dataclasses.replace(identity, auth=self._sign_in(server, spec, oauth, run_config))
        if not identity.per_run and override is None:
            self._static[server] = identity
        return identity

    def _sign_in(
        self, server: str, spec: ServerSpec, oauth: OAuthOptions, config: Mapping[str, Any] | None
    ) -> SignInProvider:
        """The OAuth client of the run's principal for ``server``, over the run's store (one per pair)."""
        if oauth.principal_key is not None:
            value = ((config or {}).get("configurable") or {}).get(oauth.principal_key)
            principal = str(value) if value is not None and str(value) else None
            asserted = principal is not None  # a configurable value: whatever the client sent
        else:
            principal = current_principal(config)  # the one answer approvals and sign-ins key on
            asserted = principal_origin(config) == "client"
        if asserted:
            warn_client_principal(
                f"the OAuth sign-in to MCP server {server!r} (its tokens are kept per user)"
            )
        if principal is None:
            where = (
                f"config['configurable'][{oauth.principal_key!r}]"
                if oauth.principal_key
                else "config['configurable']['user_id'] (LangGraph Agent Server sets 'langgraph_auth_user_id')"
            )
            raise CredentialError(
                server,
                f"signs each user in with OAuth, and this run names nobody: pass {where}, e.g. "
                'graph.invoke(..., {"configurable": {"user_id": "alice", ...}})',
            )
        store = current_store() or self._fallback_store
        key = (server, principal, id(store))
        provider = self._sign_ins.get(key)
        if provider is None:
            provider = self._sign_ins[key] = SignInProvider(
                server=server,
                principal=principal,
                url=str(getattr(spec, "url", "")),
                redirect_uri=oauth.redirect_uri,
                scopes=list(oauth.scopes),
                client_name=oauth.client_name,
                client_metadata_url=oauth.client_metadata_url,
                storage=StoredSignIn(store, server, principal),
            )
        return provider

    def sign_in(self, server: str) -> SignInProvider | None:
        """The current run's OAuth client for ``server`` (``None``: the server has no ``oauth`` config)."""
        auth = self.identity(server).auth
        return auth if isinstance(auth, SignInProvider) else None

    def forget_sign_in(self, auth_id: int) -> None:
        """A retired identity's OAuth client goes from memory (its tokens stay in the store)."""
        for key, provider in list(self._sign_ins.items()):
            if id(provider) == auth_id:
                del self._sign_ins[key]

    def hand_over(self, server: str, result: SignInResult) -> None:
        """The run's principal signed in to ``server`` (a callback already checked against its sign-in): the next
        connection exchanges the code for tokens (see :mod:`langgraph_mcp.connection.oauth`)."""
        provider = self._provider(server)
        if result.code is None:
            raise AnswerError("the callback URL carries no code")
        provider.complete(result.code, result.state, result.iss)

    async def complete(self, server: str, callback_url: str) -> None:
        """``McpServers.complete_sign_in`` in the current run: check ``callback_url`` against the pending sign-in
        of the run's principal, then :meth:`hand_over` its code."""
        provider = self._provider(server)
        pending = await provider.storage.pending()
        if pending is None:
            raise AnswerError(
                f"no sign-in to MCP server {server!r} is in progress for {provider.principal!r}"
            )
        check_sign_in_answer(
            {"authorization_url": pending["authorization_url"]}, {"callback_url": callback_url}
        )
        result = sign_in_result({"callback_url": callback_url})
        if result is None or result.error is not None:
            raise AnswerError(
                f"the authorization server refused the sign-in ({result.error if result else ''})"
            )
        self.hand_over(server, result)

    def _provider(self, server: str) -> SignInProvider:
        provider = self.sign_in(server)
        if provider is None:
            raise ConfigError(f"MCP server {server!r} has no 'oauth' config: nothing to sign in to")
        return provider
