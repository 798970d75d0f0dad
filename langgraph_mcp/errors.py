"""The one error vocabulary: every exception the package raises, and one reading of pydantic errors.

The package's exceptions: one base class to catch, each error naming what was wrong and what to do.

The tree (every exception the package raises is one of these)::

    LangGraphMcpError
    ├── ConfigError (ValueError)               a server, policy or CLI configuration is invalid
    │   ├── AnswersFileError                   the CLI's ``--answers`` file is unreadable or does not fit
    │   ├── PolicyError (TypeError)            an approval predicate returned something that is not a verdict
    │   ├── TransportError (TypeError)         a transport class cannot be registered (no binding(), a taken tag)
    │   └── InterceptorError (TypeError)       a tool-call interceptor returned something that is not a result
    ├── ServerError                            something about one MCP server (fields: server, tool, detail)
    │   ├── ServerConnectionError (ConnectionError)   the server could not be reached, started or kept alive
    │   │   ├── ServerDiscoveryError           listing its tools failed (or its pagination never ended)
    │   │   ├── ServerUnavailableError         it failed recently and waits out its reconnect backoff
    │   │   ├── CallNotSentError               the request never reached a live session: it was not run
    │   │   │   └── ToolChangedError           the server restarted or relisted the tool before the call was sent
    │   │   └── CallInterruptedError           the connection was lost during a call: it may or may not have run
    │   ├── InvalidResponseError               it sent something that is not a valid MCP message
    │   ├── ResultTooLargeError                a result was larger than ``max_result_bytes``
    │   ├── ResourceError                      listing or reading its resources failed (field: uri)
    │   ├── PromptError                        listing or rendering its prompts failed (field: prompt)
    │   ├── CredentialError                    its per-run credentials could not be resolved; nothing was sent
    │   ├── AuthorizationRequiredError         the current principal must sign in (OAuth) before anything is sent
    │   │   └── SignInRequiredError            ... met by a listing outside the tool node and the gate: how to sign in
    │   ├── ElicitationUnavailableError        a tool asked for input where nobody can answer (no graph)
    │   ├── TooManyRoundsError                 a tool kept asking past ``max_elicitation_rounds``
    │   ├── LostAttemptError                   an earlier run sent the call and ended before its answer was kept
    │   ├── TooManyParkedCallsError            a legacy call asked while ``max_parked_calls`` calls already wait
    │   ├── ParkedCallNotReissuedError         a parked legacy call's first attempt may still complete: not re-sent
    │   ├── RequestStateRefusedError           a 2026-07-28 server refused a round's state (field: answers)
    │   ├── UnsupportedRequestError            it asked the client for something it does not serve (sampling)
    │   ├── SamplingRefusedError               its sampling request was refused (policy, cap, or a human)
    │   ├── ToolCallTimeoutError (TimeoutError)   a call did not finish within ``tool_timeout``
    │   └── RequestTimeoutError (TimeoutError)    another request (a listing, a read, a ping) got no answer in time
    ├── ToolNotFoundError (LookupError)        no listed tool has the requested published name
    ├── ToolOwnerUnknownError (LookupError)    ... and a server that may publish it could not be listed (why)
    ├── ToolNameCollisionError (ValueError)    two tools would be published under the same name
    ├── NoCheckpointerError                    a tool asked for input, but the graph cannot pause (field: tool)
    ├── EventLoopError (RuntimeError)          ``McpServers`` was used in a way that would deadlock
    │   └── ServersClosedError                 a closed ``McpServers`` was used again (raised to the caller)
    ├── AnswerError (ValueError)               an elicitation answer does not fit its question (fields: key, field, detail)
    ├── AnswerRefusedError (RuntimeError)     ... said for a person (Agent Chat UI): words only (fields: problems, error)
    ├── DecisionError (ValueError)             an approval decision is not allowed
    ├── SchemaTooComplexError (ValueError)     a server's schema, or a value checked against it, is too deep to check
    ├── ResumeError (ValueError)               ``resume_command`` got answers that do not match what is pending
    │   └── ResumeTypeError (TypeError)        given something that is not interrupts, or read as the other kind
    ├── CliError                               the ``langgraph-mcp`` CLI stops with one message (field: code)
    └── IncompatibleDependencyError (ImportError)   an installed dependency moved an internal we rely on

Code never parses an error's text: read ``server``, ``tool`` and ``detail`` instead.

One exception lives elsewhere: ``langgraph_mcp.calls.tools.McpToolError`` (a ``LangGraphMcpError`` and LangChain's
``ToolException``, raised by the LangChain tools for an ``isError`` result) is defined next to those tools, so
this module imports nothing from LangChain. ``langgraph_mcp.connection.oauth.RefreshFirst`` (a
``LangGraphMcpError``) is control flow inside one connection's start and never reaches a caller.

Pydantic ``ValidationError``s read as (location, message) pairs: one reading for config and policy errors.

Pydantic puts a tagged union's tag into an error's location (``servers.fs.stdio.command``) and prefixes a
validator's own ``ValueError`` with ``"Value error, "``; neither means anything to the person who wrote the file.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from pydantic import ValidationError


class LangGraphMcpError(Exception):
    """Base class of every error raised by ``langgraph_mcp``."""


class ConfigError(LangGraphMcpError, ValueError):
    """A server, policy or CLI configuration is invalid; the message names the server and field."""


class ServerError(LangGraphMcpError):
    """Something went wrong with one MCP server. The message is ``MCP server '<server>': <detail>``."""

    def __init__(
        self, server: str, detail: str, *, tool: str | None = None, message: str | None = None
    ) -> None:
        super().__init__(message or f"MCP server {server!r}: {detail}")
        self.server = server
        """The configured server name."""
        self.tool = tool
        """The server's own tool name, when the error belongs to one call."""
        self.detail = detail
        """What went wrong, without the server prefix."""


