"""The CLI's view of a server's sampling request and of a completion under review: shown, asked, checked.

A sampling request (``mcp_sampling``) shows the server, the tool, the system prompt, every message and the token
figures (what the model may use, what the server asked for); the answer is ``approve``, ``edit`` (a new prompt: one
user message) or ``reject``. A completion review (``mcp_sampling_review``, ``review_completion=True``) shows the
model's text and the prompt it answers; the answer is ``approve``, ``edit`` (the text the server gets instead) or
``reject``. An answers-file entry is checked exactly as :func:`~langgraph_mcp.questions.resume.resume_command` checks
it (``{"type": "edit", "messages": [...]}`` for a request, ``{"type": "edit", "text": ...}`` for a review).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from rich.console import Console, Group
from rich.prompt import Prompt
from rich.text import Text

from langgraph_mcp.questions.resume import PendingMcpInterrupt, sampling_decision
from langgraph_mcp.questions.sampling import sampling_texts

__all__ = ["ask_sampling", "check_sampling_answer", "render_sampling", "sampling_reply_text"]

_KINDS = ("sampling", "sampling_review")


def _messages(value: Mapping[str, Any]) -> list[Text]:
    return [
        Text(f"    [{role}] {text}")
        for role, text in sampling_texts([dict(m) for m in value.get("messages") or []])
    ]


def render_sampling(item: PendingMcpInterrupt) -> Group:
    """A sampling request or a completion under review, as the terminal shows it."""
    value = cast(Mapping[str, Any], item.payload)
    lines: list[Any] = []
    if item.kind == "sampling":
        lines.append(
            Text.assemble(
                ("paused ", "bold yellow"),
                ("sampling request", "bold"),
                f" by {value.get('published_name')} ",
                (f"({item.tool_call_id})", "dim"),
            )
        )
        lines.append(Text(f"    server {value.get('server')!r} asks your model for a completion"))
        lines.append(Text(f"    system prompt: {value.get('system_prompt') or '-'}"))
        lines.extend(_messages(value))
        lines.append(
            Text(
                f"    tokens: up to {value.get('max_tokens')} "
                f"(the server asked for {value.get('requested_max_tokens')})"
            )
        )
        if value.get("model_preferences"):
            lines.append(Text(f"    model preferences: {json.dumps(value['model_preferences'])}"))
        return Group(*lines)
    lines.append(
        Text.assemble(
            ("paused ", "bold yellow"),
            ("completion review", "bold"),
            f" for {value.get('published_name')} ",
            (f"({item.tool_call_id})", "dim"),
        )
    )
    lines.append(
        Text(
            f"    your model ({value.get('model')}) answered server {value.get('server')!r} "
            f"(up to {value.get('max_tokens')} tokens)"
        )
    )
    lines.append(Text(f"    system prompt: {value.get('system_prompt') or '-'}"))
    lines.extend(_messages(value))
    lines.append(Text(f"    completion: {value.get('completion')}"))
    return Group(*lines)


def sampling_reply_text(item: PendingMcpInterrupt, value: Any) -> Text:
    """How a sampling request or review was answered (the edited prompt or text shown)."""
    text = Text(str(value.get("type") if isinstance(value, Mapping) else value), style="bold")
    if isinstance(value, Mapping) and value.get("type") == "edit":
        if item.kind == "sampling":
            prompt = " / ".join(t for _, t in sampling_texts([dict(m) for m in value.get("messages") or []]))
            text.append(f" prompt={json.dumps(prompt, ensure_ascii=False)}")
        else:
            text.append(f" text={json.dumps(value.get('text'), ensure_ascii=False)}")
    elif isinstance(value, Mapping) and value.get("message"):
        text.append(f" message={json.dumps(value.get('message'), ensure_ascii=False)}")
    return text


def check_sampling_answer(item: PendingMcpInterrupt, value: Any) -> Any:
    """An answers-file entry for a sampling request or review, checked (raises ``ResumeError``)."""
    return sampling_decision(item, value, "answers file")


def ask_sampling(console: Console, item: PendingMcpInterrupt) -> Any:
    """Ask in the terminal: approve, edit (a new prompt, or the text the server gets) or reject."""
    review = item.kind == "sampling_review"
    help_lines = (
        ("approve", "send the completion to the server"),
        ("edit", "send other text instead"),
        ("reject", "the server gets a refusal, never the completion"),
    )
    if not review:
        help_lines = (
            ("approve", "let your model answer the server's messages"),
            ("edit", "let it answer your prompt instead"),
            ("reject", "the server gets a refusal; your model is not called"),
        )
    for name, meaning in help_lines:
        console.print(Text(f"    {name}: {meaning}", style="dim"))
    options = ["approve", "edit", "reject"]
    label = "Completion" if review else "Sampling request"
    while True:
        raw = (
            str(
                Prompt.ask(
                    Text.assemble(
                        f"{label} for {item.payload.get('published_name')} ",
                        ("[approve/edit/reject]", "magenta"),
                    ),
                    console=console,
                )
            )
            .strip()
            .lower()
        )
        matches = [o for o in options if raw and o.startswith(raw)]
        if len(matches) != 1:
            console.print(Text(f"Please answer one of: {', '.join(options)}", style="red"))
            continue
        choice = matches[0]
        if choice == "approve":
            return {"type": "approve"}
        if choice == "reject":
            reason = Prompt.ask("Reason (optional)", console=console, default="", show_default=False)
            return {"type": "reject", **({"message": reason} if reason else {})}
        if review:
            new_text = Prompt.ask(
                "Text to send instead", console=console, default=str(item.payload.get("completion"))
            )
            return {"type": "edit", "text": new_text}
        prompt = Prompt.ask("Prompt for your model", console=console)
        if not prompt.strip():
            console.print(Text("The prompt can't be empty", style="red"))
            continue
        return {"type": "edit", "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}]}
