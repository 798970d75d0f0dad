"""``ApprovalPolicy``: the verdict (allow, ask or deny) for each tool call before it runs.

The policy reads a tool's *effective* annotations (what the server declared, with the MCP spec defaults filled
in for what it did not) and turns them into a :class:`Verdict`:

* a read-only tool is allowed (``"readOnlyHint (declared)"``);
* a tool that is not read-only and is destructive (declared, or by the spec default ``destructiveHint: true``)
  is asked about, and the reason says where the hint came from: ``"destructiveHint (spec default)"``;
* a non-destructive write is allowed, unless ``ask_writes`` is on;
* with ``ask_open_world`` on, any open-world tool (read-only ones included) is asked about.

On top of those hint rules sit explicit configuration (per-tool overrides by published name or glob, argument
predicates, a default for tools that are not MCP tools) and a hard rule for servers configured with
``trust_annotations=False``: their annotations are ignored and every call is asked about. The exact precedence
is documented on :class:`ApprovalPolicy`.

The serializable part of the policy is a pydantic model, loadable from JSON::

    {
      "ask_writes": false,
      "ask_open_world": false,
      "non_mcp": "allow",
      "unresolved": "ask",
      "default_decisions": ["approve", "edit", "reject", "respond"],
      "tools": {
        "fs_*": "ask",
        "git_status": "allow",
        "fs_move_file": "deny",
        "fs_write_file": {"verdict": "ask", "allowed_decisions": ["approve", "reject"], "reason": "writes"}
      }
    }

Argument predicates (``policy.when(pattern, fn)``) are Python callables and are never part of the JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias, overload

from langchain_core.messages import ToolCall
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    field_serializer,
    field_validator,
)

from langgraph_mcp.catalog import McpTool
from langgraph_mcp.errors import ConfigError, PolicyError, problems
from langgraph_mcp.payloads import ALL_DECISIONS, DecisionType

__all__ = [
    "ApprovalPolicy",
    "Predicate",
    "PredicateResult",
    "ToolOverride",
    "Verdict",
    "VerdictKind",
]

VerdictKind: TypeAlias = Literal["allow", "ask", "deny"]
"""What happens to a tool call: run it, ask a human first, or refuse it without asking."""

_VERDICT_KINDS: tuple[VerdictKind, ...] = ("allow", "ask", "deny")
_GLOB_CHARS = frozenset("*?[")


def _check_decisions(decisions: object, what: str) -> tuple[DecisionType, ...]:
    """Deduplicate (keeping order) and check decision types; raise ``ValueError`` naming ``what``."""
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

    def __post_init__(self) -> None:
        if self.kind not in _VERDICT_KINDS:
            raise ConfigError(f"Verdict kind must be one of {list(_VERDICT_KINDS)}, got {self.kind!r}")
        # Accept any sequence (e.g. a list), store a deduplicated tuple.
        object.__setattr__(
            self, "allowed_decisions", _check_decisions(self.allowed_decisions, "allowed_decisions")
        )

    @classmethod
    def allow(cls, reason: str = "") -> Verdict:
        """Run the call without asking."""
        return cls("allow", reason)

    @classmethod
    def ask(
        cls, reason: str, allowed_decisions: tuple[DecisionType, ...] | list[DecisionType] = ALL_DECISIONS
    ) -> Verdict:
        """Ask a human first; they may answer with any of ``allowed_decisions``."""
        return cls("ask", reason, tuple(allowed_decisions))

    @classmethod
    def deny(cls, reason: str) -> Verdict:
        """Refuse the call without asking anyone."""
        return cls("deny", reason)

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


PredicateResult: TypeAlias = Verdict | VerdictKind | bool | None
"""A predicate's answer: a verdict (or its kind) decides, ``True`` asks, ``False``/``None`` = no opinion."""

Predicate: TypeAlias = Callable[[ToolCall, McpTool | None], PredicateResult]
"""``fn(call, tool)``: ``call`` is the model's tool call (``name``/``args``/``id``); ``tool`` is ``None``
for a tool that is not an MCP tool."""


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
        return None if value is None else list(_check_decisions(value, "allowed_decisions"))


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


