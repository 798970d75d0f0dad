"""The demo server's tools that ask nothing: observability, the file workspace, content samples, failures,
slow calls; and what it shares: ``whoami``, file links, resources and the ``review_file`` prompt."""

import base64
import os
import re
from typing import Any

import anyio
from mcp.server.mcpserver import Audio, Context, Image
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

from langgraph_mcp.examples.demo_state import (
    AUDIO_WAV,
    IMAGE_PNG,
    READ_ONLY_CLOSED,
    READ_ONLY_OPEN,
    DemoServer,
    Forecast,
    SearchHit,
    SearchResults,
    Stats,
)


def add_plain_tools(srv: DemoServer) -> None:
    """Register the tools that ask nothing (in the listing order the demo has always had)."""
    rec = srv.events.record
    files = srv.workspace

    # ------------------------------------------------------------------ observability

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def stats() -> Stats:
        """Return this server instance's event counters ("<tool>.<event>") and process id."""
        return Stats(counts=srv.events.snapshot(), pid=os.getpid())

    @srv.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        )
    )
    def reset_stats() -> str:
        """Clear this server instance's event counters."""
        srv.events.clear()
        return "ok"

    # ------------------------------------------------------------------ plain tools

    @srv.tool(title="Weather forecast", annotations=READ_ONLY_OPEN)
    def get_forecast(city: str, days: int = 3) -> Forecast:
        """Return a (fake) weather forecast for a city."""
        rec("get_forecast", "enter")
        if not 1 <= days <= 14:
            raise ToolError("days must be between 1 and 14")
        cycle = ["sunny", "cloudy", "rain", "windy"]
        return Forecast(
            city=city,
            days=days,
            temps_c=[20.0 + i for i in range(days)],
            conditions=[cycle[i % len(cycle)] for i in range(days)],
        )

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
    def list_files() -> list[str]:
        """List the files in the in-memory workspace."""
        rec("list_files", "enter")
        return sorted(files)

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def read_file(path: str) -> str:
        """Read a file from the in-memory workspace."""
        rec("read_file", "enter")
        if path not in files:
            raise ToolError(f"No such file: {path}")
        return files[path]

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    def write_file(path: str, content: str) -> str:
        """Create or overwrite a file in the in-memory workspace."""
        rec("write_file", "enter")
        files[path] = content
        rec("write_file", "commit", path=path)
        return f"Wrote {len(content)} characters to {path}"

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False))
    def delete_file(path: str) -> str:
        """Delete a file from the in-memory workspace."""
        rec("delete_file", "enter")
        if path not in files:
            raise ToolError(f"No such file: {path}")
        del files[path]
        rec("delete_file", "commit", path=path)
        return f"Deleted {path}"

    @srv.tool()
    def move_file(src: str, dst: str) -> str:
        """Move (rename) a file in the in-memory workspace (no annotations: spec defaults apply)."""
        rec("move_file", "enter")
        if src not in files:
            raise ToolError(f"No such file: {src}")
        files[dst] = files.pop(src)
        rec("move_file", "commit", src=src, dst=dst)
        return f"Moved {src} to {dst}"

    @srv.tool()
    def echo(text: str) -> str:
        """Echo the text back (no annotations)."""
        rec("echo", "enter")
        return text

    @srv.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
    def search_web(query: str) -> SearchResults:
        """Search the web (returns fake results)."""
        rec("search_web", "enter")
        slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-") or "empty"
        hits = [
            SearchHit(
                title=f"{query} - result {i}",
                url=f"https://example.com/{slug}/{i}",
                snippet=f"Everything about {query} (#{i}).",
            )
            for i in (1, 2, 3)
        ]
        return SearchResults(query=query, results=hits)

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def add(a: int, b: int) -> int:
        """Add two integers (structured output {"result": a + b})."""
        rec("add", "enter")
        return a + b

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def make_image() -> Image:
        """Return a tiny PNG image."""
        rec("make_image", "enter")
        return Image(data=IMAGE_PNG, format="png")

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def make_audio() -> Audio:
        """Return a tiny WAV audio clip."""
        rec("make_audio", "enter")
        return Audio(data=AUDIO_WAV, format="wav")

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def mixed_content() -> list[ContentBlock]:
        """Return one of each content block: text, image, audio, resource link, embedded text and blob."""
        rec("mixed_content", "enter")
        return [
            TextContent(text="Here is one of each content type."),
            ImageContent(data=base64.b64encode(IMAGE_PNG).decode(), mime_type="image/png"),
            AudioContent(data=base64.b64encode(AUDIO_WAV).decode(), mime_type="audio/wav"),
            ResourceLink(uri="file:///workspace/notes.txt", name="notes", mime_type="text/plain"),
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="file:///workspace/todo.txt", mime_type="text/plain", text=files.get("todo.txt", "")
                )
            ),
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="file:///workspace/data.bin",
                    mime_type="application/octet-stream",
                    blob=base64.b64encode(bytes(range(16))).decode(),
                )
            ),
        ]

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def with_meta() -> CallToolResult:
        """Return a result with content, structuredContent and a result-level _meta {"demo/trace": "abc"}.

        On the 2026-07-28 era the SDK merges its "io.modelcontextprotocol/serverInfo" stamp into the
        result _meta; the "demo/trace" key survives on both eras.
        """
        rec("with_meta", "enter")
        return CallToolResult(
            content=[TextContent(text="result with _meta")],
            structured_content={"trace": "abc", "ok": True},
            _meta={"demo/trace": "abc"},
        )

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def always_fails(reason: str) -> str:
        """Always fail with a tool error (isError result carrying the reason)."""
        rec("always_fails", "enter")
        raise ToolError(f"always_fails: {reason}")

    @srv.tool(annotations=READ_ONLY_CLOSED)
    async def slow(ctx: Context, seconds: float = 1.0, steps: int = 4) -> str:
        """Work for `seconds`, reporting progress after each of `steps` even steps, then return "done"."""
        rec("slow", "enter")
        steps = max(1, steps)
        for i in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(i, steps, f"step {i}")
        return "done"

    @srv.tool(annotations=READ_ONLY_CLOSED)
    async def sleep(seconds: float) -> str:
        """Sleep for `seconds` (for hang and timeout tests)."""
        rec("sleep", "enter")
        await anyio.sleep(seconds)
        return f"slept {seconds}s"


