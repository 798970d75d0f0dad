"""Tests for langgraph_mcp.calls.results: MCP CallToolResult → ToolMessage content, artifact and status."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.messages.content import create_text_block
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from langgraph_mcp.calls.results import (
    EMPTY_ERROR_PLACEHOLDER,
    EMPTY_RESULT_PLACEHOLDER,
    ConvertedResult,
    convert_result,
    to_tool_message,
)
from langgraph_mcp.config import OutputRouting

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
WAV_B64 = "UklGRi4uLi5XQVZF"
BIN_B64 = "AAECAw=="


def result(*blocks: types.ContentBlock, **fields: Any) -> types.CallToolResult:
    return types.CallToolResult(content=list(blocks), **fields)


def only_block(res: types.CallToolResult) -> dict[str, Any]:
    converted = convert_result(res)
    assert converted.artifact is None
    assert len(converted.content) == 1
    return converted.content[0]


# --------------------------------------------------------------------------------------------- one block each


def test_text() -> None:
    converted = convert_result(result(types.TextContent(text="hello")))
    assert converted == ConvertedResult(
        content=[{"type": "text", "text": "hello"}], artifact=None, status="success"
    )
    assert converted.text == "hello"


def test_image() -> None:
    block = only_block(result(types.ImageContent(data=PNG_B64, mime_type="image/png")))
    assert block == {"type": "image", "base64": PNG_B64, "mime_type": "image/png"}


def test_audio() -> None:
    block = only_block(result(types.AudioContent(data=WAV_B64, mime_type="audio/wav")))
    assert block == {"type": "audio", "base64": WAV_B64, "mime_type": "audio/wav"}


def test_resource_link_full() -> None:
    link = types.ResourceLink(
        uri="https://example.com/files/report.pdf",
        name="report",
        title="Quarterly report",
        description="Q3 numbers",
        mime_type="application/pdf",
        size=1234,
    )
    assert only_block(result(link)) == {
        "type": "file",
        "url": "https://example.com/files/report.pdf",
        "mime_type": "application/pdf",
        "extras": {"name": "report", "title": "Quarterly report", "description": "Q3 numbers", "size": 1234},
    }


def test_resource_link_minimal() -> None:
    link = types.ResourceLink(uri="file:///tmp/report.txt", name="report")
    assert only_block(result(link)) == {
        "type": "file",
        "url": "file:///tmp/report.txt",
        "extras": {"name": "report"},
    }


def test_embedded_text_resource() -> None:
    res = types.TextResourceContents(uri="memo://1", text="embedded text", mime_type="text/markdown")
    assert only_block(result(types.EmbeddedResource(resource=res))) == {
        "type": "text",
        "text": "embedded text",
        "extras": {"uri": "memo://1", "mime_type": "text/markdown"},
    }


def test_embedded_text_resource_without_mime_type() -> None:
    res = types.TextResourceContents(uri="memo://2", text="plain")
    assert only_block(result(types.EmbeddedResource(resource=res))) == {
        "type": "text",
        "text": "plain",
        "extras": {"uri": "memo://2"},
    }


def test_embedded_blob_image() -> None:
    res = types.BlobResourceContents(uri="file:///pics/dot.png", blob=PNG_B64, mime_type="image/png")
    assert only_block(result(types.EmbeddedResource(resource=res))) == {
        "type": "image",
        "base64": PNG_B64,
        "mime_type": "image/png",
        "extras": {"uri": "file:///pics/dot.png"},
    }


def test_embedded_blob_audio() -> None:
    res = types.BlobResourceContents(uri="sound://beep", blob=WAV_B64, mime_type="audio/wav")
    assert only_block(result(types.EmbeddedResource(resource=res))) == {
        "type": "audio",
        "base64": WAV_B64,
        "mime_type": "audio/wav",
        "extras": {"uri": "sound://beep"},
    }


def test_embedded_blob_octet_stream() -> None:
    res = types.BlobResourceContents(
        uri="file:///data/dump%20v2.bin", blob=BIN_B64, mime_type="application/octet-stream"
    )
    assert only_block(result(types.EmbeddedResource(resource=res))) == {
        "type": "file",
        "base64": BIN_B64,
        "mime_type": "application/octet-stream",
        "extras": {"uri": "file:///data/dump%20v2.bin", "filename": "dump v2.bin"},
    }


def test_embedded_blob_without_mime_type_is_octet_stream_file() -> None:
    res = types.BlobResourceContents(uri="mem://blob.dat", blob=BIN_B64)
    assert only_block(result(types.EmbeddedResource(resource=res))) == {
        "type": "file",
        "base64": BIN_B64,
        "mime_type": "application/octet-stream",
        "extras": {"uri": "mem://blob.dat", "filename": "blob.dat"},
    }


def test_blocks_keep_order_and_carry_no_random_ids() -> None:
    res = result(
        types.TextContent(text="a"),
        types.ImageContent(data=PNG_B64, mime_type="image/png"),
        types.TextContent(text="b"),
    )
    first, second = convert_result(res), convert_result(res)
    assert [b["type"] for b in first.content] == ["text", "image", "text"]
    assert all("id" not in block for block in first.content)
    assert first == second  # deterministic: same result, same message
    assert first.text == "a\nb"


def test_text_blocks_are_langchains_own_shape_without_the_id() -> None:
    res = types.TextResourceContents(uri="memo://3", text="t", mime_type="text/plain")
    converted = convert_result(result(types.TextContent(text="a"), types.EmbeddedResource(resource=res)))
    # every text block after the first starts with a newline (ToolMessage.text joins blocks with nothing)
    expected = [create_text_block("a"), create_text_block("\nt", uri="memo://3", mime_type="text/plain")]
    assert converted.content == [{k: v for k, v in b.items() if k != "id"} for b in expected]


def test_blank_text_is_never_content() -> None:
    blank_memo = types.EmbeddedResource(resource=types.TextResourceContents(uri="memo://0", text=" \n"))
    converted = convert_result(result(types.TextContent(text=""), blank_memo, types.TextContent(text="x")))
    assert converted.content == [{"type": "text", "text": "x"}]
    assert converted.artifact == [
        {"type": "mcp_content", "block": {"type": "text", "text": " \n", "extras": {"uri": "memo://0"}}}
    ]
    message = to_tool_message(result(types.TextContent(text="")), tool_call_id="c", name="t")
    assert message.content == [{"type": "text", "text": EMPTY_RESULT_PLACEHOLDER}]
    assert message.artifact is None


def test_unknown_block_goes_to_the_artifact_as_non_standard() -> None:
    odd = types.ToolUseContent(id="tu_1", name="x", input={"k": 1})
    res = types.CallToolResult.model_construct(content=[types.TextContent(text="hi"), odd])
    converted = convert_result(res)
    assert converted.content == [{"type": "text", "text": "hi"}]
    assert converted.artifact == [
        {
            "type": "mcp_content",
            "block": {
                "type": "non_standard",
                "value": {"type": "tool_use", "id": "tu_1", "name": "x", "input": {"k": 1}},
            },
        }
    ]


# --------------------------------------------------------------------------------------------- artifact


def test_structured_content_goes_to_the_artifact_and_content_stays() -> None:
    res = result(types.TextContent(text='{"a": 1}'), structured_content={"a": 1})
    converted = convert_result(res)
    assert converted.content == [{"type": "text", "text": '{"a": 1}'}]
    assert converted.artifact == [{"type": "mcp_structured_content", "data": {"a": 1}}]


@pytest.mark.parametrize(
    ("value", "rendering"),
    [(False, "false"), (0, "0"), ("", '""'), ([], "[]"), ({}, "{}"), ([1, "é"], '[1, "é"]')],
)
def test_structured_only_falsy_or_non_object_values(value: Any, rendering: str) -> None:
    converted = convert_result(result(structured_content=value))
    assert converted.artifact == [{"type": "mcp_structured_content", "data": value}]
    # Nothing else for the model to see: it gets the JSON rendering.
    assert converted.content == [{"type": "text", "text": rendering}]
    assert converted.status == "success"


def test_structured_content_none_means_absent() -> None:
    converted = convert_result(result(structured_content=None))
    assert converted == ConvertedResult(content=[], artifact=None, status="success")


def test_meta_goes_to_the_artifact_after_structured_content() -> None:
    meta = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}, "trace": "abc"}
    res = types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"x": 1}, "_meta": meta}
    )
    converted = convert_result(res)
    assert converted.content == [{"type": "text", "text": "ok"}]
    assert converted.artifact == [
        {"type": "mcp_structured_content", "data": {"x": 1}},
        {"type": "mcp_meta", "data": meta},
    ]


# --------------------------------------------------------------------------------------------- errors


def test_is_error() -> None:
    res = result(
        types.TextContent(text="quota exceeded"),
        types.ImageContent(data=PNG_B64, mime_type="image/png"),
        types.TextContent(text="try tomorrow"),
        is_error=True,
    )
    converted = convert_result(res)
    assert converted.status == "error"
    assert converted.text == "quota exceeded\ntry tomorrow"
    assert converted.content == [
        {"type": "text", "text": "quota exceeded"},
        {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
        {"type": "text", "text": "\ntry tomorrow"},
    ]
    message = to_tool_message(res, tool_call_id="call_1", name="srv_tool")
    assert message.status == "error"
    assert message.content == converted.content


# --------------------------------------------------------------------------------------------- routing


MIXED = result(
    types.TextContent(text="summary"),
    types.ImageContent(data=PNG_B64, mime_type="image/png"),
    types.AudioContent(data=WAV_B64, mime_type="audio/wav"),
    types.EmbeddedResource(resource=types.TextResourceContents(uri="memo://1", text="memo")),
    types.ResourceLink(uri="file:///r.txt", name="r"),
)
TEXT = {"type": "text", "text": "summary"}
IMAGE = {"type": "image", "base64": PNG_B64, "mime_type": "image/png"}
AUDIO = {"type": "audio", "base64": WAV_B64, "mime_type": "audio/wav"}
MEMO = {"type": "text", "text": "memo", "extras": {"uri": "memo://1"}}
LINK = {"type": "file", "url": "file:///r.txt", "extras": {"name": "r"}}


def test_default_routing_sends_everything_to_content() -> None:
    assert convert_result(MIXED) == convert_result(MIXED, OutputRouting())
    assert convert_result(MIXED) == ConvertedResult(
        content=[TEXT, IMAGE, AUDIO, {**MEMO, "text": "\nmemo"}, LINK], artifact=None, status="success"
    )


def test_routing_to_artifact() -> None:
    routing = OutputRouting(image="artifact", audio="artifact", resource="artifact", resource_link="artifact")
    converted = convert_result(MIXED, routing)
    assert converted.content == [TEXT]
    assert converted.artifact == [
        {"type": "mcp_content", "block": IMAGE},
        {"type": "mcp_content", "block": AUDIO},
        {"type": "mcp_content", "block": MEMO},
        {"type": "mcp_content", "block": LINK},
    ]
    assert converted.text == "summary"


def test_routing_text_away_keeps_structured_rendering_for_the_model() -> None:
    res = result(types.TextContent(text="long text"), structured_content={"n": 2})
    converted = convert_result(res, OutputRouting(text="artifact"))
    assert converted.content == [{"type": "text", "text": '{"n": 2}'}]
    assert converted.artifact == [
        {"type": "mcp_content", "block": {"type": "text", "text": "long text"}},
        {"type": "mcp_structured_content", "data": {"n": 2}},
    ]


def test_everything_routed_away_gives_a_placeholder_message() -> None:
    res = result(types.ImageContent(data=PNG_B64, mime_type="image/png"))
    message = to_tool_message(res, tool_call_id="c", name="t", routing=OutputRouting(image="artifact"))
    assert message.content == [{"type": "text", "text": EMPTY_RESULT_PLACEHOLDER}]
    assert message.artifact == [{"type": "mcp_content", "block": IMAGE}]


# ------------------------------------------------------------------------------------------- empty / message


def test_empty_result() -> None:
    converted = convert_result(result())
    assert converted == ConvertedResult(content=[], artifact=None, status="success")
    assert converted.text == ""
    message = to_tool_message(result(), tool_call_id="call_9", name="srv_noop")
    assert message.content == [{"type": "text", "text": EMPTY_RESULT_PLACEHOLDER}]
    assert message.artifact is None
    assert message.status == "success"


def test_empty_error_result() -> None:
    converted = convert_result(result(is_error=True))
    assert converted == ConvertedResult(content=[], artifact=None, status="error")
    message = to_tool_message(result(is_error=True), tool_call_id="c", name="t")
    assert message.content == [{"type": "text", "text": EMPTY_ERROR_PLACEHOLDER}]
    assert message.status == "error"


def test_to_tool_message_fields() -> None:
    res = result(types.TextContent(text="hi"), structured_content={"a": [1]}, meta={"m": True})
    message = to_tool_message(res, tool_call_id="call_42", name="srv_tool")
    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call_42"
    assert message.name == "srv_tool"
    assert message.status == "success"
    assert message.content == [{"type": "text", "text": "hi"}]
    assert message.artifact == [
        {"type": "mcp_structured_content", "data": {"a": [1]}},
        {"type": "mcp_meta", "data": {"m": True}},
    ]
    assert message.content_blocks == [{"type": "text", "text": "hi"}]
    json.dumps(message.artifact)  # the artifact is plain JSON (checkpointers, LangGraph API)


def test_as_text_all_text_is_one_plain_string() -> None:
    """Agent Chat UI mode: a result of text blocks is a string (that UI prints a list as [object Object])."""
    res = result(types.TextContent(text="line one"), types.TextContent(text="line two"), meta={"m": 1})
    message = to_tool_message(res, tool_call_id="c", name="t", as_text=True)
    assert message.content == "line one\nline two"
    assert message.artifact == [{"type": "mcp_meta", "data": {"m": 1}}]
    json.dumps(message.artifact)


def test_as_text_keeps_what_is_not_plain_text_in_the_artifact() -> None:
    png = types.ImageContent(data="aGk=", mime_type="image/png")
    embedded = types.EmbeddedResource(
        resource=types.TextResourceContents(
            uri="demo://files/a.txt", text="file text", mime_type="text/plain"
        )
    )
    res = result(types.TextContent(text="Here:"), png, embedded, structured_content={"n": 1})
    message = to_tool_message(res, tool_call_id="c", name="t", as_text=True)
    assert message.content == "Here:\n[image content (image/png): in the artifact]\nfile text"
    default = to_tool_message(res, tool_call_id="c", name="t")
    assert isinstance(default.content, list)  # the default mode keeps the standard blocks
    assert message.artifact == [
        {"type": "mcp_content", "block": default.content[1]},
        {"type": "mcp_content", "block": default.content[2]},
        {"type": "mcp_structured_content", "data": {"n": 1}},
    ]
    assert (
        default.content[1]["base64"] == "aGk=" and default.content[2]["extras"]["uri"] == "demo://files/a.txt"
    )


def test_as_text_placeholder_for_an_empty_result_is_a_string() -> None:
    message = to_tool_message(result(), tool_call_id="c", name="t", as_text=True)
    assert message.content == EMPTY_RESULT_PLACEHOLDER and message.artifact is None


# --------------------------------------------------------------------------------------------- real server


def make_server() -> MCPServer:
    server = MCPServer("results-test", version="1.2.3")

    @server.tool()
    def mixed() -> list[types.ContentBlock]:
        """One block of each kind."""
        return [
            types.TextContent(text="hello"),
            types.ImageContent(data=PNG_B64, mime_type="image/png"),
            types.AudioContent(data=WAV_B64, mime_type="audio/wav"),
            types.ResourceLink(uri="file:///tmp/report.txt", name="report", mime_type="text/plain"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(uri="memo://1", text="embedded", mime_type="text/plain")
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="file:///tmp/data.bin", blob=BIN_B64, mime_type="application/octet-stream"
                )
            ),
        ]

    @server.tool()
    def fails(reason: str) -> str:
        """Always raises ToolError."""
        raise ToolError(f"no luck: {reason}")

    @server.tool()
    def structured_only() -> types.CallToolResult:
        """A hand-made result with structured content and no content blocks."""
        return types.CallToolResult(content=[], structured_content={"count": 3, "ok": True})

    return server


MIXED_EXPECTED = [
    {"type": "text", "text": "hello"},
    {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
    {"type": "audio", "base64": WAV_B64, "mime_type": "audio/wav"},
    {
        "type": "file",
        "url": "file:///tmp/report.txt",
        "mime_type": "text/plain",
        "extras": {"name": "report"},
    },
    {"type": "text", "text": "embedded", "extras": {"uri": "memo://1", "mime_type": "text/plain"}},
    {
        "type": "file",
        "base64": BIN_B64,
        "mime_type": "application/octet-stream",
        "extras": {"uri": "file:///tmp/data.bin", "filename": "data.bin"},
    },
]


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "protocol"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_real_server_results(mode: str, protocol: str) -> None:
    async with Client(make_server(), mode=mode) as client:
        assert client.protocol_version == protocol
        mixed = await client.call_tool("mixed", {})
        fails = await client.call_tool("fails", {"reason": "bad input"})
        structured = await client.call_tool("structured_only", {})

    # Modern servers stamp serverInfo into every result's _meta; legacy results carry no _meta.
    meta_entries: list[dict[str, Any]] = []
    if protocol == "2026-07-28":
        server_info = {"io.modelcontextprotocol/serverInfo": {"name": "results-test", "version": "1.2.3"}}
        meta_entries = [{"type": "mcp_meta", "data": server_info}]

    converted = convert_result(mixed)
    assert converted.status == "success"
    assert converted.content == [
        *MIXED_EXPECTED[:4],
        {**MIXED_EXPECTED[4], "text": "\nembedded"},
        MIXED_EXPECTED[5],
    ]
    assert converted.artifact == (meta_entries or None)
    assert converted.text == "hello\nembedded"

    routed = convert_result(mixed, OutputRouting(image="artifact", resource="artifact"))
    assert routed.content == [MIXED_EXPECTED[0], MIXED_EXPECTED[2], MIXED_EXPECTED[3]]
    assert routed.artifact == [
        {"type": "mcp_content", "block": MIXED_EXPECTED[1]},
        {"type": "mcp_content", "block": MIXED_EXPECTED[4]},
        {"type": "mcp_content", "block": MIXED_EXPECTED[5]},
        *meta_entries,
    ]

    error = to_tool_message(fails, tool_call_id="call_1", name="results-test_fails")
    assert error.status == "error"
    assert error.content == [{"type": "text", "text": "Error executing tool fails: no luck: bad input"}]
    assert error.artifact == (meta_entries or None)
    assert convert_result(fails).text == "Error executing tool fails: no luck: bad input"

    only = to_tool_message(structured, tool_call_id="call_2", name="results-test_structured_only")
    assert only.status == "success"
    assert only.content == [{"type": "text", "text": '{"count": 3, "ok": true}'}]
    assert only.artifact == [
        {"type": "mcp_structured_content", "data": {"count": 3, "ok": True}},
        *meta_entries,
    ]


def test_a_tool_messages_text_puts_each_text_block_on_its_own_line() -> None:
    """LangChain's ``ToolMessage.text`` joins text blocks with nothing between them; a server's two lines
    (``notes.txt``, ``todo.txt``) must not read ``notes.txttodo.txt``."""
    res = result(types.TextContent(text="notes.txt"), types.TextContent(text="todo.txt"))
    message = to_tool_message(res, tool_call_id="c1", name="demo_list_files")
    assert message.text == "notes.txt\ntodo.txt"
    assert convert_result(res).text == "notes.txt\ntodo.txt"
    shown = to_tool_message(
        res, tool_call_id="c1", name="demo_list_files", as_text=True
    )  # Agent Chat UI mode
    assert shown.content == "notes.txt\ntodo.txt"
