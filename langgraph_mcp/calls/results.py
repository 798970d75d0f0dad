"""Convert an MCP ``CallToolResult`` into the content, artifact and status of a LangChain ``ToolMessage``.

Every MCP content block becomes a LangChain standard content block built with the factories in
:mod:`langchain_core.messages.content`:

* ``text`` → text block.
* ``image`` / ``audio`` → image / audio block (``base64`` + ``mime_type``).
* embedded resource with text → text block; ``extras`` carries ``uri`` (and ``mime_type`` when given).
* embedded resource with a blob → image, audio or file block chosen by mime type (``base64``; a missing mime
  type counts as ``application/octet-stream``); ``extras`` carries ``uri`` (file blocks also ``filename``).
* ``resource_link`` → file block with ``url`` = the link's URI; ``extras`` carries ``name``, ``title``,
  ``description`` and ``size`` when given. Nothing is ever fetched.

The random ``id`` the factories add is dropped: it is not part of any provider's wire format (strict
providers reject it inside tool results) and it would make identical results differ.

The artifact is a list of entries: a block whose kind :class:`~langgraph_mcp.config.OutputRouting` sends to
``"artifact"`` is kept out of the content as ``{"type": "mcp_content", "block": <block>}``;
``structuredContent`` (whenever it is not ``None``: any JSON value in the 2026-07-28 era) becomes
``{"type": "mcp_structured_content", "data": ...}``; the result ``_meta`` becomes
``{"type": "mcp_meta", "data": ...}``.

Agent Chat UI mode (``as_text=True`` on :func:`to_tool_message`, what ``McpToolNode(agent_chat_ui=True)`` uses):
the content is one plain string, because that UI renders a list of blocks as ``[object Object]``. Text blocks are
joined with newlines; every block that is not plain text (an image, audio, a file, a resource link, an embedded
resource with its ``uri``) leaves a ``[<type> content (<mime type>): in the artifact]`` line in the string and is
kept whole in the artifact as ``{"type": "mcp_content", "block": <block>}``, before the other entries. The default
mode keeps the standard blocks in the content (what providers take as they are); every text block after the first
starts with a newline (:data:`TEXT_SEPARATOR`), so ``ToolMessage.text``, which joins text blocks with nothing
between them, reads one block per line.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import unquote, urlsplit

import mcp.types as types
from langchain_core.messages import ToolMessage
from langchain_core.messages.content import (
    create_audio_block,
    create_file_block,
    create_image_block,
    create_non_standard_block,
)

from langgraph_mcp.config import OutputRouting

__all__ = [
    "EMPTY_ERROR_PLACEHOLDER",
    "EMPTY_RESULT_PLACEHOLDER",
    "TEXT_SEPARATOR",
    "ConvertedResult",
    "convert_result",
    "to_tool_message",
]

EMPTY_RESULT_PLACEHOLDER = "Tool returned no content."
"""ToolMessage text for a successful result that has nothing the model can see."""

EMPTY_ERROR_PLACEHOLDER = "Tool returned an error without a message."
"""ToolMessage text for an error result that has nothing the model can see."""

TEXT_SEPARATOR = "\n"
"""What starts every text block of a result's content after its first text block, so ``ToolMessage.text`` (which
joins text blocks with nothing between them) reads ``notes.txt\ntodo.txt``, as the server's lines."""

_DEFAULT_ROUTING = OutputRouting()
_OCTET_STREAM = "application/octet-stream"

_RoutingKind = Literal["text", "image", "audio", "resource", "resource_link"]


@dataclass(frozen=True)
class ConvertedResult:
    """The pieces of a ``ToolMessage`` made from one ``CallToolResult``."""

    content: list[dict[str, Any]]
    """Model-visible standard content blocks (may be empty)."""
    artifact: list[dict[str, Any]] | None
    """``mcp_content`` / ``mcp_structured_content`` / ``mcp_meta`` entries; ``None`` when there are none."""
    status: Literal["success", "error"]

    @property
    def text(self) -> str:
        """The text blocks of :attr:`content` joined with newlines (for an error: the server's message)."""
        return "".join(block["text"] for block in self.content if block.get("type") == "text")


def convert_result(result: types.CallToolResult, routing: OutputRouting | None = None) -> ConvertedResult:
    """Map an MCP tool result to standard content blocks, an artifact list and a status.

    ``routing`` (default: everything to content) decides per kind of block whether the model sees it; blank
    text blocks never reach the content (providers reject them). When no block is left for the model but the
    result has structured content, the content gets one text block with its compact JSON, so a server that
    sends only ``structuredContent`` still tells the model something.
    """
    routing = routing or _DEFAULT_ROUTING
    content: list[dict[str, Any]] = []
    artifact: list[dict[str, Any]] = []
    for mcp_block in result.content:
        kind, block = _convert_block(mcp_block)
        if block["type"] == "text" and not block["text"].strip():
            # Providers reject blank text blocks; keep a blank embedded resource (it has a uri) unseen.
            if "extras" in block:
                artifact.append({"type": "mcp_content", "block": block})
            continue
        if kind is None or getattr(routing, kind) == "artifact":
            artifact.append({"type": "mcp_content", "block": block})
        else:
            content.append(block)
    if result.structured_content is not None:
        artifact.append({"type": "mcp_structured_content", "data": result.structured_content})
        if not content:
            rendering = json.dumps(result.structured_content, ensure_ascii=False, default=str)
            content.append(_text_block(rendering))
    if result.meta is not None:
        artifact.append({"type": "mcp_meta", "data": result.meta})
    _separate_texts(content)
    return ConvertedResult(
        content=content,
        artifact=artifact or None,
        status="error" if result.is_error else "success",
    )