class ServerConnectionError(ServerError, ConnectionError):
    """An MCP server could not be reached, started, or kept alive."""


class ServerDiscoveryError(ServerConnectionError):
    """Listing a server's tools failed (the server is unreachable, too slow, or sent something unparseable)."""


class ServerUnavailableError(ServerConnectionError):
    """The server failed recently and is not retried until its reconnect backoff has passed."""

    def __init__(self, server: str, detail: str, *, retry_in: float, tool: str | None = None) -> None:
        super().__init__(server, detail, tool=tool)
        self.retry_in = retry_in
        """Seconds until the next connection attempt."""


class CallNotSentError(ServerConnectionError):
    """The request never reached a live session (the server had forgotten it, or the connection died first): it
    was not run, so it is safe to send again whatever the tool does."""


class ToolChangedError(CallNotSentError):
    """Right before sending, the tool was no longer what the server lists (it restarted as a new process or
    session, or its listing expired and says otherwise): the call was not sent, since it was judged on the old
    definition. The tool node lists it again and judges the call again."""


class CallInterruptedError(ServerConnectionError):
    """The connection was lost while a call was in flight: the server may or may not have run it."""


class InvalidResponseError(ServerError):
    """The server sent a message that is not valid JSON-RPC / MCP (the request it answered fails at once)."""


class ResultTooLargeError(ServerError):
    """A response was larger than the server's ``max_result_bytes``."""

    def __init__(self, server: str, size: int | None, limit: int, *, tool: str | None = None) -> None:
        measured = f"{size} bytes" if size is not None else f"more than {limit} bytes"
        super().__init__(
            server, f"result too large ({measured}, limit {limit}; raise `max_result_bytes`)", tool=tool
        )
        self.size = size
        self.limit = limit


class ToolCallTimeoutError(ServerError, TimeoutError):
    """A tool call did not finish within its configured timeout."""

    def __init__(self, server: str, tool: str, timeout: float) -> None:
        detail = f"did not finish within {timeout:g}s (raise the server's tool_timeout if it is expected to be slow)."
        super().__init__(
            server, detail, tool=tool, message=f"MCP tool {tool!r} on server {server!r} {detail}"
        )
        self.timeout = timeout


