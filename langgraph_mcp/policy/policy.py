"""``ApprovalPolicy``: the verdict (allow, ask or deny) for each tool call before it runs, and the rule that gave it.

A policy is a file an operator writes (TOML or JSON, :meth:`ApprovalPolicy.load`) plus, optionally, code
(:meth:`ApprovalPolicy.when` predicates). Every verdict names the rule that decided it (``Verdict.rule``) and why
(``Verdict.reason``); :meth:`ApprovalPolicy.explain` also lists the rules that matched but lost. The file::

    ask_writes = false            # the built-in hint rules: ask about non-destructive writes too
    ask_open_world = false        # ... and about every open-world tool
    non_mcp = "allow"             # calls that go to no MCP server
    unresolved = "ask"            # calls whose server could not be established (never allow)
    default_decisions = ["approve", "edit", "reject", "respond"]

    [tools]                       # per-tool overrides by published name or glob (the most specific one counts)
    "fs_*" = "ask"
    fs_move_file = "deny"

    [[rules]]                     # see langgraph_mcp.policy.rules for every key
    id = "scratch-deletes"
    tool = "demo_delete_file"
    args = { "/path" = { regex = '^scratch/[^/]+$' } }
    verdict = "allow"
    reason = "scratch files are disposable"

    [[tests]]                     # run at load: a failing one raises PolicyError
    call = "demo_delete_file"
    args = { path = "todo.txt" }
    expect = "ask"

**Precedence** (the same wherever a verdict is made: the gate, ``route_through_gate``, the tool node, the CLI,
LangChain tools):

====  ==========  ====================================================================================
tier  name        what decides
====  ==========  ====================================================================================
1     locked      ``[[rules]]`` with ``locked = true`` and a ``tools`` entry ``deny`` (when it is the most
                  specific one): a *floor*. The final verdict is never looser than the strictest matching
                  locked rule; on a tie the locked rule decides (so memory never answers it).
2     code        ``policy.when(pattern, fn)`` predicates, most specific pattern first; the first with an
                  opinion decides.
3     rules       the other ``[[rules]]``, in file order; the first that matches decides.
4     tools       the most specific ``tools`` entry (``allow`` or ``ask``).
5     built-in    a server with ``trust_annotations=False``: ask; a call to no MCP server: ``non_mcp``; else
                  the hint rules (read-only: allow; destructive: ask; other writes: allow, or ask with
                  ``ask_writes``; ``ask_open_world``: ask about open-world tools).
====  ==========  ====================================================================================

Tiers 2-5 give one verdict; the final one is the stricter of it and the locked floor (``allow`` < ``ask`` <
``deny``). Around the policy, the gate adds: a name two servers publish is denied and a call whose server is not
established gets :meth:`ApprovalPolicy.unresolved_verdict` (before tier 1); a remembered decision answers an ``ask``
that no locked rule gave; an approval later than the verdict's ``expires_after`` counts as a rejection.

Where the parts live: the verdicts in :mod:`langgraph_mcp.policy.verdicts`, one function per tier in
:mod:`langgraph_mcp.policy.precedence`, reading a file and running its ``[[tests]]`` in
:mod:`langgraph_mcp.policy.file`; this module holds the policy model that ties them together.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, cast, overload

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_serializer,
    field_validator,
    model_serializer,
)

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.credentials import current_principal, principal_origin
from langgraph_mcp.errors import ConfigError, PolicyError
from langgraph_mcp.payloads import ALL_DECISIONS, DecisionType
from langgraph_mcp.policy.file import format_errors, read_source, self_test_failures
from langgraph_mcp.policy.precedence import (
    CompiledRules,
    OverrideValue,
    ToolOverride,
    decide,
    unresolved_verdict,
)
from langgraph_mcp.policy.rules import Rule, RuleTest, VerdictKind, check_decisions, compile_rules
from langgraph_mcp.policy.verdicts import (
    Explanation,
    Predicate,
    PredicateResult,
    PrincipalFn,
    RuleMatch,
    Verdict,
)

__all__ = [
    "ApprovalPolicy",
    "Explanation",
    "Predicate",
    "PredicateResult",
    "RuleMatch",
    "ToolOverride",
    "Verdict",
    "VerdictKind",
]


class ApprovalPolicy(BaseModel):
    """Gives each tool call a :class:`Verdict`: ``allow``, ``ask`` (a human decides) or ``deny``.

    Call :meth:`verdict` with the model's tool call and the :class:`~langgraph_mcp.catalog.McpTool` it goes to
    (``None`` for a tool that is not an MCP tool), and the principal when rules match on it. The precedence of
    its parts is the table in this module's docstring.

    **Overrides** (``tools``) are keyed by the *published* name (what the model calls) or an ``fnmatch``
    glob (``*``, ``?``, ``[...]``; case-sensitive). For a call, only the most specific matching key counts:
    an exact name beats any glob; among globs the longest pattern wins; between globs of the same length,
    the one listed first wins. So with ``{"fs_*": "ask", "git_status": "allow", "fs_move_file": "deny"}``,
    ``fs_move_file`` is denied, ``fs_read_file`` asks and ``git_status`` runs. An explicit ``allow`` (override
    or rule) also wins over the untrusted-server rule: the operator named the tool and vouches for it.

    ``ask`` verdicts offer ``default_decisions`` (all four by default), or the matching rule's or override's
    ``allowed_decisions``, or what a predicate's :class:`Verdict` says.

    Load one from a file with :meth:`load` (which also runs its ``[[tests]]``); ``model_dump_json()`` writes the
    JSON shape back. Predicates, ``principal`` and ``clock`` are code: never serialized.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    ask_writes: bool = False
    """Ask about non-destructive writes too (tools that are neither read-only nor destructive)."""
    ask_open_world: bool = False
    """Ask about every tool whose effective ``openWorldHint`` is true (the spec default)."""
    non_mcp: VerdictKind = "allow"
    """The verdict for tool calls that provably go to no MCP server (``tool is None``)."""
    unresolved: Literal["ask", "deny"] = "ask"
    """The verdict for a call whose server could not be established (a server that may publish the name
    failed to list, its listing was cut short, or the lookup failed): never ``allow``, and never ``non_mcp``."""
    tools: dict[str, OverrideValue] = Field(default_factory=dict)
    """Overrides by published name or glob: ``"allow" | "ask" | "deny"`` or a :class:`ToolOverride`."""
    default_decisions: list[DecisionType] = Field(default_factory=lambda: list(ALL_DECISIONS))
    """The decisions a human may answer an ``ask`` with, unless an override or predicate says otherwise."""
    rules: tuple[Rule, ...] = ()
    """The ``[[rules]]`` (see :class:`~langgraph_mcp.policy.rules.Rule`)."""
    tests: tuple[RuleTest, ...] = ()
    """The ``[[tests]]`` :meth:`load` runs (see :class:`~langgraph_mcp.policy.rules.RuleTest`)."""
    principal: PrincipalFn | None = Field(default=None, exclude=True)
    """Who runs the graph, from the run's config; ``None``: :func:`langgraph_mcp.credentials.current_principal`
    (``configurable.langgraph_auth_user_id``, else ``configurable.user_id``)."""
    trust_client_principal: bool = Field(default=True, exclude=True)
    """``False``: a principal a client asserted (``configurable.user_id``, see
    :func:`~langgraph_mcp.credentials.principal_origin`) counts as no principal; an operator's ``principal`` and
    LangGraph Server's authenticated user are unaffected."""
    clock: Callable[[], float] = Field(default=time.time, exclude=True)
    """Seconds since the epoch; what ``expires_after`` is measured with and rule conditions that read ``now`` see
    (tests inject their own)."""

    _predicates: list[tuple[str, Predicate]] = PrivateAttr(default_factory=list)
    _compiled: CompiledRules | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ApprovalPolicy):
            return NotImplemented
        return self.__dict__ == other.__dict__ and self._predicates == other._predicates

    __hash__ = None  # type: ignore[assignment]  # mutable, as every BaseModel

    # ------------------------------------------------------------------------------------------ validation

    @field_validator("tools")
    @classmethod
    def _tool_keys(
        cls, value: dict[str, VerdictKind | ToolOverride]
    ) -> dict[str, VerdictKind | ToolOverride]:
        for pattern in value:
            if not pattern or pattern != pattern.strip():
                raise ConfigError(
                    f"tool pattern {pattern!r} must be a non-empty name or glob without spaces around it"
                )
        return value

    @field_validator("default_decisions")
    @classmethod
    def _default_decisions(cls, value: list[DecisionType]) -> list[DecisionType]:
        return list(check_decisions(value, "default_decisions"))

    @field_validator("rules")
    @classmethod
    def _unique_rules(cls, value: tuple[Rule, ...]) -> tuple[Rule, ...]:
        compile_rules(value)  # duplicate ids, bad regexes: fail now, not at the first call
        return value

    @field_serializer("tools")
    def _dump_tools(self, value: dict[str, VerdictKind | ToolOverride]) -> dict[str, Any]:
        """Write an override with nothing but a verdict in its short form (``"ask"``)."""
        out: dict[str, Any] = {}
        for pattern, override in value.items():
            if isinstance(override, ToolOverride):
                dumped = override.model_dump(exclude_none=True)
                out[pattern] = override.verdict if dumped.keys() == {"verdict"} else dumped
            else:
                out[pattern] = override
        return out

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No ``rules``/``tests`` keys when there are none: a policy without them dumps as it always did."""
        dumped: dict[str, Any] = handler(self)
        for key in ("rules", "tests"):
            if not dumped.get(key):
                dumped.pop(key, None)
        return dumped

    @classmethod
    def load(
        cls,
        source: str | os.PathLike[str] | Mapping[str, Any] | ApprovalPolicy,
        *,
        run_tests: bool = True,
    ) -> ApprovalPolicy:
        """Build a policy from a file (``.toml``: TOML; any other extension: JSON) or a parsed mapping, and run
        its ``[[tests]]`` (unless ``run_tests=False``).

        Raises :class:`~langgraph_mcp.errors.ConfigError` naming the file (if any) and every bad field, e.g.
        ``approval policy policy.json: tools.fs_*.verdict: Input should be 'allow', 'ask' or 'deny'``, and
        :class:`~langgraph_mcp.errors.PolicyError` naming each failing test, what it expected and what the
        policy decided.
        """
        if isinstance(source, ApprovalPolicy):
            return source
        data, where = read_source(source)
        try:
            policy = cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{where}: {format_errors(exc)}") from exc
        if run_tests:
            policy.check(where=where)
        return policy

    # ------------------------------------------------------------------------------------------ self-tests

    def test_failures(self, tool_for: Callable[[RuleTest], McpTool | None] | None = None) -> list[str]:
        """Run the ``[[tests]]``; one message per failing test (empty: all pass).

        ``tool_for(test)`` gives the tool a test's call goes to (``policy check --config`` passes the servers'
        real listings); by default each test's own :meth:`RuleTest.tool`. Predicates registered with
        :meth:`when` take part like in any other verdict.
        """
        return self_test_failures(
            self.tests,
            lambda call, tool, principal, at: self.verdict(call, tool, principal=principal, at=at),
            tool_for,
        )

    def check(
        self,
        tool_for: Callable[[RuleTest], McpTool | None] | None = None,
        *,
        where: str = "approval policy",
    ) -> None:
        """Raise :class:`~langgraph_mcp.errors.PolicyError` listing every failing ``[[tests]]`` entry."""
        failures = self.test_failures(tool_for)
        if failures:
            count = f"{len(failures)} of {len(self.tests)} self-tests failed"
            raise PolicyError(f"{where}: {count}: " + "; ".join(failures))

    # ------------------------------------------------------------------------------------------ predicates

    @overload
    def when(self, pattern: str, fn: Predicate) -> ApprovalPolicy: ...

    @overload
    def when(self, pattern: str, fn: None = None) -> Callable[[Predicate], Predicate]: ...

    def when(
        self, pattern: str, fn: Predicate | None = None
    ) -> ApprovalPolicy | Callable[[Predicate], Predicate]:
        """Register ``fn(call, tool)`` for tools whose published name matches ``pattern`` (name or glob).

        ``fn`` returns ``"allow"``/``"ask"``/``"deny"`` or a :class:`Verdict` to decide, ``True`` to ask, and
        ``False``/``None`` to leave the decision to the other rules (tier 2 of the precedence: a locked rule
        still sets the floor). Exceptions it raises propagate out of :meth:`verdict` (so the call does not run).

        ``policy.when("fs_delete_file", outside_scratch)`` returns the policy (chainable);
        ``@policy.when("fs_delete_file")`` decorates a function and returns it unchanged.
        """
        if not pattern:
            raise ConfigError("when(): pattern must be a non-empty tool name or glob")
        if fn is not None:
            # Replace, never mutate: a model_copy() shares the list with its original.
            self._predicates = [*self._predicates, (pattern, fn)]
            return self

        def register(func: Predicate) -> Predicate:
            self._predicates = [*self._predicates, (pattern, func)]
            return func

        return register

    # ------------------------------------------------------------------------------------------ verdicts

    def principal_for(self, config: RunnableConfig | None) -> str | None:
        """Who runs the graph for ``config``: the ``principal`` callable's answer, else
        :func:`~langgraph_mcp.credentials.current_principal`."""
        if self.principal is not None:
            return self.principal(config)
        if not self.trust_client_principal and principal_origin(config) == "client":
            return None
        return current_principal(config)

    def principal_origin_for(
        self, config: RunnableConfig | None
    ) -> Literal["authenticated", "client"] | None:
        """Where :meth:`principal_for`'s answer comes from (``None``: there is none)."""
        if self.principal is not None:
            return "authenticated" if self.principal(config) is not None else None
        if self.principal_for(config) is None:
            return None
        return principal_origin(config)

    def verdict(
        self, call: ToolCall, tool: McpTool | None, *, principal: str | None = None, at: float | None = None
    ) -> Verdict:
        """The verdict for one tool call; ``tool`` is ``None`` when the call does not go to an MCP tool; ``at``
        (seconds since the epoch): the time conditions that read the clock see (default: :attr:`clock`)."""
        return self._decide(call, tool, principal, None, at)

    def explain(
        self, call: ToolCall, tool: McpTool | None, *, principal: str | None = None, at: float | None = None
    ) -> Explanation:
        """:meth:`verdict`, with every rule that matched, in precedence order (predicates are all called)."""
        matches: list[RuleMatch] = []
        verdict = self._decide(call, tool, principal, matches, at)
        winner = next((i for i, m in enumerate(matches) if m.verdict is verdict), None)
        return Explanation(
            verdict, tuple(RuleMatch(m.tier, m.verdict, decided=i == winner) for i, m in enumerate(matches))
        )

    def unresolved_verdict(self, call: ToolCall, problem: str, *, principal: str | None = None) -> Verdict:
        """The verdict for a call whose owner could not be established; ``problem`` says why.

        Locked rules still set the floor (a condition on the server or its hints counts as matched, since the
        server is not known); otherwise ``unresolved`` decides (``ask`` by default). Nothing allows it.
        """
        return unresolved_verdict(self, self._rules(), call, problem, principal)

    # ------------------------------------------------------------------------------------------ evaluation

    def _rules(self) -> CompiledRules:
        return self._parts()[0]

    def _parts(self) -> tuple[CompiledRules, list[tuple[str, Predicate]]]:
        """The compiled rules and the predicates, read in one go: ``self._compiled`` goes through pydantic's
        ``__getattr__`` (microseconds each, on every verdict)."""
        private = cast(dict[str, Any], self.__pydantic_private__)
        compiled: CompiledRules | None = private.get("_compiled")
        if compiled is None or compiled.source is not self.rules:
            compiled = private["_compiled"] = CompiledRules(self.rules)
        return compiled, private["_predicates"]

    def _decide(
        self,
        call: ToolCall,
        tool: McpTool | None,
        principal: str | None,
        trace: list[RuleMatch] | None,
        at: float | None = None,
    ) -> Verdict:
        clock = None if at is None else lambda: at
        return decide(self, *self._parts(), call, tool, principal, trace, clock)
