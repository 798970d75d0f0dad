"""An MCP server whose tool asks the client's model for a completion (``sampling/createMessage``), both eras.

``build_server()`` returns ``(server, seen)``: ``seen`` is the server's own record of every completion the tool body
received (``{"text", "model"}``), so a test checks exactly what the server got. With ``SAMPLING_SEEN_FILE`` set
(a subprocess: the browser tier) each record is also appended to that file as one JSON line. The request comes from a resolver
(``Resolve`` → ``Sample``): pushed mid-call on 2025-11-25, an ``InputRequiredResult`` round on 2026-07-28.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Annotated, Any

import mcp.types as types
from mcp.server.mcpserver import Elicit, MCPServer, Resolve, Sample
from pydantic import BaseModel


def ask_model(text: str) -> types.CreateMessageResult | Sample:
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(text=f"Summarize: {text}"))],
        max_tokens=5000,
        system_prompt="You write one-line summaries.",
        model_preferences=types.ModelPreferences(hints=[types.ModelHint(name="small")]),
    )


def ask_model_for_a_title(text: str) -> types.CreateMessageResult | Sample:
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(text=f"Title: {text}"))], max_tokens=50
    )


_ATTEMPTS = itertools.count(1)


def ask_model_anew(text: str) -> types.CreateMessageResult | Sample:
    """A prompt that differs on every attempt of the call (numbered across the process)."""
    prompt = f"Summarize (attempt {next(_ATTEMPTS)}): {text}"
    return Sample([types.SamplingMessage(role="user", content=types.TextContent(text=prompt))], max_tokens=50)


class Tone(BaseModel):
    tone: str


def ask_tone(text: str) -> Tone | Elicit[Tone]:
    return Elicit(f"Which tone for the summary of {text!r}?", Tone)


def ask_model_in_tone(
    text: str, tone: Annotated[Tone, Resolve(ask_tone)]
) -> types.CreateMessageResult | Sample:
    """A completion asked for only once the person answered the question (the round after it)."""
    prompt = f"Summarize in a {tone.tone} tone: {text}"
    return Sample([types.SamplingMessage(role="user", content=types.TextContent(text=prompt))], max_tokens=50)


SEEN_FILE_ENV = "SAMPLING_SEEN_FILE"


class _Seen(list[dict[str, Any]]):
    """The record, also written to ``$SAMPLING_SEEN_FILE`` when set."""

    def append(self, item: dict[str, Any]) -> None:
        super().append(item)
        path = os.environ.get(SEEN_FILE_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(item) + "\n")

    def extend(self, items: Any) -> None:
        for item in items:
            self.append(item)


def build_server() -> tuple[MCPServer, list[dict[str, Any]]]:
    srv = MCPServer("sampler")
    seen: list[dict[str, Any]] = _Seen()

    @srv.tool()
    def summarize(text: str, reply: Annotated[types.CreateMessageResult, Resolve(ask_model)]) -> str:
        """Summarize ``text`` with the client's model."""
        content = reply.content
        got = content.text if isinstance(content, types.TextContent) else str(content)
        seen.append({"text": got, "model": reply.model})
        return f"summary: {got}"

    @srv.tool()
    def summarize_with_title(
        text: str,
        reply: Annotated[types.CreateMessageResult, Resolve(ask_model)],
        title: Annotated[types.CreateMessageResult, Resolve(ask_model_for_a_title)],
    ) -> str:
        """Summarize ``text`` and title it: two completions in one call."""
        got = [c.content.text if isinstance(c.content, types.TextContent) else "" for c in (reply, title)]
        seen.extend({"text": t, "model": reply.model} for t in got)
        return f"summary: {got[0]} / title: {got[1]}"

    @srv.tool()
    def summarize_anew(
        text: str, reply: Annotated[types.CreateMessageResult, Resolve(ask_model_anew)]
    ) -> str:
        """Summarize ``text``, asking with a prompt that changes on every attempt."""
        got = reply.content.text if isinstance(reply.content, types.TextContent) else ""
        seen.append({"text": got, "model": reply.model})
        return f"summary: {got}"

    @srv.tool()
    def summarize_asking(
        text: str,
        tone: Annotated[Tone, Resolve(ask_tone)],
        reply: Annotated[types.CreateMessageResult, Resolve(ask_model)],
    ) -> str:
        """A question and a completion in one round (2026-07-28: one InputRequiredResult holds both)."""
        got = reply.content.text if isinstance(reply.content, types.TextContent) else ""
        seen.append({"text": got, "model": reply.model, "tone": tone.tone})
        return f"{tone.tone} summary: {got}"

    @srv.tool()
    def summarize_in_tone(
        text: str, reply: Annotated[types.CreateMessageResult, Resolve(ask_model_in_tone)]
    ) -> str:
        """A completion whose prompt depends on the person's answer to a question (sampling after elicitation)."""
        got = reply.content.text if isinstance(reply.content, types.TextContent) else ""
        seen.append({"text": got, "model": reply.model})
        return f"summary: {got}"

    @srv.tool()
    def echo(text: str) -> str:
        """Say ``text`` back (asks nothing; a second call for the approval gate to ask about)."""
        return f"echo: {text}"

    return srv, seen


if __name__ == "__main__":  # the CLI tests start it over stdio
    build_server()[0].run()
