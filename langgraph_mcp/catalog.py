"""The tool catalog: ``McpTool`` (declared vs effective hints), published names, inputSchema guards, and the
digests a decision is bound to (:func:`definition_hash` of a tool, :func:`args_digest` of what is sent).

Published names must be what model providers accept (``^[a-zA-Z0-9_-]{1,64}$``); a tool that can't be published is
reported and skipped (or renamed by the opt-in sanitiser), and two tools with one published name are an error,
never a silent shadow. Schemas are checked without recursion, so a hostile schema can't blow the stack.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, cast

import mcp_types as types  # the wire types alone (mcp.types mirrors them): no transport stack imported

from langgraph_mcp.errors import (
    AuthorizationRequiredError,
    ToolNameCollisionError,
    ToolNotFoundError,
    ToolOwnerUnknownError,
)
from langgraph_mcp.payloads import (
    ApprovalHints,
    DeclaredHints,
    EffectiveHints,
    ToolUi,
    tool_ui,
    visible_to_app,
    visible_to_model,
)

PUBLISHED_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_SCHEMA_DEPTH = 64
MAX_SCHEMA_BYTES = 256 * 1024

SPEC_DEFAULTS: EffectiveHints = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
_HINT_FIELDS = {
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}


class ToolDefinition(TypedDict):
    """The parts of a tool's definition a decision is bound to (wire names); any change voids the decision."""

    name: str
    description: str
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any] | None
    annotations: dict[str, Any] | None


def canonical_json(value: Any) -> str:
    """One text per JSON value: keys sorted, no whitespace, UTF-8 kept (what digests and signatures are over).

    A value JSON has no type for is written as its ``str()`` (tool call arguments are JSON in practice)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def definition_hash(tool: McpTool | types.Tool) -> str:
    """The sha256 (hex) of a tool's definition: canonical JSON of its server-side ``name``, ``description``,
    ``inputSchema``, ``outputSchema`` and ``annotations``, as listed.

    An :class:`McpTool` and the ``mcp.types.Tool`` it was built from hash the same. A decision about a call is
    bound to this hash: when the server lists the tool differently (a restart, a redeploy, ``list_changed``),
    the hash changes and the decision no longer applies."""
    if isinstance(tool, McpTool):
        return tool.definition_hash
    annotations = (
        tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
        if tool.annotations is not None
        else None
    )
    definition: ToolDefinition = {
        "name": tool.name,
        "description": tool.description or "",
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": annotations,
    }
    return _sha256(definition)


def args_digest(arguments: Mapping[str, Any] | None) -> str:
    """The sha256 (hex) of the canonical JSON of the arguments actually sent (``None`` counts as ``{}``)."""
    return _sha256(dict(arguments or {}))


@dataclass(frozen=True)
class McpTool:
    """One tool of one server, as listed, with its published name and hints."""

    server: str
    name: str
    """The server's own tool name (what goes on the wire)."""
    published_name: str
    """The name a model calls: ``<server>_<tool>`` by default."""
    title: str | None
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any] | None
    """The annotations exactly as declared (camelCase wire names), ``None`` when the server sent none."""
    meta: dict[str, Any] | None = None
    trusted: bool = True
    """False when the server is configured with ``trust_annotations=False``."""

    @functools.cached_property
    def ui(self) -> ToolUi | None:
        """The tool's MCP Apps ``_meta.ui`` (its ``ui://`` resource, who may call it), or ``None``."""
        return tool_ui(self.meta)

    @functools.cached_property
    def for_model(self) -> bool:
        """Whether a model is offered this tool: every tool but an app-only one (``_meta.ui.visibility`` without
        ``"model"``). A call to an app-only tool still resolves and is judged like any other."""
        return visible_to_model(self.meta)

    @functools.cached_property
    def for_app(self) -> bool:
        """Whether an app may call this tool (``_meta.ui.visibility`` has ``"app"``, or says nothing)."""
        return visible_to_app(self.meta)

    @property
    def declared_hints(self) -> DeclaredHints:
        hints: dict[str, bool] = {}
        for key in _HINT_FIELDS:
            value = (self.annotations or {}).get(key)
            if isinstance(value, bool):
                hints[key] = value
        return cast(DeclaredHints, hints)

    @property
    def effective_hints(self) -> EffectiveHints:
        """Declared hints over the spec defaults. Destructive/idempotent mean nothing for a read-only tool."""
        return cast(EffectiveHints, dict(self._effective))

    @functools.cached_property
    def _effective(self) -> EffectiveHints:
        # Once per listed descriptor: the policy and the tool node read the hints on every call.
        merged = cast(EffectiveHints, {**SPEC_DEFAULTS, **self.declared_hints})
        if merged["readOnlyHint"]:
            merged["destructiveHint"] = False
            merged["idempotentHint"] = True
        return merged

    @property
    def hints(self) -> ApprovalHints:
        return {"effective": self.effective_hints, "declared": self.declared_hints}

    @property
    def read_only(self) -> bool:
        return self._effective["readOnlyHint"]

    @property
    def destructive(self) -> bool:
        return self._effective["destructiveHint"]

    @property
    def idempotent(self) -> bool:
        return self._effective["idempotentHint"]

    @property
    def open_world(self) -> bool:
        return self._effective["openWorldHint"]

    @property
    def retry_safe(self) -> bool:
        """Whether a transport failure may be retried: only read-only or idempotent tools of a trusted server
        (``trust_annotations=False``: its hints decide nothing, so its calls are never sent twice)."""
        return self.trusted and (self.read_only or self.idempotent)

    @functools.cached_property
    def definition(self) -> ToolDefinition:
        """What a human approving a call to this tool is shown of it: see :func:`definition_hash`."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
        }

    @functools.cached_property
    def definition_hash(self) -> str:
        """:func:`definition_hash` of this tool, computed once per listed descriptor."""
        return _sha256(self.definition)

    @property
    def display_name(self) -> str:
        return self.title or (self.annotations or {}).get("title") or self.name

    def hint_source(self, key: str) -> str:
        """How a hint got its effective value, for reasons shown to humans: ``"declared"``, ``"spec default"``,
        or ``"implied by readOnlyHint"`` (a read-only tool is neither destructive nor non-idempotent)."""
        if key in self.declared_hints:
            return "declared"
        if key in ("destructiveHint", "idempotentHint") and self.declared_hints.get("readOnlyHint"):
            return "implied by readOnlyHint"
        return "spec default"


@dataclass(frozen=True)
class SkippedTool:
    """A tool left out of the catalog, and why."""

    server: str
    tool: str
    reason: str

    def __str__(self) -> str:
        return f"{self.server}/{self.tool}: {self.reason}"


@dataclass
class CatalogReport:
    """What discovery left out for the current run: skipped tools, and the servers whose listing failed."""

    skips: Callable[[], list[SkippedTool]] = field(default=list, repr=False)
    """Reads the tools skipped from the current run's listings (set by the listing cache, kept per identity)."""
    failures: Callable[[], dict[str, BaseException]] = field(default=dict, repr=False)
    """Reads the current run's failed listings (set by the listing cache, which keeps them per identity)."""

    @property
    def skipped(self) -> list[SkippedTool]:
        """The tools left out of the listings made with the current run's credentials, and why (another user's
        listing, which may list other tools, never shows here). A snapshot: don't write to it."""
        return self.skips()

    @property
    def failed_servers(self) -> dict[str, BaseException]:
        """Server -> the error of its last listing, for the servers whose last listing with the current run's
        credentials failed (another user's failure, or success, never shows here). A snapshot: don't write to it."""
        return self.failures()


