"""Policy rules and self-tests: the ``[[rules]]`` and ``[[tests]]`` entries of a policy file, compiled once.

A rule matches a call when every condition it names matches (a rule that names none matches every call):
``tool`` (glob on the published name), ``original_tool`` (glob on the server's own tool name), ``server`` (glob),
``hints`` (effective annotations, each ``true``/``false``), ``args`` (a JSON pointer into the arguments → a glob,
``{regex = "..."}`` or ``{equals = ...}``) and ``principal`` (glob). Globs are ``fnmatch`` globs, case-sensitive,
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
RE2 is imported only by a policy that has a regex.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import translate
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from jsonpointer import JsonPointer, JsonPointerException
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError
from langgraph_mcp.payloads import ALL_DECISIONS, DecisionType

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

MAX_PATTERN_CHARS = 1_000
"""The longest glob or regex a rule may hold."""
MAX_MATCHED_CHARS = 10_000
"""The longest argument text a glob or regex is run on; a longer value is "cannot tell" (see the module doc)."""

_STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_GLOB_CHARS = frozenset("*?[")
_UNKNOWN = None  # the third value of a match: "cannot tell"


def strictness(kind: str) -> int:
    """``allow`` < ``ask`` < ``deny``."""
    return _STRICTNESS[kind]


def check_decisions(decisions: object, what: str) -> tuple[DecisionType, ...]:
    """Deduplicate (keeping order) and check decision types; raise :class:`ConfigError` naming ``what``."""
    if isinstance(decisions, str) or not isinstance(decisions, list | tuple):
        raise ConfigError(f"{what} must be a list of decision types, got {type(decisions).__name__}")
    unknown = [d for d in decisions if d not in ALL_DECISIONS]
    if unknown:
        raise ConfigError(
            f"{what}: unknown decision type(s) {unknown!r}; expected some of {list(ALL_DECISIONS)}"
        )
    unique: tuple[DecisionType, ...] = tuple(dict.fromkeys(decisions))
    if not unique:
        raise ConfigError(
            f"{what} must not be empty: a human asked about a call needs at least one way to answer"
        )
    return unique


def _check_pattern(pattern: str, what: str) -> str:
    if not pattern:
        raise ConfigError(f"{what} must not be empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ConfigError(f"{what} is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS}")
    return pattern


# ------------------------------------------------------------------------------------------------ the models


class ArgMatch(BaseModel):
    """One argument condition: exactly one of ``glob``, ``regex`` (RE2 syntax, searched: anchor it with ``^``
    and ``$``) or ``equals`` (the JSON value itself; ``1`` does not equal ``true``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    glob: str | None = None
    regex: str | None = None
    equals: str | int | float | bool | None = None

    @model_validator(mode="after")
    def _one(self) -> ArgMatch:
        given = [k for k in ("glob", "regex", "equals") if k in self.model_fields_set]
        if len(given) != 1:
            raise ConfigError(f"give exactly one of glob, regex, equals (got {', '.join(given) or 'none'})")
        if self.glob is not None:
            _check_pattern(self.glob, "glob")
        if self.regex is not None:
            _check_pattern(self.regex, "regex")
            _compile_regex(self.regex)  # a bad regex fails the load, naming the rule
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the one key given, so a dump loads back."""
        dumped: dict[str, Any] = handler(self)
        return {k: v for k, v in dumped.items() if k in self.model_fields_set}


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

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value or value != value.strip():
            raise ConfigError("a rule id must be a non-empty name without spaces around it")
        return value

    @field_validator("tool", "original_tool", "server", "principal")
    @classmethod
    def _globs(cls, value: str | None) -> str | None:
        return None if value is None else _check_pattern(value, "a glob")

    @field_validator("args")
    @classmethod
    def _pointers(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for pointer, match in (value or {}).items():
            if not pointer.startswith("/"):
                raise ConfigError(
                    f"args key {pointer!r} must be a JSON pointer into the arguments, e.g. '/path'"
                )
            try:
                JsonPointer(pointer)
            except JsonPointerException as exc:
                raise ConfigError(f"args key {pointer!r} is not a JSON pointer: {exc}") from None
            if isinstance(match, str):
                _check_pattern(match, f"the glob for {pointer!r}")
        return value

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
        defaults = {"locked": False, "remember": "any_args"}
        return {k: v for k, v in dumped.items() if v is not None and defaults.get(k, object()) != v}


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

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Keys left at their defaults are left out, as a person would write the test."""
        dumped: dict[str, Any] = handler(self)
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

Match: TypeAlias = bool | None
"""``True``, ``False``, or ``None`` for "cannot tell"."""


def _compile_regex(pattern: str) -> Callable[[str], bool]:
    import re2  # type: ignore[import-untyped,unused-ignore]  # google-re2; only a policy with a regex needs it

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own copy of the error to stderr
    try:
        compiled = re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ConfigError(f"regex {pattern!r} is not valid RE2 syntax: {detail}") from None

    def search(text: str) -> bool:
        return compiled.search(text) is not None

    return search


def _compile_glob(pattern: str) -> Callable[[str], bool]:
    if not any(c in _GLOB_CHARS for c in pattern):
        return pattern.__eq__
    matcher = re.compile(translate(pattern)).match  # fnmatch's translation: no catastrophic backtracking
    return lambda text: matcher(text) is not None


def _text_matcher(test: Callable[[str], bool]) -> Callable[[object], Match]:
    def match(value: object) -> Match:
        if isinstance(value, bool | int | float):
            value = json.dumps(value)
        if not isinstance(value, str) or len(value) > MAX_MATCHED_CHARS:
            return _UNKNOWN
        return test(value)

    return match


def _equals_matcher(expected: object) -> Callable[[object], Match]:
    def match(value: object) -> Match:
        if isinstance(value, bool) or isinstance(expected, bool) or not isinstance(value, int | float):
            return type(value) is type(expected) and value == expected
        return isinstance(expected, int | float) and value == expected  # 1 equals 1.0, never true

    return match


_MISSING = object()


@dataclass(frozen=True, slots=True)
class _ArgCondition:
    pointer: JsonPointer
    match: Callable[[object], Match]
    parts: tuple[str, ...] = ()

    def __call__(self, args: Mapping[str, Any]) -> Match:
        # RFC 6901 over JSON values (parsed once by jsonpointer): an object member, or an array index written
        # as a plain non-negative integer; anything else is "not there". jsonpointer's own resolve() checks
        # abstract types at every step, several times the cost of this walk.
        value: Any = args
        for part in self.parts:
            if isinstance(value, dict):
                value = value.get(part, _MISSING)
                if value is _MISSING:
                    return False
            elif isinstance(value, list) and part.isdigit() and (part == "0" or part[0] != "0"):
                index = int(part)
                if index >= len(value):
                    return False
                value = value[index]
            else:
                return False
        return self.match(value)


def _arg_condition(pointer: str, spec: str | ArgMatch) -> _ArgCondition:
    parsed = JsonPointer(pointer)
    if isinstance(spec, str):
        match = _text_matcher(_compile_glob(spec))
    elif spec.glob is not None:
        match = _text_matcher(_compile_glob(spec.glob))
    elif spec.regex is not None:
        match = _text_matcher(_compile_regex(spec.regex))
    else:
        match = _equals_matcher(spec.equals)
    return _ArgCondition(parsed, match, tuple(parsed.parts))


def _combine(results: Sequence[Match]) -> Match:
    if False in results:  # ``is`` semantics: a Match is only ever True, False or None
        return False
    return _UNKNOWN if _UNKNOWN in results else True


class CompiledRule:
    """A :class:`Rule` with its globs, regexes and pointers compiled; matching is split in two halves.

    :meth:`static_match` depends on the tool only (names, server, hints), so the policy caches it per tool;
    :meth:`call_match` depends on the call (arguments, principal) and runs every time.
    """

    __slots__ = ("_args", "_original", "_principal", "_server", "_tool", "index", "rule")

    def __init__(self, rule: Rule, index: int) -> None:
        self.rule = rule
        self.index = index
        self._tool = _compile_glob(rule.tool) if rule.tool else None
        self._original = _compile_glob(rule.original_tool) if rule.original_tool else None
        self._server = _compile_glob(rule.server) if rule.server else None
        self._principal = _compile_glob(rule.principal) if rule.principal else None
        self._args = tuple(_arg_condition(p, s) for p, s in (rule.args or {}).items())

    @property
    def needs_tool(self) -> bool:
        return bool(self._original or self._server or self.rule.hints)

    def static_match(self, name: str, tool: McpTool | None, *, owner_known: bool = True) -> Match:
        """Whether the tool-only conditions match; ``owner_known=False``: the call's server is not known."""
        if self._tool is not None and not self._tool(name):
            return False
        if not self.needs_tool:
            return True
        if not owner_known:
            return _UNKNOWN
        if tool is None:
            return False
        if self._server is not None and not self._server(tool.server):
            return False
        if self._original is not None and not self._original(tool.name):
            return False
        if self.rule.hints:
            if not tool.trusted and self.rule.verdict == "allow":
                return False  # an untrusted server's annotations never loosen anything
            effective = tool.effective_hints
            if any(effective[key] != value for key, value in self.rule.hints.items()):
                return False
        return True

    def call_match(self, args: Mapping[str, Any], principal: str | None) -> Match:
        """Whether the argument and principal conditions match."""
        if self._principal is not None and (principal is None or not self._principal(principal)):
            return False
        if not self._args:
            return True
        return _combine([condition(args) for condition in self._args])

    def decides(self, match: Match) -> bool:
        """A match result read fail-closed: "cannot tell" matches ``ask``/``deny``, never ``allow``."""
        return match is True or (match is _UNKNOWN and self.rule.verdict != "allow")


def compile_rules(rules: Sequence[Rule]) -> tuple[CompiledRule, ...]:
    """Compile every rule; raise :class:`ConfigError` on a duplicate id."""
    seen: dict[str, int] = {}
    for i, rule in enumerate(rules):
        if rule.id in seen:
            raise ConfigError(f"rules[{i}]: id {rule.id!r} is already used by rules[{seen[rule.id]}]")
        seen[rule.id] = i
    return tuple(CompiledRule(rule, i) for i, rule in enumerate(rules))