def add_sharing_tools(srv: DemoServer) -> None:
    """Register ``whoami``, ``share_file``, the workspace resources and the ``review_file`` prompt."""
    files = srv.workspace

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def whoami(ctx: Context) -> dict[str, Any]:
        """Say who is calling: the request's X-User header, and whether it carried a bearer token (over HTTP)."""
        headers = ctx.headers or {}
        return {
            "user": headers.get("x-user"),
            "bearer": headers.get("authorization", "").startswith("Bearer "),
        }

    @srv.tool(annotations=READ_ONLY_CLOSED)
    def share_file(name: str) -> list[ContentBlock]:
        """Share a workspace file as a link (``resource_link`` to ``demo://files/<name>``), not its content."""
        if name not in files:
            raise ToolError(f"no such file: {name}")
        link = ResourceLink(uri=f"demo://files/{name}", name=name, mime_type="text/plain")
        return [TextContent(text=f"Here is {name}."), link]

    @srv.resource("demo://files/{name}", mime_type="text/plain")
    def workspace_file(name: str) -> str:
        """A file of the demo workspace."""
        if name not in files:
            raise ValueError(f"no such file: {name}")
        return files[name]

    @srv.resource("demo://logo.png", mime_type="image/png")
    def logo() -> bytes:
        """The demo's tiny PNG."""
        return IMAGE_PNG

    @srv.prompt()
    def review_file(name: str) -> str:
        """Ask for a review of a workspace file."""
        return f"Please review {name}:\n\n{files.get(name, '(no such file)')}"
