"""LangChain ``StructuredTool``s over MCP tools, for ``create_agent`` and ``ToolNode`` users.

Converted tools are cached per ``McpTool``: while a server lists a tool unchanged, ``get_tools()`` hands back
the same ``StructuredTool`` object (rebuilding every tool on every call was nearly all of its time).

They share the connection layer and the call driver with ``McpToolNode``: inside a graph (with a checkpointer) a
server's question pauses the run with the same ``mcp_elicitation`` interrupt. An ``isError`` result raises a
``ToolException`` carrying the result when the tool is invoked directly; inside a LangGraph tool node it becomes an
error ToolMessage.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForToolRun
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_core.tools.base import TOOL_MESSAGE_BLOCK_TYPES
from langgraph.config import get_config
from pydantic import PrivateAttr

from langgraph_mcp._compat import in_graph_task, tool_output_writer
from langgraph_mcp.calls.asker import InterruptAsker
from langgraph_mcp.calls.call import CallTarget
from langgraph_mcp.calls.interceptors import ToolCallInterceptor, as_call_result, call_intercepted
from langgraph_mcp.calls.observers import CallStream, judgement, listening
from langgraph_mcp.calls.results import convert_result
from langgraph_mcp.catalog import McpTool, ToolResolution
from langgraph_mcp.errors import CredentialError, LangGraphMcpError, ToolOwnerUnknownError

if TYPE_CHECKING:
    from mcp.types import CallToolResult

T = TypeVar("T")


class ToolNames(Protocol):
    """Who publishes a name (a :class:`~langgraph_mcp.servers.names.NameResolver`)."""

    async def resolve(self, published_name: str) -> ToolResolution: ...


class ToolHost(Protocol):
    """What a LangChain tool needs of ``McpServers`` (its :class:`~langgraph_mcp.servers.access.ServerAccess`):
    who publishes a name, where a call goes, the interceptors, the sync bridge."""

    interceptors: Sequence[ToolCallInterceptor]

    @property
    def names(self) -> ToolNames: ...

    def call_target(self, tool: McpTool) -> CallTarget: ...

    def run_metadata(self, server: str) -> dict[str, Any]: ...

    def run_sync(
        self, make: Callable[[], Coroutine[Any, Any, T]], *, context: contextvars.Context | None = None
    ) -> T: ...


class McpToolError(LangGraphMcpError, ToolException):
    """An MCP tool returned ``isError``; ``result`` is the server's ``CallToolResult``."""

    def __init__(self, message: str, result: CallToolResult) -> None:
        super().__init__(message)
        self.result = result


def _in_graph() -> bool:
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return False
    return in_graph_task(configurable)


def _handle_error(error: ToolException) -> str:
    # Inside a graph the model should read the server's error; invoked directly, the caller gets the exception.
    if not _in_graph():
        raise error
    return str(error)


