"""Verdicts: what the approval policy answers for one tool call (allow, ask or deny), and why.

A :class:`Verdict` names the rule that gave it; :class:`Explanation` is a verdict with every rule that matched it
(:meth:`~langgraph_mcp.policy.policy.ApprovalPolicy.explain`). ``allow`` < ``ask`` < ``deny``: :func:`stricter`
is how a locked floor combines with the ordinary verdict (the precedence table is in
:mod:`langgraph_mcp.policy.policy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError
from langgraph_mcp.payloads import ALL_DECISIONS, DecisionType
from langgraph_mcp.policy.rules import MemoryScope, VerdictKind, check_decisions, strictness

__all__ = [
    "Explanation",
    "Predicate",
    "PredicateResult",
    "PrincipalFn",
    "RuleMatch",
    "Verdict",
    "VerdictKind",
    "stricter",
]

_VERDICT_KINDS: tuple[VerdictKind, ...] = ("allow", "ask", "deny")


@dataclass(frozen=True)
class Verdict:
    """The policy's answer for one tool call.

    ``allowed_decisions`` only matters for ``ask``: the decisions the human may send back (see
    :data:`langgraph_mcp.payloads.DecisionType`). ``reason`` is shown to humans (for ``ask``: in the approval
    interrupt; for ``deny``: in the error message the model gets).
    """

    kind: VerdictKind
    reason: str
    allowed_decisions: tuple[DecisionType, ...] = ALL_DECISIONS
    rule: str = field(default="", compare=False)
    """The id of the rule that decided: a ``[[rules]]`` id, ``tools:<pattern>``, ``when:<pattern>:<function>``,
    ``hints:read-only`` / ``hints:destructive`` / ``hints:open-world`` / ``hints:ask-writes`` / ``hints:write``,
    ``untrusted-server``, ``non-mcp``, ``unresolved`` or ``collision``. Provenance only: not part of equality."""
    locked: bool = False
    """Given by a locked rule: no remembered decision answers it."""
    expires_after: float | None = None
    """For ``ask``: an approval given more than this many seconds after the question counts as a rejection."""
    remember: MemoryScope = "any_args"
    """For ``ask``: what a decision given with ``"remember"`` covers."""

    def __post_init__(self) -> None:
        if self.kind not in _VERDICT_KINDS:
            raise ConfigError(f"Verdict kind must be one of {list(_VERDICT_KINDS)}, got {self.kind!r}")
        # Accept any sequence (e.g. a list), store a deduplicated tuple.
        object.__setattr__(
            self, "allowed_decisions", check_decisions(self.allowed_decisions, "allowed_decisions")
        )

    @classmethod
    def allow(cls, reason: str = "", *, rule: str = "") -> Verdict:
        """Run the call without asking."""
        return cls("allow", reason, rule=rule)

    @classmethod
    def ask(
        cls,
        reason: str,
        allowed_decisions: tuple[DecisionType, ...] | list[DecisionType] = ALL_DECISIONS,
        *,
        rule: str = "",
    ) -> Verdict:
        """Ask a human first; they may answer with any of ``allowed_decisions``."""
        return cls("ask", reason, tuple(allowed_decisions), rule=rule)

    @classmethod
    def deny(cls, reason: str, *, rule: str = "") -> Verdict:
        """Refuse the call without asking anyone."""
        return cls("deny", reason, rule=rule)

    @property
    def allowed(self) -> bool:
        """True for ``allow``."""
        return self.kind == "allow"

    @property
    def needs_approval(self) -> bool:
        """True for ``ask``."""
        return self.kind == "ask"

    @property
    def denied(self) -> bool:
        """True for ``deny``."""
        return self.kind == "deny"


@dataclass(frozen=True)
class RuleMatch:
    """One rule that matched a call, as :meth:`ApprovalPolicy.explain` reports it."""

    tier: Literal["locked", "code", "rules", "tools", "built-in", "unresolved"]
    verdict: Verdict
    """What the rule alone would give (``verdict.rule`` is its id)."""
    decided: bool = False
    """True for the one rule whose verdict is the final one."""


@dataclass(frozen=True)
class Explanation:
    """The verdict for a call and every rule that matched it, in precedence order (the winner included)."""

    verdict: Verdict
    matches: tuple[RuleMatch, ...]

    @property
    def lost(self) -> tuple[RuleMatch, ...]:
        """The rules that matched but did not decide."""
        return tuple(m for m in self.matches if not m.decided)


PredicateResult: TypeAlias = Verdict | VerdictKind | bool | None
"""A predicate's answer: a verdict (or its kind) decides, ``True`` asks, ``False``/``None`` = no opinion."""

Predicate: TypeAlias = Callable[[ToolCall, McpTool | None], PredicateResult]
"""``fn(call, tool)``: ``call`` is the model's tool call (``name``/``args``/``id``); ``tool`` is ``None``
for a tool that is not an MCP tool."""

PrincipalFn: TypeAlias = Callable[[RunnableConfig | None], "str | None"]
"""``fn(config)`` → who runs the graph (``None``: nobody known)."""


def stricter(first: Verdict | None, second: Verdict) -> Verdict:
    """``second`` if it is strictly stricter than ``first``, else ``first`` (a tie goes to the first)."""
    if first is None or strictness(second.kind) > strictness(first.kind):
        return second
    return first
