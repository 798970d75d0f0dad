"""Rule conditions: the extension point of the policy language.

A condition is **one key of a rule** (``tool``, ``args``, ``principal``, ...), **how it matches one call's inputs**
(``True``, ``False``, or ``None`` for "cannot tell") and **what it reads** of the call (:data:`Input`). Every
condition a rule can name goes through :class:`RuleCondition` and :func:`register_condition`, the built-in ones
below included; nothing else in the policy has to learn a new one:

- ``Rule`` validates the key's value with the condition's ``spec`` (a built-in condition's key is a declared field
  of ``Rule``; a registered one is validated from the registry and dumped back as a top-level key);
- ``CompiledRule`` splits a rule's conditions by what they read: conditions that read only the tool (``name``,
  ``tool``) are matched once per tool and cached there; the others run on every call. No cache keys are kept by
  hand: what is cached follows from each condition's ``reads``;
- a condition that reads the ``tool`` counts as "cannot tell" when the call's server is not established, and as
  not matched for a call that goes to no MCP server;
- ``[[tests]]`` entries and ``policy explain`` can state every input (``args``, ``principal``, the tool, ``at``
  for the clock).

A new condition, e.g. a time window::

    class Weekdays:
        key = "weekdays"
        reads = frozenset({"now"})
        spec = list[int]

        def compile(self, value, verdict):
            return lambda call: time.gmtime(call.now).tm_wday in value

    register_condition(Weekdays())

**Fail closed on what a condition cannot tell** (``None``): it counts as matched for an ``ask`` or ``deny`` rule and
as not matched for an ``allow`` rule (:meth:`langgraph_mcp.policy.rules.CompiledRule.decides`).
**Regex cost is bounded**: operator regexes run on Google's RE2 (linear time, no backtracking); patterns are capped
at :data:`MAX_PATTERN_CHARS` and matched texts at :data:`MAX_MATCHED_CHARS`. RE2 is imported only by a policy that
has a regex.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import translate
from typing import Any, Literal, Protocol, TypeAlias, cast, get_args

from jsonpointer import JsonPointer, JsonPointerException
from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer, model_validator

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError

__all__ = [
    "MAX_MATCHED_CHARS",
    "MAX_PATTERN_CHARS",
    "ArgMatch",
    "CallInputs",
    "Input",
    "Match",
    "Matcher",
    "RuleCondition",
    "check_pattern",
    "compile_glob",
    "compile_regex",
    "conditions",
    "register_condition",
]

Input: TypeAlias = Literal["name", "tool", "args", "principal", "now"]
"""What a condition may read of a call: the published name, the tool it goes to (server, names, annotations,
trust), the arguments, the principal, the policy's clock."""
TOOL_ONLY: frozenset[Input] = frozenset({"name", "tool"})
"""A condition reading nothing else is matched once per tool (and cached there)."""

Match: TypeAlias = bool | None
"""``True``, ``False``, or ``None`` for "cannot tell"."""

MAX_PATTERN_CHARS = 1_000
"""The longest glob or regex a rule may hold."""
MAX_MATCHED_CHARS = 10_000
"""The longest argument text a glob or regex is run on; a longer value is "cannot tell"."""

_GLOB_CHARS = frozenset("*?[")
_UNKNOWN = None


@dataclass(frozen=True, slots=True)
class CallInputs:
    """Everything a condition may read about one call (see :data:`Input`)."""

    name: str
    tool: McpTool | None
    args: Mapping[str, Any]
    principal: str | None
    clock: Callable[[], float]

    @property
    def now(self) -> float:
        """Seconds since the epoch, from the policy's clock (or a self-test's ``at``)."""
        return self.clock()


Matcher: TypeAlias = Callable[[CallInputs], Match]


class RuleCondition(Protocol):
    """One condition a rule can name: its key, what it reads, the type of its value, and how it matches."""

    @property
    def key(self) -> str:
        """The rule's key (``tool``, ``args``, ...): a field of ``Rule``, or a registered extra key."""
        ...

    @property
    def reads(self) -> frozenset[Input]:
        """What of a call the matcher reads; it decides what may be cached per tool."""
        ...

    @property
    def spec(self) -> Any:
        """The type of the key's value (pydantic validates a registered key's value with it)."""
        ...

    def compile(self, value: Any, verdict: str) -> Matcher:
        """The matcher for one rule's value (``verdict``: the rule's, for conditions that never loosen)."""
        ...


_REGISTRY: dict[str, RuleCondition] = {}
_RESERVED: set[str] = set()


def register_condition(condition: RuleCondition) -> RuleCondition:
    """Make ``condition`` a key every rule may name (policies loaded from then on); raises :class:`ConfigError`
    for a key already taken."""
    taken = condition.key in _REGISTRY or condition.key in _RESERVED
    if taken and _REGISTRY.get(condition.key) is not condition:
        raise ConfigError(f"rule key {condition.key!r} is already taken")
    if not condition.reads or not condition.reads <= set(get_args(Input)):
        raise ConfigError(f"rule condition {condition.key!r}: reads must name some of {get_args(Input)}")
    return _add(condition)