def _tool_message_safe(
    content: list[dict[str, Any]], artifact: list[dict[str, Any]] | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """Move blocks a LangChain tool may not return (audio, for one) into the artifact, leaving a note.

    ``StructuredTool`` turns the *whole* content list into a JSON string when any block's type is outside
    ``langchain_core.tools.base.TOOL_MESSAGE_BLOCK_TYPES``; ``McpToolNode`` builds its own ToolMessage and keeps them.
    """
    kept: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") in TOOL_MESSAGE_BLOCK_TYPES:
            kept.append(block)
        else:
            moved.append({"type": "mcp_content", "block": block})
            mime = block.get("mime_type")
            kept.append(
                {
                    "type": "text",
                    "text": f"[{block.get('type')} content{f' ({mime})' if mime else ''}: in the artifact]",
                }
            )
    if not moved:
        return content, artifact
    return kept, moved + list(artifact or [])


def make_langchain_tools(servers: ToolHost, tools: list[McpTool]) -> list[BaseTool]:
    """One new ``StructuredTool`` per MCP tool, named by its published name (no cache: see ``LangChainTools``)."""
    return [_make_tool(servers, tool) for tool in tools]


class LangChainTools:
    """The LangChain tools of one ``McpServers``, rebuilt only for tools whose descriptor changed.

    Keyed by published name; an entry is reused while its ``McpTool`` is the same object (the catalog keeps the
    object of a tool listed unchanged) or an equal one, so a re-listing after ``tools/list_changed`` or a TTL
    rebuilds only what the server changed.
    """

    def __init__(self, host: ToolHost) -> None:
        self._host = host
        self._by_server: dict[str, dict[str, tuple[McpTool, BaseTool]]] = {}

    def convert(self, tools: list[McpTool]) -> list[BaseTool]:
        rebuilt: dict[str, dict[str, tuple[McpTool, BaseTool]]] = {}
        out: list[BaseTool] = []
        for tool in tools:
            known = self._by_server.get(tool.server, {}).get(tool.published_name)
            if known is not None and (known[0] is tool or known[0] == tool):
                entry = known
            else:
                entry = (tool, _make_tool(self._host, tool))
            rebuilt.setdefault(tool.server, {})[tool.published_name] = entry
            out.append(entry[1])
        # Only the servers in this listing are replaced: a subset or a failed server keeps the others' entries.
        self._by_server.update(rebuilt)
        return out


def _make_tool(servers: ToolHost, tool: McpTool) -> BaseTool:
    async def run(**arguments: Any) -> tuple[Any, Any]:
        call_id = ""
        asker: InterruptAsker | None = None
        if _in_graph():
            call_id = _current_tool_call_id()
            asker = InterruptAsker(call_id)
        # Never guess between servers: if the name has come to be published twice, or a server that could publish
        # it can't be listed now, refuse (``sole_tool()`` raises).
        resolution = await servers.names.resolve(tool.published_name)
        if len(resolution.tools) > 1 or any(server != tool.server for server in resolution.unknown):
            try:
                resolution.sole_tool()
            except ToolOwnerUnknownError as exc:  # an error for this call (nothing was sent), not for the run
                raise ToolException(str(exc)) from exc
        # The tool run BaseTool opened for this call: under stream_mode="tools" progress is its output delta too.
        stream = CallStream(call_id, tool.server, tool.name, output_delta=tool_output_writer())
        try:
            with stream.open():
                target = servers.call_target(tool)
                result = await call_intercepted(
                    servers.interceptors,
                    target,
                    arguments,
                    tool_call_id=call_id,
                    asker=asker,
                    progress=stream.progress,
                )
        except CredentialError as exc:  # this run lacks credentials: an error for this call, not for the run
            raise ToolException(str(exc)) from exc
        if isinstance(result, ToolMessage):  # an interceptor answered
            if result.status == "error":
                raise McpToolError(result.text, as_call_result(result))
            return result.content, result.artifact
        converted = convert_result(result, target.routing)
        if converted.status == "error":
            raise McpToolError(converted.text or f"MCP tool {tool.published_name!r} failed", result)
        return _tool_message_safe(converted.content, converted.artifact)

    def run_sync(**arguments: Any) -> tuple[Any, Any]:
        return servers.run_sync(lambda: run(**arguments))

    _cheap_to_inspect(run)
    _cheap_to_inspect(run_sync)

    made = McpStructuredTool(
        name=tool.published_name,
        description=tool.description or tool.display_name,
        args_schema=tool.input_schema,
        coroutine=run,
        func=run_sync,
        response_format="content_and_artifact",
        handle_tool_error=_handle_error,
        metadata={
            "annotations": tool.annotations,
            "hints": tool.effective_hints,
            "declared_hints": tool.declared_hints,
            "server": tool.server,
            "mcp_tool": tool.name,
            "trusted": tool.trusted,
            "mcp_definition_hash": tool.definition_hash,
        },
    )
    made._run_metadata = lambda: servers.run_metadata(tool.server)
    return made


_TOOL_CALL_ID: contextvars.ContextVar[str] = contextvars.ContextVar("langgraph_mcp_tool_call_id", default="")


def _current_tool_call_id() -> str:
    return _TOOL_CALL_ID.get()


def _call_id_of(value: Any) -> str:
    if isinstance(value, dict) and value.get("type") == "tool_call":
        return str(value.get("id") or "")
    return ""


def _cheap_to_inspect(func: Callable[..., Any], **hints: Any) -> None:
    """Make ``func`` cheap for langchain-core, which reads its signature and type hints on every tool call.

    Under ``from __future__ import annotations`` its hints are strings that ``get_type_hints`` evaluates each
    time (~15-30 µs per call per function); evaluated hints and a stored ``__signature__`` make both lookups
    close to free. ``hints`` are the parameters langchain-core looks for (``config``).
    """
    func.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    func.__annotations__ = dict(hints)


class McpStructuredTool(StructuredTool):
    """A ``StructuredTool`` that remembers which tool call it runs (interrupt payloads carry the call's id).

    When a callback handler listens, its tool run also carries the call's id and what is known of the server
    right now (transport, era: see :mod:`langgraph_mcp.calls.observers`), besides the tool's static metadata."""

    _run_metadata: Callable[[], dict[str, Any]] | None = PrivateAttr(default=None)

    def _traced(self, input: Any, config: RunnableConfig | None) -> RunnableConfig | None:
        if self._run_metadata is None or not listening(config):
            return config
        extra = {"tool_call_id": _call_id_of(input), **self._run_metadata(), **(judgement() or {})}
        return {**(config or {}), "metadata": {**((config or {}).get("metadata") or {}), **extra}}

    async def _arun(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        return await super()._arun(*args, config=config, run_manager=run_manager, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        token = _TOOL_CALL_ID.set(_call_id_of(input))
        try:
            return await super().ainvoke(input, self._traced(input, config), **kwargs)
        finally:
            _TOOL_CALL_ID.reset(token)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        token = _TOOL_CALL_ID.set(_call_id_of(input))
        try:
            return super().invoke(input, self._traced(input, config), **kwargs)
        finally:
            _TOOL_CALL_ID.reset(token)


# BaseTool.arun inspects ``_arun`` on every call to find its RunnableConfig parameter: give it a plain hint.
_cheap_to_inspect(McpStructuredTool._arun, config=RunnableConfig)
