"""Resources and prompts of a real SDK server, in both eras, in-process and over streamable HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager

import anyio
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_mcp import McpServers
from langgraph_mcp.calls.results import to_tool_message
from langgraph_mcp.errors import PromptError, RequestTimeoutError, ResourceError
from langgraph_mcp.examples.demo_server import build_server
from tests.support.helpers import ERAS, TRANSPORTS, OpenServers, serve_asgi
from tests.support.servers.library_server import LOGO, REPORT_TEXT, LibraryServer

pytestmark = pytest.mark.anyio

RESOURCE_TRANSPORTS = [t for t in TRANSPORTS if t != "stdio"]  # the library server runs in this process


@asynccontextmanager
async def library(lib: LibraryServer, transport: str, mode: str) -> AsyncIterator[McpServers]:
    if transport == "in_process":
        async with aclosing(
            McpServers({"lib": {"transport": "in_process", "server": lib.server, "mode": mode}})
        ) as s:
            yield s
        return
    async with (
        serve_asgi(lib.server.streamable_http_app()) as base,
        aclosing(McpServers({"lib": {"url": f"{base}/mcp", "mode": mode}})) as servers,
    ):
        yield servers


@pytest.mark.parametrize("transport", RESOURCE_TRANSPORTS)
@pytest.mark.parametrize("mode", ERAS)
async def test_resources_text_binary_and_template(mode: str, transport: str) -> None:
    lib = LibraryServer(pages=5, page_size=2)
    async with library(lib, transport, mode) as servers:
        listed = await servers.list_resources("lib")
        assert [str(r.uri) for r in listed] == [f"docs://page/{i}" for i in range(5)] + ["docs://logo.png"]
        assert lib.requests["resources/list"] == 3  # every page was read

        (text,) = await servers.read_resource("lib", "docs://page/3")
        assert text.as_string() == "text of docs://page/3"
        assert text.mimetype == "text/plain"
        assert text.metadata == {"uri": "docs://page/3", "server": "lib"}

        (logo,) = await servers.read_resource("lib", "docs://logo.png")
        assert logo.as_bytes() == LOGO
        assert logo.mimetype == "image/png"
        assert logo.metadata["uri"] == "docs://logo.png"

        (template,) = await servers.list_resource_templates("lib")
        assert template.uri_template == "notes://{note_id}"
        (note,) = await servers.read_resource("lib", template.uri_template.format(note_id="7"))
        assert note.as_string() == "note 7"


@pytest.mark.parametrize("transport", RESOURCE_TRANSPORTS)
@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_become_messages(mode: str, transport: str) -> None:
    lib = LibraryServer()
    async with library(lib, transport, mode) as servers:
        prompts = await servers.list_prompts("lib")
        assert [p.name for p in prompts] == ["greet", "show_logo"]
        assert lib.requests["prompts/list"] == 2  # one prompt per page
        assert [a.name for a in prompts[0].arguments or []] == ["name"]

        messages = await servers.get_prompt("lib", "greet", {"name": "Ada"})
        assert messages == [HumanMessage("Please greet Ada."), AIMessage("Hello, Ada!")]

        (image,) = await servers.get_prompt("lib", "show_logo")
        assert isinstance(image, HumanMessage)
        assert isinstance(image.content, list)
        assert image.content[0]["type"] == "image"
        assert image.content[0]["mime_type"] == "image/png"


@pytest.mark.parametrize("mode", ERAS)
async def test_a_resource_link_in_a_tool_result_is_read_through_read_resource(mode: str) -> None:
    lib = LibraryServer()
    async with library(lib, "http", mode) as servers:
        result = await servers.call_tool("lib_report", {})
        message = to_tool_message(result, tool_call_id="c1", name="lib_report")
        link_block = next(b for b in message.content if isinstance(b, dict) and b.get("type") == "file")
        (via_block,) = await servers.read_resource("lib", link_block)
        link = result.content[1]
        (via_link,) = await servers.read_resource("lib", link)  # the mcp ResourceLink itself
        assert via_block.as_string() == via_link.as_string() == REPORT_TEXT
        assert via_block.metadata["uri"] == "docs://report"


async def test_a_ttl_hint_caches_listings_and_reads_until_it_expires() -> None:
    lib = LibraryServer(pages=1, ttl_ms=60_000)
    async with library(lib, "in_process", "auto") as servers:
        for _ in range(3):
            await servers.list_resources("lib")
            await servers.read_resource("lib", "docs://page/0")
            await servers.list_prompts("lib")
        assert lib.requests["resources/list"] == 1
        assert lib.requests["resources/read"] == 1
        assert lib.requests["prompts/list"] == 2  # two pages, once
        await servers.list_resources("lib", cache_mode="refresh")
        assert lib.requests["resources/list"] == 2


@pytest.mark.parametrize("mode", ERAS)
async def test_without_a_ttl_hint_nothing_is_cached(mode: str) -> None:
    # Legacy results never carry a hint, whatever the server sets: only the modern run may cache.
    lib = LibraryServer(pages=1, ttl_ms=0)
    async with library(lib, "in_process", mode) as servers:
        await servers.read_resource("lib", "docs://page/0")
        await servers.read_resource("lib", "docs://page/0")
        assert lib.requests["resources/read"] == 2


async def test_legacy_results_are_not_cached_even_with_a_server_hint() -> None:
    lib = LibraryServer(pages=1, ttl_ms=60_000)
    async with library(lib, "in_process", "legacy") as servers:
        await servers.list_resources("lib")
        await servers.list_resources("lib")
        assert lib.requests["resources/list"] == 2


@pytest.mark.parametrize("mode", ERAS)
async def test_a_list_changed_drops_the_cached_resources_and_prompts(
    mode: str, open_servers: OpenServers
) -> None:
    """A server says its resources and prompts changed (legacy: notifications/*/list_changed, 2026-07-28: listen
    events): listings kept under a long ttl hint, and resource reads, are asked again; tools stay cached."""
    lib = LibraryServer(pages=2, page_size=10, ttl_ms=600_000)
    servers = open_servers.watched({"lib": {"transport": "in_process", "server": lib.server, "mode": mode}})
    pages = ["docs://page/0", "docs://page/1", "docs://logo.png"]
    assert [str(r.uri) for r in await servers.list_resources("lib")] == pages
    assert [p.name for p in await servers.list_prompts("lib")] == ["greet", "show_logo"]
    await servers.read_resource("lib", "docs://page/0")
    await servers.list_tools()
    asked = dict(lib.requests)

    await servers.call_tool("lib_grow", {})
    with anyio.fail_after(5):
        await servers.changed["resources"].wait()
        await servers.changed["prompts"].wait()

    assert [str(r.uri) for r in await servers.list_resources("lib")] == [
        *pages[:2],
        "docs://page/2",
        pages[2],
    ]
    assert [p.name for p in await servers.list_prompts("lib")] == ["greet", "show_logo", "extra"]
    (page,) = await servers.read_resource("lib", "docs://page/0")
    assert page.as_string() == "text of docs://page/0"
    assert lib.requests["resources/list"] == asked["resources/list"] + 1
    assert lib.requests["prompts/list"] == asked["prompts/list"] + 3  # one prompt per page
    assert lib.requests["resources/read"] == asked["resources/read"] + 1
    assert not servers.changed["tools"].is_set()


@pytest.mark.parametrize("mode", ERAS)
async def test_errors_name_the_server_and_the_uri(mode: str) -> None:
    lib = LibraryServer()
    async with library(lib, "in_process", mode) as servers:
        with pytest.raises(ResourceError) as caught:
            await servers.read_resource("lib", "docs://missing")
        assert caught.value.server == "lib"
        assert caught.value.uri == "docs://missing"
        assert "'lib'" in str(caught.value) and "docs://missing" in str(caught.value)
        with pytest.raises(PromptError) as prompt_error:
            await servers.get_prompt("lib", "nope")
        assert prompt_error.value.prompt == "nope" and prompt_error.value.server == "lib"
        with pytest.raises(ResourceError, match="not a resource reference"):
            await servers.read_resource("lib", {"type": "text", "text": "hi"})


@pytest.mark.parametrize("mode", ERAS)
async def test_a_read_that_gets_no_answer_fails_with_the_request_timeout(
    mode: str, open_servers: OpenServers
) -> None:
    lib = LibraryServer()
    servers = open_servers(
        {"lib": {"transport": "in_process", "server": lib.server, "mode": mode, "tool_timeout": 0.5}}
    )
    with pytest.raises(ResourceError) as caught:
        await servers.read_resource("lib", "docs://stalled")
    assert caught.value.server == "lib" and caught.value.uri == "docs://stalled"
    timeout = caught.value.__cause__
    assert isinstance(timeout, RequestTimeoutError) and isinstance(timeout, TimeoutError)
    assert timeout.server == "lib" and timeout.timeout == 0.5
    assert "0.5s" in str(caught.value)
    (page,) = await servers.read_resource("lib", "docs://page/1")  # the connection is still usable
    assert page.as_string() == "text of docs://page/1"


@pytest.mark.parametrize("mode", ERAS)
async def test_the_demo_server_shares_a_file_as_a_link_that_reads_back(
    open_servers: OpenServers, mode: str
) -> None:
    servers = open_servers({"demo": {"transport": "in_process", "server": build_server(), "mode": mode}})
    result = await servers.call_tool("demo_share_file", {"name": "todo.txt"})
    (link,) = [b for b in result.content if b.type == "resource_link"]
    (todo,) = await servers.read_resource("demo", link)
    (logo,) = await servers.read_resource("demo", "demo://logo.png")
    assert todo.as_string().startswith("- write tests")
    assert logo.mimetype == "image/png" and logo.as_bytes().startswith(b"\x89PNG")
    (prompt,) = await servers.get_prompt("demo", "review_file", {"name": "todo.txt"})
    assert isinstance(prompt, HumanMessage) and "- write tests" in str(prompt.content)