def reserve_keys(keys: Iterable[str]) -> None:
    """The rule model's own keys (``id``, ``verdict``, ...), which no registered condition may take."""
    _RESERVED.update(key for key in keys if key not in _REGISTRY)
    clash = sorted(key for key in _RESERVED if key in _REGISTRY)
    if clash:
        raise ConfigError(f"rule key(s) {clash} are registered as conditions but are the rule's own keys")


def _add(condition: RuleCondition) -> RuleCondition:
    _REGISTRY[condition.key] = condition
    return condition


def unregister_condition(key: str) -> None:
    """Remove a registered condition (for tests that add one); rules naming it no longer load."""
    _REGISTRY.pop(key, None)


def conditions() -> Mapping[str, RuleCondition]:
    """Every registered condition by key, in registration order (the built-in ones first)."""
    return _REGISTRY


# ------------------------------------------------------------------------------------------------ matching


def check_pattern(pattern: str, what: str) -> str:
    if not pattern:
        raise ConfigError(f"{what} must not be empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ConfigError(f"{what} is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS}")
    return pattern


def compile_regex(pattern: str) -> Callable[[str], bool]:
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


def compile_glob(pattern: str) -> Callable[[str], bool]:
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


def combine(results: list[Match]) -> Match:
    """All of ``results``: ``False`` if one is, else "cannot tell" if one is, else ``True``."""
    if False in results:  # ``is`` semantics: a Match is only ever True, False or None
        return False
    return _UNKNOWN if _UNKNOWN in results else True


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
            check_pattern(self.glob, "glob")
        if self.regex is not None:
            check_pattern(self.regex, "regex")
            compile_regex(self.regex)  # a bad regex fails the load, naming the rule
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the one key given, so a dump loads back."""
        dumped: dict[str, Any] = handler(self)
        return {k: v for k, v in dumped.items() if k in self.model_fields_set}


def check_pointers(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """``args`` keys are JSON pointers; a bare glob value is a checked pattern."""
    for pointer, match in (value or {}).items():
        if not pointer.startswith("/"):
            raise ConfigError(f"args key {pointer!r} must be a JSON pointer into the arguments, e.g. '/path'")
        try:
            JsonPointer(pointer)
        except JsonPointerException as exc:
            raise ConfigError(f"args key {pointer!r} is not a JSON pointer: {exc}") from None
        if isinstance(match, str):
            check_pattern(match, f"the glob for {pointer!r}")
    return value


_MISSING = object()


@dataclass(frozen=True, slots=True)
class _ArgCondition:
    parts: tuple[str, ...]
    match: Callable[[object], Match]

    def __call__(self, args: Mapping[str, Any]) -> Match:
        # RFC 6901 over JSON values (parsed once by jsonpointer): an object member, or an array index written
        # as a plain non-negative integer; anything else is "not there".
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
    if isinstance(spec, str):
        match = _text_matcher(compile_glob(spec))
    elif spec.glob is not None:
        match = _text_matcher(compile_glob(spec.glob))
    elif spec.regex is not None:
        match = _text_matcher(compile_regex(spec.regex))
    else:
        match = _equals_matcher(spec.equals)
    return _ArgCondition(tuple(JsonPointer(pointer).parts), match)


# ------------------------------------------------------------------------------------------------ built-in


@dataclass(frozen=True)
class _Condition:
    key: str
    reads: frozenset[Input]
    build: Callable[[Any, str], Matcher]
    spec: Any = None

    def compile(self, value: Any, verdict: str) -> Matcher:
        return self.build(value, verdict)


def _name(value: str, verdict: str) -> Matcher:
    glob = compile_glob(value)
    return lambda call: glob(call.name)


def _tool_text(read: Callable[[McpTool], str]) -> Callable[[str, str], Matcher]:
    def build(value: str, verdict: str) -> Matcher:
        glob = compile_glob(value)
        return lambda call: call.tool is not None and glob(read(call.tool))

    return build


def _hints(value: Mapping[str, bool], verdict: str) -> Matcher:
    wanted = dict(value)

    def match(call: CallInputs) -> Match:
        tool = call.tool
        if tool is None:
            return False
        if not tool.trusted and verdict == "allow":
            return False  # an untrusted server's annotations never loosen anything
        effective = cast(Mapping[str, bool], tool.effective_hints)
        return all(effective[key] == want for key, want in wanted.items())

    return match


def _args(value: Mapping[str, str | ArgMatch], verdict: str) -> Matcher:
    compiled = [_arg_condition(p, s) for p, s in value.items()]
    return lambda call: combine([condition(call.args) for condition in compiled])


def _principal(value: str, verdict: str) -> Matcher:
    glob = compile_glob(value)
    return lambda call: call.principal is not None and glob(call.principal)


for _builtin in (
    _Condition("tool", frozenset({"name"}), _name),
    _Condition("server", frozenset({"tool"}), _tool_text(lambda t: t.server)),
    _Condition("original_tool", frozenset({"tool"}), _tool_text(lambda t: t.name)),
    _Condition("hints", frozenset({"tool"}), _hints),
    _Condition("args", frozenset({"args"}), _args),
    _Condition("principal", frozenset({"principal"}), _principal),
):
    _add(_builtin)  # each is a declared field of Rule (typed and documented there)
