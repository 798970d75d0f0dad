"""The precedence tiers of an approval policy, one function each, and the compiled lookups they read.

The table itself (locked → code → rules → tools → built-in, and how the locked floor combines with the rest) is
in :mod:`langgraph_mcp.policy.policy`; :func:`decide` walks it for one call. Each tier returns its first verdict
(``None``: no opinion); given a ``trace``, it appends every rule of its own that matched (predicates are all
called) and :func:`decide` goes on through the later tiers, which is what ``explain`` shows.

A ``[tools]`` entry (:class:`ToolOverride`) lives here because the tiers read it: its ``deny`` is part of the
locked floor (tier 1), its ``allow``/``ask`` is tier 4, and its ``allowed_decisions`` apply to tier 2's bare asks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Annotated, Literal, Protocol, TypeAlias

from langchain_core.messages import ToolCall
from pydantic import BaseModel, ConfigDict, Discriminator, Tag, field_validator

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import PolicyError
from langgraph_mcp.payloads import DecisionType
from langgraph_mcp.policy.conditions import CallInputs
from langgraph_mcp.policy.rules import CompiledRule, Rule, VerdictKind, check_decisions, compile_rules
from langgraph_mcp.policy.verdicts import Predicate, RuleMatch, Verdict, stricter

__all__ = [
    "CompiledRules",
    "OverrideValue",
    "PolicySettings",
    "ToolOverride",
    "decide",
    "unresolved_verdict",
]

_GLOB_CHARS = frozenset("*?[")
_CACHE_SIZE = 4_096

_Trace: TypeAlias = "list[RuleMatch] | None"


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


OverrideValue: TypeAlias = Annotated[
    Annotated[VerdictKind, Tag("str")] | Annotated[ToolOverride, Tag("obj")],
    Discriminator(_override_tag),
]
"""A ``[tools]`` value: a bare verdict kind (``"ask"``) or a :class:`ToolOverride`."""


class PolicySettings(Protocol):
    """The plain settings of a policy the tiers read (``ApprovalPolicy`` has them all)."""

    @property
    def ask_writes(self) -> bool: ...
    @property
    def ask_open_world(self) -> bool: ...
    @property
    def non_mcp(self) -> VerdictKind: ...
    @property
    def unresolved(self) -> Literal["ask", "deny"]: ...
    @property
    def tools(self) -> Mapping[str, VerdictKind | ToolOverride]: ...
    @property
    def default_decisions(self) -> Sequence[DecisionType]: ...
    @property
    def clock(self) -> Callable[[], float]: ...


def _is_glob(pattern: str) -> bool:
    return any(c in _GLOB_CHARS for c in pattern)


def _specificity(pattern: str) -> tuple[int, int]:
    """Sort key, most specific first: exact names, then globs by decreasing pattern length."""
    return (1, -len(pattern)) if _is_glob(pattern) else (0, 0)


def _matches(pattern: str, name: str) -> bool:
    return fnmatchcase(name, pattern) if _is_glob(pattern) else pattern == name


class CompiledRules:
    """The compiled rules of one ``rules`` tuple, the per-tool cache of which of them can match, and the cache of
    the verdicts they give."""

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

    def verdict(self, compiled: CompiledRule, default_decisions: Sequence[DecisionType]) -> Verdict:
        """The verdict ``compiled`` gives when it matches (an ``ask`` offers the rule's decisions, else the
        policy's ``default_decisions``)."""
        rule = compiled.rule
        decisions = tuple(rule.allowed_decisions or default_decisions)
        hit = self.verdicts.get((compiled.index, decisions))
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
        self.verdicts[(compiled.index, decisions)] = verdict
        return verdict


# ------------------------------------------------------------------------------------------------ [tools]


def _as_override(value: VerdictKind | ToolOverride) -> ToolOverride:
    return value if isinstance(value, ToolOverride) else ToolOverride(verdict=value)


def override_for(
    tools: Mapping[str, VerdictKind | ToolOverride], name: str
) -> tuple[str, ToolOverride] | None:
    """``(pattern, override)`` of the most specific override matching ``name``, or ``None``."""
    pattern = _override_pattern(tools, name)
    return (pattern, _as_override(tools[pattern])) if pattern is not None else None


def _override_pattern(tools: Mapping[str, VerdictKind | ToolOverride], name: str) -> str | None:
    """The key of the most specific override matching ``name``, or ``None``."""
    if name in tools:
        return name
    best: str | None = None
    for pattern in tools:  # insertion order: the first of equally long globs wins
        if _is_glob(pattern) and fnmatchcase(name, pattern) and (best is None or len(pattern) > len(best)):
            best = pattern
    return best


def _override_deny(matched: tuple[str, ToolOverride] | None) -> Verdict | None:
    """The locked ``deny`` of the most specific override, if that is what it says."""
    if matched is None or matched[1].verdict != "deny":
        return None
    pattern, override = matched
    return Verdict(
        "deny", override.reason or f"policy override {pattern!r}: deny", rule=f"tools:{pattern}", locked=True
    )


# ------------------------------------------------------------------------------------------------ the tiers


def decide(
    policy: PolicySettings,
    rules: CompiledRules,
    predicates: Sequence[tuple[str, Predicate]],
    call: ToolCall,
    tool: McpTool | None,
    principal: str | None,
    trace: _Trace,
    clock: Callable[[], float] | None = None,
) -> Verdict:
    """The verdict for one call: the first opinion of tiers 2-5, never looser than the locked floor (tier 1).

    Nothing is remembered between calls but what each rule's tool-only conditions give for a tool
    (:meth:`CompiledRules.candidates`); ``clock``: what conditions reading ``now`` read (default: the policy's).
    """
    name = call["name"]
    inputs = CallInputs(name, tool, call.get("args") or {}, principal, clock or policy.clock)
    candidates = rules.candidates(name, tool)
    matched = override_for(policy.tools, name)
    floor = _locked(policy, rules, candidates, matched, inputs, trace)
    if floor is not None and floor.denied and trace is None:
        return floor  # nothing is stricter
    decisions = _ask_decisions(policy, matched)
    ordinary = _code(predicates, call, tool, decisions, trace)
    if ordinary is None or trace is not None:
        found = _rules(policy, rules, candidates, inputs, trace)
        ordinary = ordinary or found
    if ordinary is None or trace is not None:
        found = _tools(matched, decisions, trace)
        ordinary = ordinary or found
    if ordinary is None or trace is not None:
        found = _builtin(policy, name, tool, trace)
        ordinary = ordinary or found
    assert ordinary is not None  # the built-in tier always has an opinion
    return stricter(floor, ordinary) if floor is not None else ordinary


def _ask_decisions(
    policy: PolicySettings, matched: tuple[str, ToolOverride] | None
) -> tuple[DecisionType, ...]:
    """What an ``ask`` of tiers 2 and 4 offers: the matching override's decisions, else the policy's default."""
    if matched is not None and matched[1].allowed_decisions is not None:
        return tuple(matched[1].allowed_decisions)
    return tuple(policy.default_decisions)


def _locked(
    policy: PolicySettings,
    rules: CompiledRules,
    candidates: Sequence[CompiledRule],
    matched: tuple[str, ToolOverride] | None,
    inputs: CallInputs,
    trace: _Trace,
) -> Verdict | None:
    """Tier 1: the strictest matching locked rule or ``deny`` override (a tie goes to the first)."""
    floor: Verdict | None = None
    for compiled in candidates:
        if compiled.rule.locked and compiled.decides(compiled.call_match(inputs)):
            verdict = rules.verdict(compiled, policy.default_decisions)
            floor = stricter(floor, verdict)
            if trace is not None:
                trace.append(RuleMatch("locked", verdict))
    override_deny = _override_deny(matched)
    if override_deny is not None:
        floor = stricter(floor, override_deny)
        if trace is not None:
            trace.append(RuleMatch("locked", override_deny))
    return floor


def _code(
    predicates: Sequence[tuple[str, Predicate]],
    call: ToolCall,
    tool: McpTool | None,
    decisions: tuple[DecisionType, ...],
    trace: _Trace,
) -> Verdict | None:
    """Tier 2: the predicates, most specific pattern first; the first with an opinion decides."""
    name = call["name"]
    first: Verdict | None = None
    for pattern, fn in sorted(
        (p for p in predicates if _matches(p[0], name)), key=lambda p: _specificity(p[0])
    ):  # sorted() is stable: registration order among equally specific patterns
        decided = predicate_verdict(fn(call, tool), pattern, fn, decisions)
        if decided is None:
            continue
        if trace is None:
            return decided
        first = first or decided
        trace.append(RuleMatch("code", decided))
    return first


def _rules(
    policy: PolicySettings,
    rules: CompiledRules,
    candidates: Sequence[CompiledRule],
    inputs: CallInputs,
    trace: _Trace,
) -> Verdict | None:
    """Tier 3: the unlocked ``[[rules]]`` in file order; the first that matches decides."""
    first: Verdict | None = None
    for compiled in candidates:
        if not compiled.rule.locked and compiled.decides(compiled.call_match(inputs)):
            verdict = rules.verdict(compiled, policy.default_decisions)
            if trace is None:
                return verdict
            first = first or verdict
            trace.append(RuleMatch("rules", verdict))
    return first


def _tools(
    matched: tuple[str, ToolOverride] | None, decisions: tuple[DecisionType, ...], trace: _Trace
) -> Verdict | None:
    """Tier 4: the most specific ``[tools]`` entry, when it says ``allow`` or ``ask``."""
    if matched is None or matched[1].verdict == "deny":
        return None
    pattern, override = matched
    reason = override.reason or f"policy override {pattern!r}: {override.verdict}"
    rule = f"tools:{pattern}"
    verdict = (
        Verdict.ask(reason, decisions, rule=rule)
        if override.verdict == "ask"
        else Verdict.allow(reason, rule=rule)
    )
    if trace is not None:
        trace.append(RuleMatch("tools", verdict))
    return verdict


def _builtin(policy: PolicySettings, name: str, tool: McpTool | None, trace: _Trace) -> Verdict:
    """Tier 5: an untrusted server asks, a call to no MCP server gets ``non_mcp``, the rest the hint rules."""
    defaults = tuple(policy.default_decisions)
    if tool is not None and not tool.trusted:
        verdict = Verdict.ask(
            f"server {tool.server!r} is not trusted: its annotations are ignored",
            defaults,
            rule="untrusted-server",
        )
    elif tool is None:
        reason = f"{name!r} is not an MCP tool (non_mcp={policy.non_mcp!r})"
        if policy.non_mcp == "ask":
            verdict = Verdict.ask(reason, defaults, rule="non-mcp")
        else:
            verdict = Verdict(policy.non_mcp, reason, rule="non-mcp")
    else:
        verdict = _hints(policy, tool, defaults)
    if trace is not None:
        trace.append(RuleMatch("built-in", verdict))
    return verdict


def _hints(policy: PolicySettings, tool: McpTool, decisions: tuple[DecisionType, ...]) -> Verdict:
    def source(key: str) -> str:
        return f"{key} ({tool.hint_source(key)})"

    open_world_ask = policy.ask_open_world and tool.open_world
    if tool.read_only:
        if open_world_ask:
            return Verdict.ask(source("openWorldHint"), decisions, rule="hints:open-world")
        return Verdict.allow(source("readOnlyHint"), rule="hints:read-only")
    if tool.destructive:
        return Verdict.ask(source("destructiveHint"), decisions, rule="hints:destructive")
    if open_world_ask:
        return Verdict.ask(source("openWorldHint"), decisions, rule="hints:open-world")
    if policy.ask_writes:
        return Verdict.ask(
            f"writes (ask_writes): not read-only, {source('readOnlyHint')}",
            decisions,
            rule="hints:ask-writes",
        )
    return Verdict.allow(f"non-destructive write: {source('destructiveHint')}", rule="hints:write")


def predicate_verdict(
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


# ------------------------------------------------------------------------------------------------ unresolved


def unresolved_verdict(
    policy: PolicySettings, rules: CompiledRules, call: ToolCall, problem: str, principal: str | None
) -> Verdict:
    """The verdict for a call whose owner could not be established; ``problem`` says why.

    Locked rules still set the floor (a condition on the server or its hints counts as matched, since the server
    is not known); otherwise ``unresolved`` decides (``ask`` by default). Nothing allows it.
    """
    name = call["name"]
    inputs = CallInputs(name, None, call.get("args") or {}, principal, policy.clock)
    floor = _override_deny(override_for(policy.tools, name))
    for compiled in rules.rules:
        if not compiled.rule.locked:
            continue
        static = compiled.static_match(name, None, owner_known=False)
        if static is False:
            continue
        match = compiled.call_match(inputs, owner_known=False)
        if compiled.decides(False if match is False else None if static is None else match):
            floor = stricter(floor, rules.verdict(compiled, policy.default_decisions))
    reason = f"could not establish which MCP server {name!r} belongs to: {problem}"
    ordinary = (
        Verdict.deny(reason, rule="unresolved")
        if policy.unresolved == "deny"
        else Verdict.ask(reason, tuple(policy.default_decisions), rule="unresolved")
    )
    return ordinary if floor is None else stricter(floor, ordinary)