def to_tool_message(
    result: types.CallToolResult,
    *,
    tool_call_id: str,
    name: str,
    routing: OutputRouting | None = None,
    as_text: bool = False,
) -> ToolMessage:
    """Build the ``ToolMessage`` for a tool result (content blocks, artifact, status).

    ``as_text=True`` (Agent Chat UI mode) makes the content one string, the blocks that are not plain text kept
    in the artifact (see the module docstring).

    Content is always a non-empty list of standard blocks: several providers reject a tool result with an
    empty content list or an empty text, so a result with nothing model-visible gets one short text block
    instead (:data:`EMPTY_RESULT_PLACEHOLDER`, or :data:`EMPTY_ERROR_PLACEHOLDER` for an error). A result
    with only structured content already carries its JSON rendering (see :func:`convert_result`).
    """
    converted = convert_result(result, routing)
    content: list[str | dict[Any, Any]] = list(converted.content)
    if not content:
        placeholder = EMPTY_ERROR_PLACEHOLDER if converted.status == "error" else EMPTY_RESULT_PLACEHOLDER
        content = [_text_block(placeholder)]
    artifact = converted.artifact
    if as_text:
        text, kept = _as_text(cast(list[dict[str, Any]], content))
        return ToolMessage(
            content=text,
            artifact=(kept + list(artifact or [])) or None,
            status=converted.status,
            name=name,
            tool_call_id=tool_call_id,
        )
    return ToolMessage(
        content=content,
        artifact=artifact,
        status=converted.status,
        name=name,
        tool_call_id=tool_call_id,
    )


def _separate_texts(content: list[dict[str, Any]]) -> None:
    """Start every text block after the first with :data:`TEXT_SEPARATOR`, in place: LangChain's
    ``ToolMessage.text`` joins text blocks with nothing between them (``notes.txttodo.txt``)."""
    seen = False
    for index, block in enumerate(content):
        if block.get("type") == "text":
            if seen:
                content[index] = {**block, "text": TEXT_SEPARATOR + block["text"]}
            seen = True


def _as_text(content: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The content as one string, and the artifact entries of the blocks that are not plain text."""
    lines: list[str] = []
    kept: list[dict[str, Any]] = []
    seen = False
    for block in content:
        if block.get("type") == "text":
            text = block["text"].removeprefix(TEXT_SEPARATOR) if seen else block["text"]  # one per line here
            seen = True
            if "extras" in block:  # an embedded text resource: its text, its uri in the artifact
                kept.append({"type": "mcp_content", "block": block})
            lines.append(text)
            continue
        kept.append({"type": "mcp_content", "block": block})
        mime = block.get("mime_type")
        lines.append(f"[{block.get('type')} content{f' ({mime})' if mime else ''}: in the artifact]")
    return "\n".join(lines), kept


# --------------------------------------------------------------------------------------------- blocks


def _convert_block(block: types.ContentBlock) -> tuple[_RoutingKind | None, dict[str, Any]]:
    """One MCP content block → (its routing kind, a standard block); kind ``None`` for unknown blocks."""
    match block:
        case types.TextContent():
            return "text", _text_block(block.text)
        case types.ImageContent():
            return "image", _strip_id(create_image_block(base64=block.data, mime_type=block.mime_type))
        case types.AudioContent():
            return "audio", _strip_id(create_audio_block(base64=block.data, mime_type=block.mime_type))
        case types.EmbeddedResource(resource=types.TextResourceContents() as res):
            return "resource", _text_block(res.text, uri=res.uri, mime_type=res.mime_type)
        case types.EmbeddedResource(resource=types.BlobResourceContents() as res):
            return "resource", _blob_block(res)
        case types.ResourceLink():
            return "resource_link", _strip_id(
                create_file_block(
                    url=block.uri,
                    mime_type=block.mime_type,
                    name=block.name,
                    title=block.title,
                    description=block.description,
                    size=block.size,
                )
            )
    # Not a known MCP content block (a newer spec revision or a non-conforming server): keep it, unseen.
    raw = cast(Any, block)
    value = (
        raw.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(raw, "model_dump") else raw
    )
    if not isinstance(value, dict):
        value = {"value": value}
    return None, _strip_id(create_non_standard_block(value))


def _text_block(text: str, **extras: Any) -> dict[str, Any]:
    """``create_text_block(text, **extras)`` without its random ``id``, built directly: on every call's result,
    the factory's uuid4 (then stripped) cost more than the rest of the conversion."""
    block: dict[str, Any] = {"type": "text", "text": text}
    kept = {key: value for key, value in extras.items() if value is not None}
    if kept:
        block["extras"] = kept
    return block


def _blob_block(res: types.BlobResourceContents) -> dict[str, Any]:
    mime_type = res.mime_type or _OCTET_STREAM
    major = mime_type.split("/", 1)[0].strip().lower()
    if major == "image":
        return _strip_id(create_image_block(base64=res.blob, mime_type=mime_type, uri=res.uri))
    if major == "audio":
        return _strip_id(create_audio_block(base64=res.blob, mime_type=mime_type, uri=res.uri))
    return _strip_id(
        create_file_block(base64=res.blob, mime_type=mime_type, uri=res.uri, filename=_filename(res.uri))
    )


def _filename(uri: str) -> str | None:
    """A file name for a URI: the last path segment (``file:///tmp/a.pdf`` → ``a.pdf``), else the host."""
    parts = urlsplit(uri)
    name = posixpath.basename(unquote(parts.path)) or unquote(parts.netloc)
    return name or None


def _strip_id(block: Any) -> dict[str, Any]:
    """Copy a factory-built block without the random ``id`` the factories always add."""
    return {key: value for key, value in cast(dict[str, Any], block).items() if key != "id"}
