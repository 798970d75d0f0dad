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

    [[rules]]                     # see langgraph_mcp.humans.policy_rules for every key
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
"""

from __future__ import annotations

import json
import os
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias, overload

from langchain_core.messages import ToolCall
from langchain_core.runnables import RunnableConfig
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationError,
    field_serializer,
    field_validator,
    model_serializer,
)

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.credentials import current_principal
from langgraph_mcp.errors import ConfigError, PolicyError
from langgraph_mcp.humans.policy_rules import (
    CompiledRule,
    MemoryScope,
    Rule,
    RuleTest,
    VerdictKind,
    check_decisions,
    compile_rules,
    strictness,
)
from langgraph_mcp.payloads import ALL_DECISIONS, DecisionType

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

_VERDICT_KINDS: tuple[VerdictKind, ...] = ("allow", "ask", "deny")
_GLOB_CHARS = frozenset("*?[")
_CACHE_SIZE = 4_096


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


class ToolOverride(BaseModel):
    """A per-tool override object: ``{"verdict": "ask", "allowed_decisions": [...], "reason": "..."}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: VerdictKind
    allowed_decisions: list[DecisionType] | None = None
    """Decisions for any ``ask`` verdict about a matching tool (this override's, or a predicate's that
    returns a bare ``"ask"``/``True``); ``None`` means the policy's ``default_decisions``."""
    reason: str | None = None
    """The reason shown to humans; by default the override itself is named."""

    @field_validator("allowed_decisions")
    @classmethod
    def _decisions(cls, value: list[DecisionType] | None) -> list[DecisionType] | None:
        return None if value is None else list(check_decisions(value, "allowed_decisions"))


def _override_tag(value: object) -> str:
    return "obj" if not isinstance(value, str) else "str"


_OverrideValue: TypeAlias = Annotated[
    Annotated[VerdictKind, Tag("str")] | Annotated[ToolOverride, Tag("obj")],
    Discriminator(_override_tag),
]


def _is_glob(pattern: str) -> bool:
    return any(c in _GLOB_CHARS for c in pattern)


def _specificity(pattern: str) -> tuple[int, int]:
    """Sort key, most specific first: exact names, then globs by decreasing pattern length."""
    return (1, -len(pattern)) if _is_glob(pattern) else (0, 0)


def _matches(pattern: str, name: str) -> bool:
    return fnmatchcase(name, pattern) if _is_glob(pattern) else pattern == name


