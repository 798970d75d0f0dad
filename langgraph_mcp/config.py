"""Server configuration: every server by name (each a transport's model: stdio, streamable HTTP, SSE, in-process,
see :mod:`langgraph_mcp.transports`) and the options that span servers.

Accepts the common ``{"mcpServers": {name: {...}}}`` JSON shape, a plain ``{name: {...}}`` dict, or model
instances. A bad entry raises :class:`~langgraph_mcp.errors.ConfigError` naming the server and the field.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from langgraph_mcp.errors import ConfigError, problems
from langgraph_mcp.transports.base import (
    TRANSPORTS,
    OutputRouting,
    ProtocolMode,
    Route,
    ServerSpec,
    Transport,
    transport_of,
)
from langgraph_mcp.transports.http import CredentialsFactory, HttpServer, OAuthOptions
from langgraph_mcp.transports.in_process import InProcessServer
from langgraph_mcp.transports.sse import SseServer
from langgraph_mcp.transports.stdio import StdioServer

__all__ = [
    "SERVER_NAME_PATTERN",
    "CredentialsFactory",
    "HttpServer",
    "InProcessServer",
    "McpServersConfig",
    "OAuthOptions",
    "OutputRouting",
    "ProtocolMode",
    "Route",
    "ServerSpec",
    "SseServer",
    "StdioServer",
    "Transport",
]

SERVER_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class McpServersConfig(BaseModel):
    """Every server plus the options that span servers."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    servers: dict[str, ServerSpec]
    """Each server by name (``mcpServers`` in a file); the name prefixes its tools' published names."""
    output: OutputRouting = OutputRouting()
    """Default output routing; a server's own ``output`` wins."""
    separator: str = Field("_", pattern=r"^[A-Za-z0-9_-]{0,8}$")
    """Between server and tool name in published names."""
    invalid_names: Literal["skip", "sanitize"] = "skip"
    """Tool names that model providers would refuse: skip (and report) them, or rename them."""
    approval_key: SecretStr | None = Field(default=None, exclude=True)
    """The secret decisions are signed with (HMAC-SHA256), so that the tool node of any worker can tell a
    decision taken by this graph from state a client wrote. Default: the ``LANGGRAPH_MCP_APPROVAL_KEY``
    environment variable, else a random key of this process (a decision then proves itself only in the process
    that took it: set one key on every worker of a deployment). It also keys the hash of what a decision is bound
to for each server (its URL and headers, its command line, working directory and environment): those values are
never kept in clear, and a new key, like a changed value, asks again about what was remembered."""

    @field_validator("servers")
    @classmethod
    def _check_names(cls, value: dict[str, ServerSpec]) -> dict[str, ServerSpec]:
        for name in value:
            if not SERVER_NAME_PATTERN.match(name):
                raise ValueError(
                    f"server name {name!r} must be 1-64 letters, digits, '_' or '-' (it prefixes tool names)"
                )
        return value

    def routing_for(self, server: str) -> OutputRouting:
        return self.servers[server].output or self.output

    @classmethod
    def load(cls, source: McpServersConfig | Mapping[str, Any] | str | Path) -> McpServersConfig:
        """Build a config from a model, a dict (``mcpServers`` shape or plain) or a JSON file path."""
        if isinstance(source, McpServersConfig):
            return source
        if isinstance(source, str | Path):
            path = Path(source)
            try:
                data = json.loads(path.read_text())
            except OSError as exc:
                raise ConfigError(f"cannot read server config {str(path)!r}: {exc.strerror}") from exc
            except json.JSONDecodeError as exc:
                raise ConfigError(f"server config {str(path)!r} is not valid JSON: {exc}") from exc
            if not isinstance(data, dict):
                raise ConfigError(
                    f'server config {str(path)!r} must be a JSON object ({{"mcpServers": {{...}}}}), '
                    f"got {type(data).__name__}"
                )
            return cls.load(data)
        data = dict(source)
        if "mcpServers" in data:
            top = {k: v for k, v in data.items() if k != "mcpServers"}
            data = {"servers": data["mcpServers"], **top}
        elif "servers" not in data:
            data = {"servers": data}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, data.get("servers"))) from exc


def _did_you_mean(entry: object, key: str | None = None) -> str:
    """`` (did you mean 'command'?)`` for a misspelt key of a server entry (``key``, or any key of it), or ``""``."""
    if not isinstance(entry, Mapping):
        return ""
    transport = transport_of(dict(entry))
    models = [TRANSPORTS[transport]] if transport in TRANSPORTS else list(TRANSPORTS.values())
    known = sorted({"transport", "type"}.union(*(model.model_fields for model in models)))
    hints = []
    for unknown in [key] if key is not None else [k for k in entry if k not in known]:
        close = difflib.get_close_matches(str(unknown), known, n=1, cutoff=0.75)
        if close and close[0] not in entry:
            hints.append(
                f"{unknown!r}: did you mean {close[0]!r}?" if key is None else f"did you mean {close[0]!r}?"
            )
    return f" ({'; '.join(hints)})" if hints else ""


def _describe(exc: ValidationError, servers: object = None) -> str:
    entries = servers if isinstance(servers, Mapping) else {}
    lines = []
    for problem in problems(exc):
        loc = [str(part) for part in problem.location]
        hint = ""
        if len(loc) >= 2 and loc[0] == "servers":
            fields = loc[2:]
            where = f"server {loc[1]!r}" + (f", field {'.'.join(fields)!r}" if fields else "")
            entry = entries.get(loc[1])
            if not fields:  # the transport could not be told: a misspelt command/url/transport?
                hint = _did_you_mean(entry)
            elif len(fields) == 1 and problem.message.startswith("Extra inputs are not permitted"):
                hint = _did_you_mean(entry, fields[0])
        else:
            where = f"field {'.'.join(loc)!r}" if loc else "config"
        lines.append(f"{where}: {problem.message}{hint}")
    return "invalid MCP server config:\n  " + "\n  ".join(lines)