def schema_problem(schema: Any) -> str | None:
    """Why an inputSchema can't be used, or ``None``. Iterative: never recurses, whatever the nesting."""
    if not isinstance(schema, dict):
        return f"inputSchema must be a JSON object, got {type(schema).__name__}"
    if schema.get("type") != "object":
        return f"inputSchema must have type 'object', got {schema.get('type')!r}"
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            return f"inputSchema nests deeper than {MAX_SCHEMA_DEPTH} levels"
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values() if isinstance(child, dict | list))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node if isinstance(child, dict | list))
    size = len(json.dumps(schema, separators=(",", ":")).encode())
    if size > MAX_SCHEMA_BYTES:
        return f"inputSchema is {size // 1024} KiB, over the {MAX_SCHEMA_BYTES // 1024} KiB limit"
    return None


def sanitize_name(name: str) -> str:
    """Map a name onto ``[a-zA-Z0-9_-]``, at most 64 characters."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", name) or "tool"
    return cleaned[:64]


def publish_name(server: str, tool: str, *, prefix: bool, separator: str) -> str:
    return f"{server}{separator}{tool}" if prefix else tool


def build_tool(
    server: str,
    tool: types.Tool,
    *,
    prefix: bool,
    separator: str,
    invalid_names: Literal["skip", "sanitize"],
    trusted: bool,
    taken: set[str],
) -> McpTool | SkippedTool:
    """Turn a listed ``mcp.types.Tool`` into an ``McpTool``, or say why it is skipped."""
    problem = schema_problem(tool.input_schema)
    if problem is not None:
        return SkippedTool(server, tool.name, problem)
    published = publish_name(server, tool.name, prefix=prefix, separator=separator)
    if not PUBLISHED_NAME_PATTERN.match(published):
        if invalid_names == "skip":
            return SkippedTool(
                server,
                tool.name,
                f"published name {published!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$ "
                "(set invalid_names='sanitize' to rename it)",
            )
        base = sanitize_name(published)
        published, n = base, 2
        while published in taken:
            suffix = f"_{n}"
            published, n = base[: 64 - len(suffix)] + suffix, n + 1
    annotations = (
        tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
        if tool.annotations is not None
        else None
    )
    return McpTool(
        server=server,
        name=tool.name,
        published_name=published,
        title=tool.title,
        description=tool.description or "",
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=annotations,
        meta=tool.meta,
        trusted=trusted,
    )


class ServerCatalog:
    """Builds one server's ``McpTool``s from each listing, keeping the ``McpTool`` of every tool listed unchanged.

    An unchanged descriptor (equal ``mcp.types.Tool``) skips the inputSchema guard and keeps its object, so
    whatever was derived from it (the LangChain tool) can be reused. Renamed (sanitised) tools are always rebuilt:
    their published name depends on the other names in the listing.
    """

    def __init__(
        self,
        server: str,
        *,
        prefix: bool,
        separator: str,
        invalid_names: Literal["skip", "sanitize"],
        trusted: bool,
    ) -> None:
        self.server = server
        self._prefix = prefix
        self._separator = separator
        self._invalid_names = invalid_names
        self._trusted = trusted
        self._built: dict[str, tuple[types.Tool, McpTool | SkippedTool]] = {}

    def build(self, raw: list[types.Tool]) -> tuple[list[McpTool], list[SkippedTool]]:
        tools: list[McpTool] = []
        skipped: list[SkippedTool] = []
        published = [
            publish_name(self.server, t.name, prefix=self._prefix, separator=self._separator) for t in raw
        ]
        # Names that are valid as listed come first: a sanitised name must never take one of them.
        taken: set[str] = {name for name in published if PUBLISHED_NAME_PATTERN.match(name)}
        built: dict[str, tuple[types.Tool, McpTool | SkippedTool]] = {}
        for tool, name in zip(raw, published, strict=True):
            known = self._built.get(tool.name)
            result: McpTool | SkippedTool
            if known is not None and known[0] == tool and _reusable(known[1], name):
                result = known[1]
            else:
                result = build_tool(
                    self.server,
                    tool,
                    prefix=self._prefix,
                    separator=self._separator,
                    invalid_names=self._invalid_names,
                    trusted=self._trusted,
                    taken=taken,
                )
            built[tool.name] = (tool, result)
            if isinstance(result, SkippedTool):
                skipped.append(result)
            else:
                taken.add(result.published_name)
                tools.append(result)
        self._built = built
        return tools, skipped


def _reusable(result: McpTool | SkippedTool, published: str) -> bool:
    return isinstance(result, SkippedTool) or result.published_name == published


def check_collisions(tools: Iterable[McpTool]) -> None:
    """Raise if two tools share a published name, naming both servers."""
    seen: dict[str, McpTool] = {}
    for tool in tools:
        other = seen.get(tool.published_name)
        if other is not None:
            raise ToolNameCollisionError(
                f"tool name collision: {tool.published_name!r} is published by server {other.server!r} "
                f"(tool {other.name!r}) and server {tool.server!r} (tool {tool.name!r}); "
                "turn name prefixing on for one of them (prefix=True) or filter its tools"
            )
        seen[tool.published_name] = tool


@dataclass(frozen=True)
class ToolResolution:
    """Which listed tools carry one published name, and which servers that could publish it are unknown.

    ``unknown`` maps a candidate server (see ``NameResolver.candidate_servers``) to why its listing can't be
    trusted right now. The name provably belongs to no MCP server only when both are empty.
    """

    published_name: str
    tools: tuple[McpTool, ...]
    unknown: dict[str, str]
    close_matches: list[str] = field(default_factory=list)
    sign_in: AuthorizationRequiredError | None = None
    """A candidate server that can't be listed until the run's principal signs in (its OAuth sign-in)."""

    def tool(self) -> McpTool:
        """The one tool, or raise: a collision, an owner that could not be established, or no such tool."""
        if len(self.tools) > 1:
            check_collisions(self.tools)
        if self.tools:
            return self.tools[0]
        if self.sign_in is not None:
            raise self.sign_in
        if self.unknown:
            raise ToolOwnerUnknownError(self.published_name, dict(self.unknown))
        raise ToolNotFoundError(self.published_name, self.close_matches)

    def sole_tool(self) -> McpTool:
        """:meth:`tool`, and only while no *other* server that could publish the name is unknown: a call that no
        human will see must not guess its owner (``ToolOwnerUnknownError`` names the unlisted servers). The
        tool's own server unlisted is no doubt about the owner: the call itself then says what is wrong."""
        tool = self.tool()
        if self.unknown:
            others = {server: why for server, why in self.unknown.items() if server != tool.server}
            if others:
                raise ToolOwnerUnknownError(self.published_name, others)
        return tool


def close_matches(name: str, tools: Iterable[McpTool]) -> list[str]:
    """Up to three published names close to ``name`` (for "did you mean" hints)."""
    return difflib.get_close_matches(name, [t.published_name for t in tools if t.for_model], n=3)