class _Compiled:
    """The compiled rules of one ``rules`` tuple and the per-tool cache of which of them can match."""

    __slots__ = ("by_name", "by_tool", "rules", "scanned", "source", "verdicts")

    def __init__(self, source: tuple[Rule, ...]) -> None:
        self.source = source
        self.rules = compile_rules(source)
        self.by_name: dict[str, list[CompiledRule]] = {}  # rules whose ``tool`` is an exact name
        self.scanned: list[CompiledRule] = []  # the others: a glob or no ``tool`` at all
        for compiled in self.rules:
            tool = compiled.rule.tool
            if tool is not None and not _is_glob(tool):
                self.by_name.setdefault(tool, []).append(compiled)
            else:
                self.scanned.append(compiled)
        self.by_tool: dict[tuple[str, int], tuple[McpTool | None, tuple[CompiledRule, ...]]] = {}
        self.verdicts: dict[tuple[int, tuple[DecisionType, ...]], Verdict] = {}

    def candidates(self, name: str, tool: McpTool | None) -> tuple[CompiledRule, ...]:
        """The rules whose tool-only conditions match (file order), cached per (name, tool object)."""
        key = (name, id(tool))
        hit = self.by_tool.get(key)
        if hit is not None and hit[0] is tool:
            return hit[1]
        named = [*self.by_name.get(name, ()), *self.scanned]
        found = tuple(r for r in sorted(named, key=lambda r: r.index) if r.static_match(name, tool) is True)
        if len(self.by_tool) >= _CACHE_SIZE:
            self.by_tool.clear()
        self.by_tool[key] = (tool, found)  # holding the tool keeps its id from being reused
        return found


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
    tools: dict[str, _OverrideValue] = Field(default_factory=dict)
    """Overrides by published name or glob: ``"allow" | "ask" | "deny"`` or a :class:`ToolOverride`."""
    default_decisions: list[DecisionType] = Field(default_factory=lambda: list(ALL_DECISIONS))
    """The decisions a human may answer an ``ask`` with, unless an override or predicate says otherwise."""
    rules: tuple[Rule, ...] = ()
    """The ``[[rules]]`` (see :class:`~langgraph_mcp.humans.policy_rules.Rule`)."""
    tests: tuple[RuleTest, ...] = ()
    """The ``[[tests]]`` :meth:`load` runs (see :class:`~langgraph_mcp.humans.policy_rules.RuleTest`)."""
    principal: PrincipalFn | None = Field(default=None, exclude=True)
    """Who runs the graph, from the run's config; ``None``: :func:`langgraph_mcp.credentials.current_principal`
    (``configurable.langgraph_auth_user_id``, else ``configurable.user_id``)."""
    clock: Callable[[], float] = Field(default=time.time, exclude=True)
    """Seconds since the epoch; what ``expires_after`` is measured with (tests inject their own)."""

    _predicates: list[tuple[str, Predicate]] = PrivateAttr(default_factory=list)
    _compiled: _Compiled | None = PrivateAttr(default=None)

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
        where = "approval policy"
        if isinstance(source, Mapping):
            data: object = dict(source)
        else:
            path = Path(source)
            where = f"approval policy {path}"
            data = _read(path, where)
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: must be a JSON object, got {type(data).__name__}")
        try:
            policy = cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{where}: {_format_errors(exc)}") from exc
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
        failures = []
        for i, test in enumerate(self.tests):
            label = f"tests[{i}]" + (f" ({test.name!r})" if test.name else "")
            try:
                tool = tool_for(test) if tool_for is not None else test.tool()
            except LookupError as exc:
                failures.append(f"{label}: {exc}")
                continue
            call: ToolCall = {"name": test.call, "args": test.args, "id": f"test-{i}", "type": "tool_call"}
            got = self.verdict(call, tool, principal=test.principal)
            if got.kind == test.expect and (test.rule is None or got.rule == test.rule):
                continue
            who = f" as principal {test.principal!r}" if test.principal is not None else ""
            args = json.dumps(test.args, ensure_ascii=False, default=str)
            wanted = test.expect + (f" by rule {test.rule!r}" if test.rule else "")
            failures.append(
                f"{label}: call {test.call!r} with args {args}{who}: expected {wanted}, but the policy decided "
                f"{got.kind} by rule {got.rule!r} ({got.reason})"
            )
        return failures

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
        return current_principal(config)

    def verdict(self, call: ToolCall, tool: McpTool | None, *, principal: str | None = None) -> Verdict:
        """The verdict for one tool call; ``tool`` is ``None`` when the call does not go to an MCP tool."""
        return self._decide(call, tool, principal, None)

    def explain(self, call: ToolCall, tool: McpTool | None, *, principal: str | None = None) -> Explanation:
        """:meth:`verdict`, with every rule that matched, in precedence order (predicates are all called)."""
        matches: list[RuleMatch] = []
        verdict = self._decide(call, tool, principal, matches)
        winner = next((i for i, m in enumerate(matches) if m.verdict is verdict), None)
        return Explanation(
            verdict, tuple(RuleMatch(m.tier, m.verdict, decided=i == winner) for i, m in enumerate(matches))
        )

    def unresolved_verdict(self, call: ToolCall, problem: str, *, principal: str | None = None) -> Verdict:
        """The verdict for a call whose owner could not be established; ``problem`` says why.

        Locked rules still set the floor (a condition on the server or its hints counts as matched, since the
        server is not known); otherwise ``unresolved`` decides (``ask`` by default). Nothing allows it.
        """
        name = call["name"]
        args = call.get("args") or {}
        floor = self._override_deny(name)
        for compiled in self._rules().rules:
            if not compiled.rule.locked:
                continue
            static = compiled.static_match(name, None, owner_known=False)
            if static is False:
                continue
            match = compiled.call_match(args, principal)
            if compiled.decides(False if match is False else None if static is None else match):
                floor = _stricter(floor, self._rule_verdict(compiled.rule, compiled.index))
        reason = f"could not establish which MCP server {name!r} belongs to: {problem}"
        ordinary = (
            Verdict.deny(reason, rule="unresolved")
            if self.unresolved == "deny"
            else Verdict.ask(reason, tuple(self.default_decisions), rule="unresolved")
        )
        return ordinary if floor is None else _stricter(floor, ordinary)

    # ------------------------------------------------------------------------------------------ evaluation

    def _rules(self) -> _Compiled:
        compiled = self._compiled
        if compiled is None or compiled.source is not self.rules:
            compiled = self._compiled = _Compiled(self.rules)
        return compiled

    def _rule_verdict(self, rule: Rule, index: int = -1) -> Verdict:
        decisions = tuple(rule.allowed_decisions or self.default_decisions)
        cache = self._rules().verdicts
        hit = cache.get((index, decisions)) if index >= 0 else None
        if hit is not None:
            return hit
        reason = rule.reason or f"policy rule {rule.id!r}: {rule.verdict}"
        if rule.verdict != "ask":
            verdict = Verdict(rule.verdict, reason, rule=rule.id, locked=rule.locked)
        else:
            verdict = Verdict(
                "ask",
                reason,
                decisions,
                rule=rule.id,
                locked=rule.locked,
                expires_after=rule.expires_after,
                remember=rule.remember,
            )
        if index >= 0:
            cache[(index, decisions)] = verdict
        return verdict

    def _override_deny(self, name: str) -> Verdict | None:
        matched = self._override_for(name)
        if matched is None or matched[1].verdict != "deny":
            return None
        pattern, override = matched
        return Verdict(
            "deny",
            override.reason or f"policy override {pattern!r}: deny",
            rule=f"tools:{pattern}",
            locked=True,
        )

    def _decide(
        self, call: ToolCall, tool: McpTool | None, principal: str | None, trace: list[RuleMatch] | None
    ) -> Verdict:
        name = call["name"]
        args = call.get("args") or {}
        candidates = self._rules().candidates(name, tool)

        # 1. the locked floor
        floor: Verdict | None = None
        for compiled in candidates:
            if compiled.rule.locked and compiled.decides(compiled.call_match(args, principal)):
                verdict = self._rule_verdict(compiled.rule, compiled.index)
                floor = _stricter(floor, verdict)
                if trace is not None:
                    trace.append(RuleMatch("locked", verdict))
        override_deny = self._override_deny(name)
        if override_deny is not None:
            floor = _stricter(floor, override_deny)
            if trace is not None:
                trace.append(RuleMatch("locked", override_deny))
        if floor is not None and floor.denied and trace is None:
            return floor  # nothing is stricter

        matched = self._override_for(name)
        override_decisions = tuple(self.default_decisions)
        if matched is not None and matched[1].allowed_decisions is not None:
            override_decisions = tuple(matched[1].allowed_decisions)
        ordinary: Verdict | None = None

        # 2. code
        for pattern, fn in sorted(
            (p for p in self._predicates if _matches(p[0], name)), key=lambda p: _specificity(p[0])
        ):  # sorted() is stable: registration order among equally specific patterns
            decided = _predicate_verdict(fn(call, tool), pattern, fn, override_decisions)
            if decided is not None:
                ordinary = ordinary or decided
                if trace is None:
                    break
                trace.append(RuleMatch("code", decided))

        # 3. rules
        if ordinary is None or trace is not None:
            for compiled in candidates:
                if not compiled.rule.locked and compiled.decides(compiled.call_match(args, principal)):
                    verdict = self._rule_verdict(compiled.rule, compiled.index)
                    ordinary = ordinary or verdict
                    if trace is None:
                        break
                    trace.append(RuleMatch("rules", verdict))

        # 4. tools (allow / ask)
        if matched is not None and matched[1].verdict != "deny" and (ordinary is None or trace is not None):
            pattern, override = matched
            reason = override.reason or f"policy override {pattern!r}: {override.verdict}"
            rule = f"tools:{pattern}"
            verdict = (
                Verdict.ask(reason, override_decisions, rule=rule)
                if override.verdict == "ask"
                else Verdict.allow(reason, rule=rule)
            )
            ordinary = ordinary or verdict
            if trace is not None:
                trace.append(RuleMatch("tools", verdict))

        # 5. built-in
        if ordinary is None or trace is not None:
            verdict = self._builtin_verdict(name, tool)
            ordinary = ordinary or verdict
            if trace is not None:
                trace.append(RuleMatch("built-in", verdict))

        assert ordinary is not None
        return ordinary if floor is None else _stricter(floor, ordinary)

    def _builtin_verdict(self, name: str, tool: McpTool | None) -> Verdict:
        defaults = tuple(self.default_decisions)
        if tool is not None and not tool.trusted:
            return Verdict.ask(
                f"server {tool.server!r} is not trusted: its annotations are ignored",
                defaults,
                rule="untrusted-server",
            )
        if tool is None:
            reason = f"{name!r} is not an MCP tool (non_mcp={self.non_mcp!r})"
            if self.non_mcp == "ask":
                return Verdict.ask(reason, defaults, rule="non-mcp")
            return Verdict(self.non_mcp, reason, rule="non-mcp")
        return self._hint_verdict(tool, defaults)

    def _override_for(self, name: str) -> tuple[str, ToolOverride] | None:
        """``(pattern, override)`` of the most specific override matching ``name``, or ``None``."""
        if name in self.tools:
            return name, _as_override(self.tools[name])
        best: str | None = None
        for pattern in self.tools:  # insertion order: the first of equally long globs wins
            if (
                _is_glob(pattern)
                and fnmatchcase(name, pattern)
                and (best is None or len(pattern) > len(best))
            ):
                best = pattern
        return (best, _as_override(self.tools[best])) if best is not None else None

    def _hint_verdict(self, tool: McpTool, decisions: tuple[DecisionType, ...]) -> Verdict:
        def source(key: str) -> str:
            return f"{key} ({tool.hint_source(key)})"

        open_world_ask = self.ask_open_world and tool.open_world
        if tool.read_only:
            if open_world_ask:
                return Verdict.ask(source("openWorldHint"), decisions, rule="hints:open-world")
            return Verdict.allow(source("readOnlyHint"), rule="hints:read-only")
        if tool.destructive:
            return Verdict.ask(source("destructiveHint"), decisions, rule="hints:destructive")
        if open_world_ask:
            return Verdict.ask(source("openWorldHint"), decisions, rule="hints:open-world")
        if self.ask_writes:
            return Verdict.ask(
                f"writes (ask_writes): not read-only, {source('readOnlyHint')}",
                decisions,
                rule="hints:ask-writes",
            )
        return Verdict.allow(f"non-destructive write: {source('destructiveHint')}", rule="hints:write")