class ApprovalPolicy(BaseModel):
    """Gives each tool call a :class:`Verdict`: ``allow``, ``ask`` (a human decides) or ``deny``.

    Call :meth:`verdict` with the model's tool call and the :class:`~langgraph_mcp.catalog.McpTool` it goes to
    (``None`` for a tool that is not an MCP tool). Rules are tried in this order; the first that decides wins:

    1. **A deny override.** When the most specific ``tools`` entry matching the call is ``deny``, the call
       is denied. Nothing can re-allow it: a deny is the one thing a reviewer of the JSON can rely on.
    2. **Predicates** registered with :meth:`when`, most specific pattern first (same rule as overrides),
       then in registration order. A predicate sees the arguments, so it is the most precise rule there is:
       it may return ``"allow"``, ``"ask"``, ``"deny"`` or a :class:`Verdict` to decide, ``True`` to ask,
       and ``False`` or ``None`` to have no opinion (the next rule decides).
    3. **The per-tool override** (``allow`` or ``ask``). An explicit ``allow`` also wins over rule 4: the
       user named this tool and vouches for it, whatever its server says (a glob counts as naming it too,
       so keep globs that cover an untrusted server's tools narrow).
    4. **Untrusted server.** A tool of a server configured with ``trust_annotations=False`` is always asked
       about: its annotations are ignored, read-only or not.
    5. **Not an MCP tool** (``tool is None``): the ``non_mcp`` verdict. (A call whose owner could not be
       established never gets here: the gate gives it :meth:`unresolved_verdict` instead.)
    6. **Hint rules**, on the effective hints (the MCP spec defaults fill in what the server did not
       declare): a read-only tool is allowed; otherwise a destructive tool is asked about; otherwise (a
       non-destructive write) it is allowed, or asked about with ``ask_writes``. With ``ask_open_world``,
       an open-world tool is asked about, even a read-only one (it can still leak data to the outside
       world); a destructive one asks anyway, with the destructive reason.

    **Overrides** (``tools``) are keyed by the *published* name (what the model calls) or an ``fnmatch``
    glob (``*``, ``?``, ``[...]``; case-sensitive). For a call, only the most specific matching key counts:
    an exact name beats any glob; among globs the longest pattern wins; between globs of the same length,
    the one listed first wins. So with ``{"fs_*": "ask", "git_status": "allow", "fs_move_file": "deny"}``,
    ``fs_move_file`` is denied, ``fs_read_file`` asks and ``git_status`` runs.

    ``ask`` verdicts offer ``default_decisions`` (all four by default), or the matching override's
    ``allowed_decisions``, or what a predicate's :class:`Verdict` says.

    Load one from JSON with :meth:`load`; ``model_dump_json()`` writes the same shape back. Predicates are
    kept in a private attribute and are never serialized.
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

    _predicates: list[tuple[str, Predicate]] = PrivateAttr(default_factory=list)

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
        return list(_check_decisions(value, "default_decisions"))

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

    @classmethod
    def load(cls, source: str | os.PathLike[str] | Mapping[str, Any] | ApprovalPolicy) -> ApprovalPolicy:
        """Build a policy from a JSON file path or an already-parsed mapping.

        Raises :class:`~langgraph_mcp.errors.ConfigError` naming the file (if any) and every bad field, e.g.
        ``approval policy policy.json: tools.fs_*.verdict: Input should be 'allow', 'ask' or 'deny'``.
        """
        if isinstance(source, ApprovalPolicy):
            return source
        where = "approval policy"
        if isinstance(source, Mapping):
            data: object = dict(source)
        else:
            path = Path(source)
            where = f"approval policy {path}"
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"{where}: cannot read the file: {exc.strerror or exc}") from exc
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
                ) from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: must be a JSON object, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{where}: {_format_errors(exc)}") from exc

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
        ``False``/``None`` to leave the decision to the other rules (see the class docstring for the order).
        Exceptions it raises propagate out of :meth:`verdict` (so the call does not run).

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

    def verdict(self, call: ToolCall, tool: McpTool | None) -> Verdict:
        """The verdict for one tool call; ``tool`` is ``None`` when the call does not go to an MCP tool."""
        name = call["name"]
        default_decisions = tuple(self.default_decisions)

        matched = self._override_for(name)
        override_decisions = default_decisions
        if matched is not None and matched[1].allowed_decisions is not None:
            override_decisions = tuple(matched[1].allowed_decisions)

        # 1. deny override
        if matched is not None and matched[1].verdict == "deny":
            return Verdict.deny(matched[1].reason or f"policy override {matched[0]!r}: deny")

        # 2. predicates
        for pattern, fn in sorted(
            (p for p in self._predicates if _matches(p[0], name)), key=lambda p: _specificity(p[0])
        ):  # sorted() is stable: registration order among equally specific patterns
            decided = _predicate_verdict(fn(call, tool), pattern, fn, override_decisions)
            if decided is not None:
                return decided

        # 3. allow/ask override
        if matched is not None:
            pattern, override = matched
            reason = override.reason or f"policy override {pattern!r}: {override.verdict}"
            if override.verdict == "ask":
                return Verdict.ask(reason, override_decisions)
            return Verdict.allow(reason)

        # 4. untrusted server
        if tool is not None and not tool.trusted:
            return Verdict.ask(
                f"server {tool.server!r} is not trusted: its annotations are ignored", default_decisions
            )

        # 5. not an MCP tool
        if tool is None:
            reason = f"{name!r} is not an MCP tool (non_mcp={self.non_mcp!r})"
            if self.non_mcp == "ask":
                return Verdict.ask(reason, default_decisions)
            return Verdict(self.non_mcp, reason)

        # 6. hint rules
        return self._hint_verdict(tool, default_decisions)

    def unresolved_verdict(self, call: ToolCall, problem: str) -> Verdict:
        """The verdict for a call whose owner could not be established; ``problem`` says why.

        A deny override still denies; otherwise ``unresolved`` decides (``ask`` by default). Nothing allows it:
        without its server, the tool's annotations (or the absence of a tool) are unknown.
        """
        name = call["name"]
        matched = self._override_for(name)
        if matched is not None and matched[1].verdict == "deny":
            return Verdict.deny(matched[1].reason or f"policy override {matched[0]!r}: deny")
        reason = f"could not establish which MCP server {name!r} belongs to: {problem}"
        if self.unresolved == "deny":
            return Verdict.deny(reason)
        return Verdict.ask(reason, tuple(self.default_decisions))

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
                return Verdict.ask(source("openWorldHint"), decisions)
            return Verdict.allow(source("readOnlyHint"))
        if tool.destructive:
            return Verdict.ask(source("destructiveHint"), decisions)
        if open_world_ask:
            return Verdict.ask(source("openWorldHint"), decisions)
        if self.ask_writes:
            return Verdict.ask(f"writes (ask_writes): not read-only, {source('readOnlyHint')}", decisions)
        return Verdict.allow(f"non-destructive write: {source('destructiveHint')}")


def _as_override(value: VerdictKind | ToolOverride) -> ToolOverride:
    return value if isinstance(value, ToolOverride) else ToolOverride(verdict=value)


def _predicate_verdict(
    result: object, pattern: str, fn: Predicate, decisions: tuple[DecisionType, ...]
) -> Verdict | None:
    """Turn what a predicate returned into a verdict, or ``None`` for no opinion."""
    label = f"rule {getattr(fn, '__name__', type(fn).__name__)} for {pattern!r}"
    if result is None or result is False:
        return None
    if result is True:
        return Verdict.ask(label, decisions)
    if isinstance(result, Verdict):
        return result if result.reason else Verdict(result.kind, label, result.allowed_decisions)
    if result == "ask":
        return Verdict.ask(label, decisions)
    if result == "allow":
        return Verdict.allow(label)
    if result == "deny":
        return Verdict.deny(label)
    raise PolicyError(
        f"approval predicate {label} returned {result!r}; expected 'allow', 'ask', 'deny', a Verdict, "
        "True (ask), or False/None (no opinion)"
    )


def _format_errors(exc: ValidationError) -> str:
    """``field.path: message`` for every error, joined with ``; `` (union tags dropped from the path)."""
    parts = []
    for problem in problems(exc, tags=("str", "obj")):
        loc = problem.location
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "(top level)"
        parts.append(f"{field}: {problem.message}")
    return "; ".join(parts)
