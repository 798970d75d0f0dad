"""``Oversight``: the options that shape how one graph's MCP calls are judged, given once.

Policy, approval key, store and Agent Chat UI mode are the four things every path that judges a call must agree
on (the gate, the tool node, ``create_agent``'s middleware, the CLI). One object carries them, the constructors and
:func:`langgraph_mcp.graph.agent.add_mcp_tools` take it, so a graph cannot hold a strict gate and a loose node by
accident.

The key itself is kept per ``McpServers`` (:func:`signer_for`): every path over the same servers signs and verifies
with one :class:`Signer`, which also says what a decision about each server binds to under that key.

With hand wiring and no ``Oversight`` (or no policy) given to the tool node, the node is never looser than any gate:
it judges with the strictest of the default policy and every policy a gate, a router or a middleware was given
for the same ``McpServers`` (:func:`policies_for`). A gate and a node of one graph hold different policies only
when both are passed explicitly.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import BaseStore

from langgraph_mcp.config import McpServersConfig
from langgraph_mcp.errors import ConfigError
from langgraph_mcp.policy.binding import ApprovalKey, server_identity
from langgraph_mcp.policy.policy import ApprovalPolicy
from langgraph_mcp.questions.agent_chat_ui import QuestionShapes, shapes_for
from langgraph_mcp.servers.mcp_servers import McpServers

__all__ = [
    "Oversight",
    "PolicyInput",
    "Signer",
    "apply_key",
    "policies_for",
    "register_policy",
    "resolve",
    "signer_for",
]

PolicyInput = ApprovalPolicy | Mapping[str, Any] | str | os.PathLike[str] | None


@dataclass(frozen=True)
class Oversight:
    """How a graph's MCP calls are judged: given once, to :func:`~langgraph_mcp.add_mcp_tools` or to each of
    ``create_approval_gate``, ``route_through_gate``, ``McpToolNode`` and ``McpApprovalMiddleware``.

    * ``policy``: an :class:`ApprovalPolicy` or what :meth:`ApprovalPolicy.load` takes (``None``: the default:
      ask about destructive tools and every tool of an untrusted server, allow the rest).
    * ``approval_key``: the secret decisions are signed with (``None``: the servers' config, else
      ``LANGGRAPH_MCP_APPROVAL_KEY``, else this machine's key). Several workers need one shared key.
    * ``store``: where the tool node keeps its consumed markers (a decision runs its call at most once, see
      :mod:`langgraph_mcp.approval.once`) when the graph is compiled without one; the graph's own store wins.
      Remembered decisions and the audit sink use the graph's store (``compile(store=...)``).
    * ``agent_chat_ui``: Agent Chat UI mode (cards and ``{"decisions": [...]}`` answers) on every path.
    * ``trust_client_principal``: ``False`` refuses a principal a client asserted (``configurable.user_id``)
      wherever a principal matters (principal-scope memory, principal rules); authenticated principals (an
      operator's ``principal_for``, LangGraph custom auth) are unaffected.
    """

    policy: PolicyInput = None
    approval_key: str | None = field(default=None, repr=False)
    store: BaseStore | None = None
    agent_chat_ui: bool = False
    trust_client_principal: bool = True

    def loaded_policy(self) -> ApprovalPolicy:
        """The policy, loaded (the default policy when none was given)."""
        policy = ApprovalPolicy.load(self.policy) if self.policy is not None else ApprovalPolicy()
        if not self.trust_client_principal and policy.trust_client_principal:
            policy = policy.model_copy(update={"trust_client_principal": False})
        return policy


def resolve(
    oversight: Oversight | None, policy: PolicyInput, agent_chat_ui: bool
) -> tuple[ApprovalPolicy | None, QuestionShapes, Oversight | None]:
    """A constructor's ``(policy, question shapes, oversight)`` from what it was given: an ``Oversight``, or the
    separate arguments (not both). Agent Chat UI mode is chosen here, once: the shapes every question of the
    constructed part is asked in (:class:`~langgraph_mcp.questions.agent_chat_ui.QuestionShapes`)."""
    if oversight is None:
        return (ApprovalPolicy.load(policy) if policy is not None else None), shapes_for(agent_chat_ui), None
    if not isinstance(oversight, Oversight):
        raise ConfigError(f"oversight must be an Oversight, got {type(oversight).__name__}")
    if policy is not None:
        raise ConfigError("give the policy in the Oversight or as policy=, not both")
    loaded = (
        oversight.loaded_policy()
        if oversight.policy is not None or not oversight.trust_client_principal
        else None
    )
    return loaded, shapes_for(oversight.agent_chat_ui or agent_chat_ui), oversight


_policies: weakref.WeakKeyDictionary[Any, list[ApprovalPolicy]] = weakref.WeakKeyDictionary()


def register_policy(servers: Any, policy: ApprovalPolicy) -> None:
    """Note that a gate, router or middleware over ``servers`` judges with ``policy`` (see :func:`policies_for`)."""
    known = _policies.setdefault(servers, [])
    if not any(p is policy for p in known):
        known.append(policy)


def policies_for(servers: Any) -> list[ApprovalPolicy]:
    """What a tool node given no policy judges with: every policy registered for ``servers`` and the default
    policy (it takes the strictest verdict of them; the first, a gate's, names the rule among equals)."""
    return [*_policies.get(servers, []), ApprovalPolicy()]


class Signer:
    """The approval key decisions about one ``McpServers``' calls are signed and verified with (see
    :mod:`langgraph_mcp.policy.binding`), and what a decision about each of its servers binds to under that key."""

    def __init__(self, config: McpServersConfig) -> None:
        secret = config.approval_key
        self.key = ApprovalKey(secret.get_secret_value() if secret is not None else None)
        """The servers' config's key, else ``LANGGRAPH_MCP_APPROVAL_KEY``, else this machine's (see
        :class:`~langgraph_mcp.policy.binding.ApprovalKey`); an ``Oversight``'s replaces it (:func:`apply_key`)."""
        self._specs = config.servers
        self._identities: dict[str, str] = {}

    def use(self, key: ApprovalKey) -> None:
        """Sign and verify with ``key`` from now on; the servers' identities are keyed by it."""
        self.key = key
        self._identities.clear()

    def server_identity(self, server: str) -> str:
        """``server``'s name and where it is reached (:func:`~langgraph_mcp.policy.binding.server_identity`): what a
        decision about one of its calls is bound to."""
        identity = self._identities.get(server)
        if identity is None:
            spec = self._specs.get(server)
            if spec is None:
                raise ConfigError(f"no MCP server named {server!r}; configured: {', '.join(self._specs)}")
            identity = self._identities[server] = server_identity(server, spec, self.key)
        return identity


_signers: weakref.WeakKeyDictionary[McpServers, Signer] = weakref.WeakKeyDictionary()


def signer_for(servers: McpServers) -> Signer:
    """The one :class:`Signer` of ``servers``: the gate, the tool node and the middleware over them sign and verify
    with it (made with the servers' config's key on first use)."""
    signer = _signers.get(servers)
    if signer is None:
        signer = _signers[servers] = Signer(servers.config)
    return signer


def apply_key(servers: McpServers, oversight: Oversight | None) -> Signer:
    """The signer of ``servers``, signing with the key an ``Oversight`` names, if it names one. A key set in the
    servers' config that differs is a configuration error, not a silent choice."""
    signer = signer_for(servers)
    if oversight is None or oversight.approval_key is None:
        return signer
    key = ApprovalKey(oversight.approval_key)
    if signer.key.key_id == key.key_id:
        return signer
    if signer.key.source == "config":
        raise ConfigError(
            "the Oversight's approval_key differs from the one in the servers' config: give one of them"
        )
    signer.use(key)
    return signer