def _stricter(first: Verdict | None, second: Verdict) -> Verdict:
    """``second`` if it is strictly stricter than ``first``, else ``first`` (a tie goes to the first)."""
    if first is None or strictness(second.kind) > strictness(first.kind):
        return second
    return first


def _as_override(value: VerdictKind | ToolOverride) -> ToolOverride:
    return value if isinstance(value, ToolOverride) else ToolOverride(verdict=value)


def _predicate_verdict(
    result: object, pattern: str, fn: Predicate, decisions: tuple[DecisionType, ...]
) -> Verdict | None:
    """Turn what a predicate returned into a verdict, or ``None`` for no opinion."""
    fn_name = getattr(fn, "__name__", type(fn).__name__)
    label = f"rule {fn_name} for {pattern!r}"
    rule = f"when:{pattern}:{fn_name}"
    if result is None or result is False:
        return None
    if result is True:
        return Verdict.ask(label, decisions, rule=rule)
    if isinstance(result, Verdict):
        return Verdict(
            result.kind,
            result.reason or label,
            result.allowed_decisions,
            rule=result.rule or rule,
            expires_after=result.expires_after,
            remember=result.remember,
        )
    if result == "ask":
        return Verdict.ask(label, decisions, rule=rule)
    if result == "allow":
        return Verdict.allow(label, rule=rule)
    if result == "deny":
        return Verdict.deny(label, rule=rule)
    raise PolicyError(
        f"approval predicate {label} returned {result!r}; expected 'allow', 'ask', 'deny', a Verdict, "
        "True (ask), or False/None (no opinion)"
    )


def _read(path: Path, where: str) -> object:
    """The parsed file: TOML for ``.toml``, JSON otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the file: {exc.strerror or exc}") from exc
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: invalid TOML: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc


def _format_errors(exc: ValidationError) -> str:
    """``field.path: message`` for every error, joined with ``; `` (union tags dropped from the path)."""
    parts = []
    for error in exc.errors():
        loc = list(error["loc"])
        # the tag of a tagged union sits right after a dict key: tools.<pattern>.<tag>, rules.N.args.<ptr>.<tag>
        for at in (2, 4):
            if len(loc) > at and loc[at] in ("str", "obj"):
                del loc[at]
                break
        field_path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        parts.append(f"{field_path or '(top level)'}: {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)