class RequestTimeoutError(ServerError, TimeoutError):
    """A request other than a tool call (a listing, a resource read, a ping) got no answer within its timeout."""

    def __init__(self, server: str, what: str, timeout: float) -> None:
        super().__init__(server, f"{what} got no answer within {timeout:g}s")
        self.what = what
        """The request that timed out (``"tools/list"``, ``"a request"``)."""
        self.timeout = timeout


class ToolNotFoundError(LangGraphMcpError, LookupError):
    """No listed MCP tool has the requested published name."""

    def __init__(self, name: str, close_matches: list[str], *, message: str | None = None) -> None:
        hint = f" Did you mean: {', '.join(close_matches)}?" if close_matches else ""
        super().__init__(message or f"No MCP tool is published as {name!r}.{hint}")
        self.name = name
        self.close_matches = close_matches


class ToolNameCollisionError(LangGraphMcpError, ValueError):
    """Two tools would be published under the same name."""


class EventLoopError(LangGraphMcpError, RuntimeError):
    """``McpServers`` was used in a way its event-loop model does not allow (it would deadlock), or after it was
    closed."""


class ServersClosedError(EventLoopError):
    """A closed ``McpServers`` was used again: a mistake in the program, so it is raised to the caller - never
    turned into an error ``ToolMessage`` for the model, nor into an approval question."""

    def __init__(self) -> None:
        super().__init__("McpServers was closed; create a new one (a closed McpServers can't be used again)")


class AnswerError(LangGraphMcpError, ValueError):
    """An elicitation answer does not fit the question it answers; nothing was saved."""

    def __init__(
        self, message: str, *, key: str | None = None, field: str | None = None, detail: str | None = None
    ) -> None:
        super().__init__(message)
        self.key = key
        """The request key of the answer, when one answer is at fault."""
        self.field = field
        """The first form field at fault, when there is one."""
        self.detail = detail if detail is not None else message
        """What is wrong, without the ``answer for '<key>': `` prefix."""


class AnswerRefusedError(LangGraphMcpError, RuntimeError):
    """An answer given on an Agent Chat UI card was refused (a form's answer, a sampling card's edit of an argument
    that is shown only, or an approval card's decision); its text is what the person reads (nothing was saved).

    Words only, naming each field by its title (``Age: 'abc' is not a whole number between 18 and 120``) or, on an
    approval card, the call and the argument (the :class:`DecisionError`'s text), because the LangGraph API server
    shows a failed run's error as its text. A ``RuntimeError``, not a ``ValueError``, on
    purpose: pydantic would wrap a ``ValueError`` in a ``ValidationError``, whose text frames it in model and
    error-type names, and the LangGraph API server replaces the text of exceptions outside a few builtin kinds with
    "An internal error occurred". LangGraph still reads it as a refused resume value
    (``langgraph.errors.is_invalid_resume``): the same interrupt stays pending.
    """

    def __init__(
        self, message: str, *, problems: list[tuple[str | None, str]], error: AnswerError | DecisionError
    ) -> None:
        super().__init__(message)
        self.problems = problems
        """``(field name or None, what is wrong in words)`` per problem, in the form's order."""
        self.error = error
        """What refused it: the :class:`AnswerError` of a form or sampling card (request key, first field, detail),
        or the :class:`DecisionError` of an approval card (the same error a plain decision gets)."""


class DecisionError(LangGraphMcpError, ValueError):
    """An approval decision is not allowed or its edited arguments do not fit the tool; nothing was saved."""


class ResumeError(LangGraphMcpError, ValueError):
    """``resume_command`` was given answers that do not match what is pending."""


class ResumeTypeError(ResumeError, TypeError):
    """``pending_interrupts`` was given something that is not interrupts, or a ``PendingMcpInterrupt`` was read as
    the other kind (``.approval`` of an elicitation). A ``TypeError`` too, as it was before it had a name."""


