"""Policy rules and self-tests: the ``[[rules]]`` and ``[[tests]]`` entries of a policy file, compiled once.

A rule matches a call when every condition it names matches (a rule that names none matches every call):
``tool`` (glob on the published name), ``original_tool`` (glob on the server's own tool name), ``server`` (glob),
``hints`` (effective annotations, each ``true``/``false``), ``args`` (a JSON pointer into the arguments → a glob,
``{regex = "..."}`` or ``{equals = ...}``) and ``principal`` (glob); more conditions are registered through
:mod:`langgraph_mcp.policy.conditions`, the extension point every condition (these included) goes through. Globs are ``fnmatch`` globs, case-sensitive,
compiled at load; ``*`` matches ``/`` too, and a glob matches the argument's text as sent (``scratch/../etc``
matches ``scratch/*``): use a regex such as ``^scratch/[^/]+$`` where that matters.

**Fail closed on what a rule cannot tell.** Some conditions cannot be decided for a call: an argument value
longer than :data:`MAX_MATCHED_CHARS`, an object or array where a glob or regex expects text, annotations of a
server whose owner could not be established. Such a condition counts as *matched* for an ``ask`` or ``deny`` rule
and *not matched* for an ``allow`` rule: not knowing never loosens anything. Hints of a server configured with
``trust_annotations=False`` never match an ``allow`` rule either (its annotations never loosen anything).

**Regex cost is bounded.** Operator regexes run on Google's RE2 (``google-re2``), which matches in time linear in
the text (no backtracking: no catastrophic patterns, and no lookaround or backreferences either); patterns are
capped at :data:`MAX_PATTERN_CHARS` and matched texts at :data:`MAX_MATCHED_CHARS`, so one match is bounded.
RE2 is imported only by a policy that has a regex (the matchers live in :mod:`~langgraph_mcp.policy.conditions`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError
from langgraph_mcp.payloads import ADDED_DECISIONS, ALL_DECISIONS, DecisionType
from langgraph_mcp.policy.conditions import (
    MAX_MATCHED_CHARS,
    MAX_PATTERN_CHARS,
    TOOL_ONLY,
    ArgMatch,
    CallInputs,
    Match,
    Matcher,
    check_pattern,
    check_pointers,
    conditions,
    reserve_keys,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "MAX_MATCHED_CHARS",
    "MAX_PATTERN_CHARS",
    "ArgMatch",
    "CompiledRule",
    "HintName",
    "MemoryScope",
    "Rule",
    "RuleTest",
    "VerdictKind",
    "check_decisions",
    "compile_rules",
    "strictness",
]

VerdictKind: TypeAlias = Literal["allow", "ask", "deny"]
"""What happens to a tool call: run it, ask a human first, or refuse it without asking."""

HintName: TypeAlias = Literal["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]

MemoryScope: TypeAlias = Literal["any_args", "same_args", "off"]
"""What a remembered decision about a rule's ``ask`` covers: later calls with any arguments, only calls with the
same arguments (same ``args_digest``), or nothing (the rule always asks)."""

_STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_UNKNOWN = None  # the third value of a match: "cannot tell"
_EXTRA = "extra_conditions"


def strictness(kind: str) -> int:
    """``allow`` < ``ask`` < ``deny``."""
    return _STRICTNESS[kind]


def check_decisions(decisions: object, what: str) -> tuple[DecisionType, ...]:
    """Deduplicate (keeping order) and check decision types; raise :class:`ConfigError` naming ``what``."""
    if isinstance(decisions, str) or not isinstance(decisions, list | tuple):
        raise ConfigError(f"{what} must be a list of decision types, got {type(decisions).__name__}")
    known = [*ALL_DECISIONS, *sorted(ADDED_DECISIONS)]  # the built-in ones and those an extension added
    unknown = [d for d in decisions if d not in known]
    if unknown:
        raise ConfigError(f"{what}: unknown decision type(s) {unknown!r}; expected some of {known}")
    unique: tuple[DecisionType, ...] = tuple(dict.fromkeys(decisions))
    if not unique:
        raise ConfigError(
            f"{what} must not be empty: a human asked about a call needs at least one way to answer"
        )
    return unique


# ------------------------------------------------------------------------------------------------ the models


def _arg_tag(value: object) -> str:
    return "str" if isinstance(value, str) else "obj"


_ArgValue: TypeAlias = Annotated[
    Annotated[str, Tag("str")] | Annotated[ArgMatch, Tag("obj")], Discriminator(_arg_tag)
]


class Rule(BaseModel):
    """One ``[[rules]]`` entry (see the module doc for how its conditions match)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """Unique within the policy; every verdict the rule gives names it."""
    verdict: VerdictKind
    reason: str | None = None
    """Shown to the human (``ask``) or the model (``deny``); by default the rule id is named."""
    tool: str | None = None
    """Glob on the published name (what the model calls)."""
    original_tool: str | None = None
    """Glob on the server's own tool name."""
    server: str | None = None
    """Glob on the server name. A rule with ``server``, ``original_tool`` or ``hints`` never matches a call that
    goes to no MCP server."""
    hints: dict[HintName, bool] | None = None
    """Effective annotations (the MCP spec defaults fill in what the server did not declare)."""
    args: dict[str, _ArgValue] | None = None
    """JSON pointer (RFC 6901, e.g. ``/path`` or ``/files/0/name``) → glob, or an :class:`ArgMatch`."""
    principal: str | None = None
    """Glob on the principal (who runs the graph); a call without a principal never matches."""
    locked: bool = False
    """The operator's tier: a locked ``ask`` or ``deny`` is a floor nothing else loosens (see the precedence)."""
    allowed_decisions: list[DecisionType] | None = None
    """For ``ask``: the decisions the human may answer with (default: the policy's ``default_decisions``)."""
    expires_after: float | None = None
    """For ``ask``: seconds; an approval given later than that after the question counts as a rejection."""
    remember: MemoryScope = "any_args"
    """For ``ask``: what a decision given with ``"remember"`` covers (see :data:`MemoryScope`)."""
    extra_conditions: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)
    """The registered conditions this rule names (written as top-level keys, like the built-in ones)."""

    @model_validator(mode="before")
    @classmethod
    def _registered(cls, data: Any) -> Any:
        """Keys of registered conditions (not fields of this model) go to ``extra_conditions``."""
        if not isinstance(data, Mapping):
            return data
        if _EXTRA in data:
            raise ConfigError(f"{_EXTRA} is not a rule key: write each condition as a key of its own")
        extra = {k: v for k, v in data.items() if k not in cls.model_fields and k in conditions()}
        if not extra:
            return data
        return {**{k: v for k, v in data.items() if k not in extra}, _EXTRA: extra}

    @field_validator(_EXTRA)
    @classmethod
    def _extra_values(cls, value: dict[str, Any]) -> dict[str, Any]:
        checked = {}
        for key, given in value.items():
            try:
                checked[key] = TypeAdapter(conditions()[key].spec).validate_python(given)
            except ValidationError as exc:
                problems = "; ".join(e["msg"] for e in exc.errors())
                raise ConfigError(f"{key}: {problems}") from None
        return checked

    def condition_values(self) -> dict[str, Any]:
        """Every condition this rule names, by key (registration order), with its value."""
        out = {}
        for key in conditions():
            value = self.extra_conditions.get(key) if key not in Rule.model_fields else getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value or value != value.strip():
            raise ConfigError("a rule id must be a non-empty name without spaces around it")
        return value

    @field_validator("tool", "original_tool", "server", "principal")
    @classmethod
    def _globs(cls, value: str | None) -> str | None:
        return None if value is None else check_pattern(value, "a glob")

    @field_validator("args")
    @classmethod
    def _pointers(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_pointers(value)

    @field_validator("allowed_decisions")
    @classmethod
    def _decisions(cls, value: list[DecisionType] | None) -> list[DecisionType] | None:
        return None if value is None else list(check_decisions(value, "allowed_decisions"))

    @model_validator(mode="after")
    def _coherent(self) -> Rule:
        if self.locked and self.verdict == "allow":
            raise ConfigError(
                "a locked rule is a floor that nothing loosens, and allow is no floor: use ask or deny, or "
                "drop locked"
            )
        if self.verdict != "ask":
            for key, default in (
                ("allowed_decisions", None),
                ("expires_after", None),
                ("remember", "any_args"),
            ):
                if getattr(self, key) != default:
                    raise ConfigError(
                        f"{key} only applies to verdict 'ask' (this rule's is {self.verdict!r})"
                    )
        if self.expires_after is not None and not (
            math.isfinite(self.expires_after) and self.expires_after > 0
        ):
            raise ConfigError("expires_after must be a positive number of seconds")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Keys left at their defaults are left out, as a person would write the rule."""
        dumped: dict[str, Any] = handler(self)
        dumped.update(TypeAdapter(dict[str, Any]).dump_python(self.extra_conditions, mode="json"))
        defaults = {"locked": False, "remember": "any_args"}
        return {k: v for k, v in dumped.items() if v is not None and defaults.get(k, object()) != v}


reserve_keys(Rule.model_fields)  # the built-in conditions are fields too, registered already: not reserved


class RuleTest(BaseModel):
    """One ``[[tests]]`` entry: an example call and the verdict the policy must give it.

    At load, the call goes to a tool made from the test itself (``server``, ``original_tool``, ``annotations``
    as declared, ``trusted``); ``mcp = false`` makes it a call to no MCP server. ``langgraph-mcp policy check
    --config FILE`` runs the same tests against the servers' real listings instead.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: str
    """The published name."""
    args: dict[str, Any] = Field(default_factory=dict)
    principal: str | None = None
    expect: VerdictKind
    rule: str | None = None
    """The rule id that must decide, e.g. ``"scratch-deletes"``, ``"tools:fs_*"`` or ``"hints:destructive"``."""
    name: str | None = None
    """A label for failure messages (default: ``tests[N]``)."""
    server: str = "test"
    original_tool: str | None = None
    annotations: dict[str, Any] | None = None
    """The tool's annotations as a server would declare them (default: none, so the spec defaults apply)."""
    trusted: bool = True
    mcp: bool = True
    at: datetime | None = None
    """When the call is made (TOML datetime or ISO 8601; without a zone: UTC), for conditions that read the clock;
    default: the policy's clock."""

    @field_validator("at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value

    @property
    def now(self) -> float | None:
        """:attr:`at` in seconds since the epoch (``None``: the policy's clock)."""
        return None if self.at is None else self.at.timestamp()

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Keys left at their defaults are left out, as a person would write the test."""
        dumped: dict[str, Any] = handler(self)
        if self.at is not None:
            dumped["at"] = self.at.isoformat()
        defaults: dict[str, Any] = {"args": {}, "server": "test", "trusted": True, "mcp": True}
        return {k: v for k, v in dumped.items() if v is not None and defaults.get(k, object()) != v}

    def tool(self) -> McpTool | None:
        """The tool this test's call goes to at load time (``None`` for ``mcp = false``)."""
        if not self.mcp:
            return None
        return McpTool(
            server=self.server,
            name=self.original_tool or self.call,
            published_name=self.call,
            title=None,
            description="",
            input_schema={"type": "object"},
            output_schema=None,
            annotations=self.annotations,
            trusted=self.trusted,
        )


# ------------------------------------------------------------------------------------------------ compiling


class CompiledRule:
    """A :class:`Rule` with its conditions compiled (:mod:`~langgraph_mcp.policy.conditions`), split by what
    they read: :meth:`static_match` runs the conditions that read only the tool (the policy caches it per tool),
    :meth:`call_match` the others, on every call."""

    __slots__ = ("_call", "_static", "index", "needs_tool", "rule")

    def __init__(self, rule: Rule, index: int) -> None:
        self.rule = rule
        self.index = index
        static: list[tuple[bool, Matcher]] = []
        per_call: list[tuple[bool, Matcher]] = []
        registered = conditions()
        for key, value in rule.condition_values().items():
            condition = registered[key]
            compiled = (("tool" in condition.reads), condition.compile(value, rule.verdict))
            (static if condition.reads <= TOOL_ONLY else per_call).append(compiled)
        self._static = tuple(static)
        self._call = tuple(per_call)
        self.needs_tool = any(reads_tool for reads_tool, _ in static + per_call)
        """A condition reads the tool: the rule never matches a call to no MCP server."""

    def static_match(self, name: str, tool: McpTool | None, *, owner_known: bool = True) -> Match:
        """Whether the tool-only conditions match; ``owner_known=False``: the call's server is not known."""
        return self._match(self._static, CallInputs(name, tool, {}, None, _no_clock), owner_known)

    def call_match(self, call: CallInputs, *, owner_known: bool = True) -> Match:
        """Whether the conditions that read more than the tool (arguments, principal, clock, ...) match."""
        return self._match(self._call, call, owner_known)

    @staticmethod
    def _match(matchers: tuple[tuple[bool, Matcher], ...], call: CallInputs, owner_known: bool) -> Match:
        unknown = False
        for reads_tool, matcher in matchers:
            if reads_tool and not owner_known:
                unknown = True  # the server is not known: cannot tell
                continue
            if reads_tool and call.tool is None:
                return False
            result = matcher(call)
            if result is False:
                return False
            unknown = unknown or result is _UNKNOWN
        return _UNKNOWN if unknown else True

    def decides(self, match: Match) -> bool:
        """A match result read fail-closed: "cannot tell" matches ``ask``/``deny``, never ``allow``."""
        return match is True or (match is _UNKNOWN and self.rule.verdict != "allow")


def _no_clock() -> float:
    raise RuntimeError("a condition that reads the clock was matched as a tool-only condition")


def compile_rules(rules: Sequence[Rule]) -> tuple[CompiledRule, ...]:
    """Compile every rule; raise :class:`ConfigError` on a duplicate id."""
    seen: dict[str, int] = {}
    for i, rule in enumerate(rules):
        if rule.id in seen:
            raise ConfigError(f"rules[{i}]: id {rule.id!r} is already used by rules[{seen[rule.id]}]")
        seen[rule.id] = i
    return tuple(CompiledRule(rule, i) for i, rule in enumerate(rules))
