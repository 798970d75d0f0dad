"""A low-level ``mcp.server.Server`` with resources, resource templates, prompts and log messages, for tests.

Low-level so it can paginate its listings and give ttl hints (``MCPServer`` does neither). It serves:

* resources ``docs://page/0..N`` (text, listed ``page_size`` at a time), ``docs://logo.png`` (binary, base64 blob);
* ``docs://stalled``, whose read never answers (until the client cancels it);
* the template ``notes://{note_id}``, read by filling it in (``notes://7`` → ``"note 7"``);
* prompts ``greet(name)`` (a user and an assistant message), ``show_logo()`` (an image), listed a page at a time;
* the tool ``report`` returning a ``resource_link`` to ``docs://report``, and ``chatty`` logging at every level;
* the tool ``grow``: one more page and the prompt ``extra``, announced as resources and prompts list changes
  (``notifications/*/list_changed`` to a legacy client, ``subscriptions/listen`` events to a 2026-07-28 one);
* ``requests`` counts requests by method, ``levels_set`` records legacy ``logging/setLevel`` calls.
"""

from __future__ import annotations

import base64
import warnings
from collections import Counter
from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged

LOGO = b"\x89PNG\r\n\x1a\n" + bytes(range(32))
REPORT_TEXT = "quarterly report: all good"
RESOURCE_NOT_FOUND = -32002
LOG_LEVELS: tuple[types.LoggingLevel, ...] = ("debug", "info", "warning", "error")


class LibraryServer:
    def __init__(self, name: str = "library", *, pages: int = 5, page_size: int = 2, ttl_ms: int = 0) -> None:
        self.pages = pages
        self.page_size = page_size
        self.ttl_ms = ttl_ms
        self.requests: Counter[str] = Counter()
        self.levels_set: list[str] = []
        self.extra_prompt = False
        self.bus = InMemorySubscriptionBus()
        # logging/setLevel is deprecated in 2026-07-28, still served to legacy clients.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.server: Server[Any] = self._build(name)

    def _build(self, name: str) -> Server[Any]:
        return Server(
            name,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_set_logging_level=self._set_level,
            on_subscriptions_listen=ListenHandler(self.bus),
        )

    # ------------------------------------------------------------------------------------------- resources

    def _resources(self) -> list[types.Resource]:
        text = [
            types.Resource(uri=f"docs://page/{i}", name=f"page-{i}", mime_type="text/plain")
            for i in range(self.pages)
        ]
        return [*text, types.Resource(uri="docs://logo.png", name="logo", mime_type="image/png")]

    def _page(
        self, items: list[Any], params: types.PaginatedRequestParams | None
    ) -> tuple[list[Any], str | None]:
        start = int(params.cursor) if params is not None and params.cursor else 0
        after = start + self.page_size
        return items[start:after], (str(after) if after < len(items) else None)

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self.requests["resources/list"] += 1
        page, cursor = self._page(self._resources(), params)
        return types.ListResourcesResult(resources=page, next_cursor=cursor, ttl_ms=self.ttl_ms)

    async def _list_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self.requests["resources/templates/list"] += 1
        template = types.ResourceTemplate(
            uri_template="notes://{note_id}", name="note", mime_type="text/plain"
        )
        return types.ListResourceTemplatesResult(resource_templates=[template], ttl_ms=self.ttl_ms)

    async def _read(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self.requests["resources/read"] += 1
        uri = str(params.uri)
        contents: list[types.TextResourceContents | types.BlobResourceContents]
        if uri == "docs://logo.png":
            blob = base64.b64encode(LOGO).decode()
            contents = [types.BlobResourceContents(uri=uri, mime_type="image/png", blob=blob)]
        elif uri == "docs://report":
            contents = [types.TextResourceContents(uri=uri, mime_type="text/plain", text=REPORT_TEXT)]
        elif uri.startswith("docs://page/") and uri.rsplit("/", 1)[1].isdigit():
            contents = [types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"text of {uri}")]
        elif uri == "docs://stalled":
            await anyio.Event().wait()
            raise AssertionError("unreachable: nothing sets this event")
        elif uri.startswith("notes://"):
            contents = [types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"note {uri[8:]}")]
        else:
            raise MCPError(RESOURCE_NOT_FOUND, f"no such resource: {uri}")
        return types.ReadResourceResult(contents=contents, ttl_ms=self.ttl_ms)

    # ------------------------------------------------------------------------------------------- prompts

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self.requests["prompts/list"] += 1
        prompts = [
            types.Prompt(
                name="greet",
                description="Greet someone.",
                arguments=[types.PromptArgument(name="name", required=True)],
            ),
            types.Prompt(name="show_logo", description="A message with the logo."),
        ]
        if self.extra_prompt:
            prompts.append(types.Prompt(name="extra", description="Added by grow."))
        start = int(params.cursor) if params is not None and params.cursor else 0
        cursor = str(start + 1) if start + 1 < len(prompts) else None
        return types.ListPromptsResult(
            prompts=prompts[start : start + 1], next_cursor=cursor, ttl_ms=self.ttl_ms
        )

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        self.requests["prompts/get"] += 1
        if params.name == "greet":
            who = (params.arguments or {}).get("name", "nobody")
            return types.GetPromptResult(
                description="A greeting",
                messages=[
                    types.PromptMessage(role="user", content=types.TextContent(text=f"Please greet {who}.")),
                    types.PromptMessage(role="assistant", content=types.TextContent(text=f"Hello, {who}!")),
                ],
            )
        if params.name == "show_logo":
            image = types.ImageContent(data=base64.b64encode(LOGO).decode(), mime_type="image/png")
            return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=image)])
        raise MCPError(types.INVALID_PARAMS, f"no such prompt: {params.name}")

    # ------------------------------------------------------------------------------------------- tools, logs

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        empty = {"type": "object", "properties": {}}
        return types.ListToolsResult(
            tools=[
                types.Tool(name="report", description="Make the report.", input_schema=empty),
                types.Tool(name="chatty", description="Log at every level.", input_schema=empty),
                types.Tool(
                    name="grow", description="Add a page and a prompt, and say so.", input_schema=empty
                ),
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name == "grow":
            self.pages += 1
            self.extra_prompt = True
            if ctx.protocol_version == "2026-07-28":
                await self.bus.publish(ResourcesListChanged())
                await self.bus.publish(PromptsListChanged())
            else:
                await ctx.session.send_resource_list_changed()
                await ctx.session.send_prompt_list_changed()
            return types.CallToolResult(content=[types.TextContent(text="grown")])
        if params.name == "report":
            link = types.ResourceLink(uri="docs://report", name="report", mime_type="text/plain")
            return types.CallToolResult(content=[types.TextContent(text="report ready"), link])
        # A legacy session honours logging/setLevel here; 2026-07-28 requests are filtered by the SDK (per request).
        floor = LOG_LEVELS.index(self.levels_set[-1]) if self.levels_set else 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging is deprecated in 2026-07-28, still specified
            for level in LOG_LEVELS[floor:]:
                await ctx.session.send_log_message(level, f"{level} from chatty", "chatty", ctx.request_id)
        return types.CallToolResult(content=[types.TextContent(text="chatted")])

    async def _set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self.levels_set.append(params.level)
        return types.EmptyResult()