class SchemaTooComplexError(LangGraphMcpError, ValueError):
    """A server's schema, or a value checked against it, cannot be checked at bounded cost (a ``$ref`` cycle, or
    nesting deeper than the limit); callers report it as their own error (e.g. ``DecisionError``)."""


class PolicyError(ConfigError, TypeError):
    """An approval predicate returned something that is not a verdict; the message names the rule and what it
    returned. A ``TypeError`` too, as it was before it had a name."""


class TransportError(ConfigError, TypeError):
    """A transport class cannot be registered: it is not a ``Transport``, leaves out one of its abstract methods
    (``binding()``: what a decision about its server binds to, above all), or takes another transport's tag."""


class InterceptorError(ConfigError, TypeError):
    """A tool-call interceptor returned something that is not a ``CallToolResult`` or a ``ToolMessage``; the
    message names the interceptor, what it returned, and whether the tool ran (field: ``tool_ran``)."""

    def __init__(self, message: str, *, tool_ran: bool) -> None:
        super().__init__(message)
        self.tool_ran = tool_ran
        """The handler returned the server's result before the interceptor lost it: the call ran."""


class AnswersFileError(ConfigError):
    """The CLI's ``--answers`` file cannot be read, or an answer in it does not fit its question."""


class CliError(LangGraphMcpError):
    """A failure the ``langgraph-mcp`` CLI reports as one clear message and an exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code
        """The process exit code (default 2, ``EXIT_USAGE`` in :mod:`langgraph_mcp.cli.runner`)."""


class ResourceError(ServerError):
    """Listing or reading a server's resources failed; names the server and the URI (``None`` for a listing)."""

    def __init__(self, server: str, uri: str | None, detail: str) -> None:
        where = f"resource {uri!r}" if uri is not None else "resources"
        super().__init__(server, detail, message=f"MCP server {server!r}, {where}: {detail}")
        self.uri = uri


class PromptError(ServerError):
    """Listing or rendering a server's prompts failed; names the server and the prompt (``None`` for a listing)."""

    def __init__(self, server: str, prompt: str | None, detail: str) -> None:
        where = f"prompt {prompt!r}" if prompt is not None else "prompts"
        super().__init__(server, detail, message=f"MCP server {server!r}, {where}: {detail}")
        self.prompt = prompt


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


class CredentialError(ServerError):
    """A server's per-run credentials could not be resolved for this run (a ``configurable`` key is missing, or
    a ``credentials`` callable failed); nothing was sent. Names the server."""


class AuthorizationRequiredError(ServerError):
    """An OAuth-protected server needs the current principal to sign in; nothing was sent to it.

    In a graph the call pauses with an ``mcp_authorization`` interrupt instead; outside one, open
    ``authorization_url`` and hand the URL the browser lands on to ``McpServers.complete_sign_in``."""

    def __init__(self, server: str, *, principal: str, authorization_url: str, scopes: list[str]) -> None:
        super().__init__(
            server,
            f"{principal!r} must sign in first: open the authorization URL, then resume with the address the "
            "browser is sent to",
        )
        self.principal = principal
        """Whose sign-in it is."""
        self.authorization_url = authorization_url
        """Where the person signs in (holds the sign-in's ``state``, never a token)."""
        self.scopes = scopes
        """The scopes it asks for."""


class SignInRequiredError(AuthorizationRequiredError):
    """:meth:`McpServers.list_tools` / ``get_tools()`` (e.g. in a model node, outside the tool node and the approval
    gate, which ask the person with a sign-in card instead) met a server that needs the principal to sign in:
    the error names the server and says how to sign in. Nothing was sent to the server."""

    def __init__(self, server: str, *, principal: str, authorization_url: str, scopes: list[str]) -> None:
        super().__init__(server, principal=principal, authorization_url=authorization_url, scopes=scopes)
        self.detail = (
            f"{principal!r} must sign in before its tools can be listed here. Either let a call of one of its "
            "tools reach McpToolNode or the approval gate, which pause the run with a sign-in card; or open "
            f"{authorization_url} and pass the address the browser is sent to "
            f"to McpServers.complete_sign_in({server!r}, <address>, config=<this run's config>)"
        )
        self.args = (f"MCP server {server!r}: {self.detail}",)

    @classmethod
    def of(cls, needed: AuthorizationRequiredError) -> SignInRequiredError:
        return cls(
            needed.server,
            principal=needed.principal,
            authorization_url=needed.authorization_url,
            scopes=list(needed.scopes),
        )


