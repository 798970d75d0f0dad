"""A call that needs its principal to sign in to an OAuth server (``mcp_authorization``) and the answers."""

from __future__ import annotations

from typing import Literal, TypeAlias, TypedDict

from langgraph_mcp.payloads.base import Cards

AUTHORIZATION_INTERRUPT_TYPE: Literal["mcp_authorization"] = "mcp_authorization"
"""``type`` of the payload raised when a call needs the current principal to sign in to an OAuth server."""


class AuthorizationInterrupt(Cards):
    """Payload of an ``mcp_authorization`` interrupt: a call (or a listing) needs this principal to sign in.

    Open ``authorization_url`` in a browser (never automatically); after signing in, the authorization server
    sends the browser to the configured redirect URI. Answer with that full address
    (:class:`SignInCallback`), or :class:`SignInDecline`. Cards: one, answered with ``respond`` (the callback
    URL) or ``reject`` (decline).
    """

    type: Literal["mcp_authorization"]
    server: str
    authorization_url: str
    host: str
    """Where a browser would really go for ``authorization_url`` (read as for URL elicitation), to show it."""
    tool_call_id: str
    """The call waiting for the sign-in (``""`` for a listing outside a tool call)."""
    principal: str
    """Whose sign-in this is (``config["configurable"]["langgraph_auth_user_id"]``, else ``["user_id"]``)."""
    scopes: list[str]
    """The scopes the authorization URL asks for."""


class SignInCallback(TypedDict):
    """The person signed in: the full URL the browser was redirected to (with ``code`` and ``state``)."""

    callback_url: str


class SignInDecline(TypedDict):
    """The person will not sign in: the call ends with an error ToolMessage."""

    action: Literal["decline"]


SignInAnswer: TypeAlias = SignInCallback | SignInDecline
"""The resume value of an ``mcp_authorization`` interrupt."""


def is_authorization_interrupt(value: object) -> bool:
    """True for an ``mcp_authorization`` (sign-in) payload."""
    return isinstance(value, dict) and value.get("type") == AUTHORIZATION_INTERRUPT_TYPE
