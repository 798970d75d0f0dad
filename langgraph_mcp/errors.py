"""The package's exceptions: one base class to catch, each error naming what was wrong and what to do."""

from __future__ import annotations


class LangGraphMcpError(Exception):
    """Base class of every error raised by ``langgraph_mcp``."""


class ConfigError(LangGraphMcpError, ValueError):
    """A server, policy or CLI configuration is invalid; the message names the server and field."""


class ServerConnectionError(LangGraphMcpError, ConnectionError):
    """An MCP server could not be reached, started, or kept alive."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(f"MCP server {server!r}: {message}")
        self.server = server


class ServerDiscoveryError(ServerConnectionError):
    """Listing a server's tools failed (the server is unreachable, too slow, or sent something unparseable)."""


class ToolNotFoundError(LangGraphMcpError, LookupError):
    """No listed MCP tool has the requested published name."""

    def __init__(self, name: str, close_matches: list[str]) -> None:
        hint = f" Did you mean: {', '.join(close_matches)}?" if close_matches else ""
        super().__init__(f"No MCP tool is published as {name!r}.{hint}")
        self.name = name
        self.close_matches = close_matches


class ToolNameCollisionError(LangGraphMcpError, ValueError):
    """Two tools would be published under the same name."""


class ToolCallTimeoutError(LangGraphMcpError, TimeoutError):
    """A tool call did not finish within its configured timeout."""

    def __init__(self, server: str, tool: str, timeout: float) -> None:
        super().__init__(
            f"MCP tool {tool!r} on server {server!r} did not finish within {timeout:g}s "
            "(raise the server's tool_timeout if it is expected to be slow)."
        )
        self.server = server
        self.tool = tool
        self.timeout = timeout


class EventLoopError(LangGraphMcpError, RuntimeError):
    """``McpServers`` was used in a way its event-loop model does not allow."""


class AnswerError(LangGraphMcpError, ValueError):
    """An elicitation answer does not fit the question it answers; nothing was saved."""

    def __init__(self, message: str, *, key: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.field = field


class DecisionError(LangGraphMcpError, ValueError):
    """An approval decision is not allowed or its edited arguments do not fit the tool; nothing was saved."""


class ResumeError(LangGraphMcpError, ValueError):
    """``resume_command`` was given answers that do not match what is pending."""


class ResourceError(LangGraphMcpError):
    """Listing or reading a server's resources failed; names the server and the URI (``None`` for a listing)."""

    def __init__(self, server: str, uri: str | None, detail: str) -> None:
        where = f"resource {uri!r}" if uri is not None else "resources"
        super().__init__(f"MCP server {server!r}, {where}: {detail}")
        self.server = server
        self.uri = uri
        self.detail = detail


class PromptError(LangGraphMcpError):
    """Listing or rendering a server's prompts failed; names the server and the prompt (``None`` for a listing)."""

    def __init__(self, server: str, prompt: str | None, detail: str) -> None:
        where = f"prompt {prompt!r}" if prompt is not None else "prompts"
        super().__init__(f"MCP server {server!r}, {where}: {detail}")
        self.server = server
        self.prompt = prompt
        self.detail = detail


class IncompatibleDependencyError(LangGraphMcpError, ImportError):
    """An installed dependency changed an internal that langgraph-mcp relies on (see ``langgraph_mcp._compat``)."""

    def __init__(self, dependency: str, version: str, detail: str) -> None:
        super().__init__(f"{dependency} {version} {detail}")
        self.dependency = dependency
        self.version = version
        self.detail = detail


class ToolOwnerUnknownError(LangGraphMcpError, LookupError):
    """No listed tool has the name, but a server that could publish it has no usable listing (failed, missing
    or stale and not refreshable), so it cannot be ruled out: the call's owner is unknown."""

    def __init__(self, name: str, servers: dict[str, str]) -> None:
        why = "; ".join(f"{server!r}: {detail}" for server, detail in servers.items())
        super().__init__(
            f"Could not establish which MCP server publishes {name!r}: the tools of server(s) that may "
            f"publish it could not be listed ({why}). Retry once the server is reachable."
        )
        self.name = name
        self.servers = servers


class CredentialError(LangGraphMcpError):
    """A server's per-run credentials could not be resolved for this run (a ``configurable`` key is missing, or
    a ``credentials`` callable failed); nothing was sent. Names the server."""

    def __init__(self, server: str, detail: str) -> None:
        super().__init__(f"MCP server {server!r}: {detail}")
        self.server = server
        self.detail = detail