class ElicitationUnavailableError(ServerError):
    """A tool asked for input where nobody can answer (a plain ``call_tool`` outside a graph)."""


class LostAttemptError(ServerError):
    """An earlier run sent this call's ``tools/call`` (or was about to) and ended before what the server answered
    reached the checkpoint: a task it created may be running, and sending again could start a second one. The call
    is not sent again (see :mod:`langgraph_mcp.calls.tasks`)."""


class TooManyRoundsError(ServerError):
    """A tool kept asking past its server's ``max_elicitation_rounds``; the call was stopped."""


class TooManyParkedCallsError(ServerError):
    """A legacy call asked a question while ``max_parked_calls`` calls of its connection already wait for a
    human, and its tool may not safely run twice: it was cancelled instead of paused (never replayed)."""


class ParkedCallNotReissuedError(ServerError):
    """A parked legacy call could not be continued (past ``max_parked_calls``, past its ``park_timeout``, or
    resumed where it is not parked), and its first attempt may still complete on the server: it is not sent again,
    since its tool is not declared read-only or idempotent by a trusted server (see
    :func:`langgraph_mcp.calls.paused.may_reissue`)."""


class RequestStateRefusedError(ServerError):
    """A 2026-07-28 server refused the ``requestState`` of a round of questions (``-32602``): replicas without a
    shared requestState key, a server restart, or an expired state, which a client cannot tell apart. The answers
    the person gave are kept (``answers``: request key -> answer, secret fields left out)."""

    def __init__(
        self, server: str, detail: str, *, tool: str | None = None, answers: dict[str, object]
    ) -> None:
        super().__init__(server, detail, tool=tool)
        self.answers = answers
        """The answers given for the call's questions, by request key (the fields a form marks sensitive left
        out), for the error ``ToolMessage``'s artifact, so they can be given again."""


class UnsupportedRequestError(ServerError):
    """A server asked the client for something it does not serve (sampling, or roots without a ``roots``
    option)."""


class SamplingRefusedError(ServerError):
    """A server's sampling request was refused (its ``sampling_policy``, a cap, or a human's rejection) where the
    refusal can't be sent to the server (2026-07-28), or nobody could review it: the call ends with this error."""


class NoCheckpointerError(LangGraphMcpError):
    """A tool asked for input, but the graph has no checkpointer, so it cannot pause."""

    def __init__(self, tool: str, detail: str) -> None:
        super().__init__(detail)
        self.tool = tool
        """The published tool name."""
        self.detail = detail


class Problem(NamedTuple):
    """One invalid value: where it is (keys and list indexes, union tags dropped) and what is wrong."""

    location: tuple[str | int, ...]
    message: str


def problems(exc: ValidationError, *, tags: Collection[str] = (), at: int = 2) -> list[Problem]:
    """Every error of ``exc``; a location part at index ``at`` that is one of ``tags`` is left out.

    ``tags`` are the discriminator tags of a tagged union that is the value type of a dict field, so the tag
    sits right after the dict key (``servers.<name>.<tag>.command``: ``at=2``). Parts elsewhere (a server or a
    tool pattern that happens to be called like a tag) are kept.
    """
    out = []
    for error in exc.errors():
        location = tuple(
            part
            for i, part in enumerate(error["loc"])
            if not (i == at and isinstance(part, str) and part in tags)
        )
        out.append(Problem(location, error["msg"].removeprefix("Value error, ")))
    return out
