"""Rich output for the CLI: ``tools`` tables, the run transcript, interrupts and their answers, progress bars.

Everything a server or a model sent is printed as plain ``Text`` (never parsed as rich markup), so a tool
result cannot restyle or fake the CLI's own lines. The transcript is printed as the run happens: messages as
nodes finish (each once, even when a resumed run reports a finished task again), interrupts when the run
pauses, and how each was answered.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table
from rich.text import Text

from langgraph_mcp.approval.judge import REMEMBERED_KEY, remembered_note
from langgraph_mcp.calls.results import TEXT_SEPARATOR
from langgraph_mcp.catalog import McpTool, SkippedTool
from langgraph_mcp.cli.pending import PendingMcpInterrupt, Reply
from langgraph_mcp.cli.sampling import render_sampling, sampling_reply_text
from langgraph_mcp.config import ServerSpec
from langgraph_mcp.policy.policy import ApprovalPolicy, Verdict
from langgraph_mcp.questions.elicitation import field_options
from langgraph_mcp.questions.inspection import inspect_url

__all__ = ["RunView", "content_text", "render_tools", "server_target", "structured_content", "verdict_text"]

_HINT_NAMES = {
    "readOnlyHint": ("read-only", "write"),
    "destructiveHint": ("destructive", "non-destructive"),
    "idempotentHint": ("idempotent", "non-idempotent"),
    "openWorldHint": ("open-world", "closed-world"),
}
_VERDICT_STYLE = {"allow": "green", "ask": "yellow", "deny": "red"}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _indented(text: str, by: int = 4) -> Text:
    return Text("\n".join(" " * by + line for line in text.splitlines()))


def _short(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------------------------------------ tools


def declared_text(tool: McpTool) -> str:
    declared = tool.declared_hints
    if not declared:
        return "(none)"
    return ", ".join(f"{key.removesuffix('Hint')}={str(value).lower()}" for key, value in declared.items())


def effective_text(tool: McpTool) -> Text:
    """The effective hints in words; ``*`` marks a value that is the spec default, not declared."""
    text = Text()
    effective = tool.effective_hints
    declared = tool.declared_hints
    for i, (key, (yes, no)) in enumerate(_HINT_NAMES.items()):
        if tool.read_only and key in ("destructiveHint", "idempotentHint"):
            continue  # meaningless for a read-only tool
        if i:
            text.append(" ")
        word = yes if effective[key] else no  # type: ignore[literal-required]
        style = "red" if key == "destructiveHint" and effective["destructiveHint"] else ""
        text.append(word + ("" if key in declared else "*"), style=style)
    return text


def verdict_text(verdict: Verdict) -> Text:
    text = Text(verdict.kind, style=f"bold {_VERDICT_STYLE.get(verdict.kind, '')}")
    if verdict.reason:
        text.append(f" {verdict.reason}")
    if verdict.rule:
        text.append(f" [rule {verdict.rule}]", style="dim")
    return text


def tool_verdict(policy: ApprovalPolicy, tool: McpTool, args: Mapping[str, Any] | None = None) -> Verdict:
    call = ToolCall(name=tool.published_name, args=dict(args or {}), id="", type="tool_call")
    return policy.verdict(call, tool)


def server_target(spec: ServerSpec) -> str:
    """Where a server is: its URL, or its command line (shell-quoted), or ``in-process``."""
    return spec.location()


def render_tools(
    console: Console,
    statuses: Sequence[Mapping[str, Any]],
    tools: Sequence[McpTool],
    skipped: Sequence[SkippedTool],
    policy: ApprovalPolicy,
    targets: Mapping[str, str] | None = None,
) -> None:
    """One table per server: era and status (or the error and the server's URL or command), then each tool,
    its hints and verdict."""
    for status in statuses:
        name = str(status["server"])
        if status.get("error"):
            target = (targets or {}).get(name)
            if target and target in str(status["error"]):  # the error names it already
                target = None
            console.print(
                Text.assemble(
                    (f"{name}", "bold"),
                    ("  FAILED  ", "bold red"),
                    str(status["error"]),
                    (f"\n  (server: {target})" if target else "", "dim"),
                )
            )
            console.print()
            continue
        mine = [t for t in tools if t.server == name]
        era = status.get("era") or "?"
        title = Text.assemble(
            (name, "bold"),
            f"  era: {era} ({status.get('protocol_version') or 'unknown'})",
            f"  server: {status.get('server_info') or '?'}",
            ("  ok", "green"),
            f"  {len(mine)} tools",
        )
        table = Table(title=title, title_justify="left", show_lines=False, expand=False)
        table.add_column("published name", no_wrap=True)
        table.add_column("declared annotations")
        table.add_column("effective hints (* = spec default)")
        table.add_column("verdict")
        for tool in mine:
            table.add_row(
                tool.published_name,
                declared_text(tool),
                effective_text(tool),
                verdict_text(tool_verdict(policy, tool)),
            )
        console.print(table)
        for skip in (s for s in skipped if s.server == name):
            console.print(Text(f"  skipped {skip}", style="yellow"))
        console.print()


# ------------------------------------------------------------------------------------------------ messages


def content_text(content: Any) -> str:
    """A ToolMessage / AIMessage content as text: text blocks joined, media and files named, never inlined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return _json(content)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, dict):
            parts.append(_json(block))
            continue
        kind = block.get("type")
        if (
            kind == "text"
        ):  # one line per block (the separator later text blocks of a result start with: dropped)
            text = str(block.get("text", ""))
            parts.append(text.removeprefix(TEXT_SEPARATOR) if parts else text)
            continue
        mime = block.get("mime_type") or block.get("mimeType") or ""
        where = block.get("url") or (block.get("extras") or {}).get("uri") or ""
        size = f", {len(str(block['base64'])) * 3 // 4} bytes" if "base64" in block else ""
        parts.append(f"[{kind} {mime}{size}{' ' + str(where) if where else ''}]".replace("  ", " "))
    return "\n".join(parts)


def structured_content(message: ToolMessage) -> tuple[bool, Any]:
    """``(True, data)`` when the ToolMessage artifact carries an ``mcp_structured_content`` entry."""
    artifact = message.artifact
    if isinstance(artifact, list):
        for entry in artifact:
            if isinstance(entry, dict) and entry.get("type") == "mcp_structured_content":
                return True, entry.get("data")
    return False, None


def _same_json(text: str, data: Any) -> bool:
    """True when ``text`` is exactly ``data`` as JSON (structured content that repeats the text content)."""
    try:
        return bool(json.loads(text) == data)
    except ValueError:
        return False


def _message_key(message: BaseMessage) -> str:
    if isinstance(message, ToolMessage):
        return f"tool:{message.tool_call_id}"
    if message.id:
        return f"id:{message.id}"
    return f"{message.type}:{_json(message.content)}"


class RunView:
    """Prints one run as it happens. ``transcript=False`` prints tool results only (the ``call`` command)."""

    def __init__(
        self,
        console: Console,
        *,
        transcript: bool = True,
        policy: ApprovalPolicy | None = None,
        tools: Iterable[McpTool] = (),
    ) -> None:
        self.console = console
        self.transcript = transcript
        self.policy = policy
        self.tools = {t.published_name: t for t in tools}
        self._seen: set[str] = set()
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self.printed_results: set[str] = set()
        """tool_call_ids whose result this view printed."""

    # ---------------------------------------------------------------------------------------- messages

    def mark_seen(self, messages: Iterable[BaseMessage]) -> None:
        """Treat ``messages`` as already printed (e.g. the history of a resumed thread)."""
        for message in messages:
            self._seen.add(_message_key(message))

    def messages(self, messages: Iterable[BaseMessage]) -> None:
        """Print the messages not printed yet."""
        for message in messages:
            if not isinstance(message, BaseMessage):
                continue
            key = _message_key(message)
            if key in self._seen:
                continue
            self._seen.add(key)
            self._print_message(message)

    def _print_message(self, message: BaseMessage) -> None:
        if isinstance(message, ToolMessage):
            self._pause_progress()
            self.tool_result(message)
            return
        if not self.transcript:
            return
        self._pause_progress()
        if isinstance(message, HumanMessage):
            self.console.print(Text.assemble(("user", "bold cyan"), " > ", content_text(message.content)))
        elif isinstance(message, AIMessage):
            text = content_text(message.content).strip()
            self.console.print(Text.assemble(("assistant", "bold magenta"), " > ", text or "(no text)"))
            for call in message.tool_calls:
                self.console.print(Text("    ").append_text(self.call_line(call)))
        else:
            self.console.print(Text.assemble((message.type, "bold"), " > ", content_text(message.content)))

    def call_line(self, call: ToolCall) -> Text:
        line = Text.assemble(
            ("call ", "dim"),
            (call["name"], "bold"),
            f" {_json(call.get('args') or {})}",
            (f"  id={call.get('id')}", "dim"),
        )
        tool = self.tools.get(call["name"])
        if self.policy is not None and tool is not None:
            line.append("  ")
            line.append_text(verdict_text(self.policy.verdict(call, tool)))
        return line

    def tool_result(self, message: ToolMessage) -> None:
        self.printed_results.add(message.tool_call_id)
        status = message.status
        remembered = message.response_metadata.get(REMEMBERED_KEY)
        head = Text.assemble(
            ("tool ", "bold blue"),
            (message.name or "?", "bold"),
            (f" ({message.tool_call_id})", "dim"),
            (" ERROR" if status == "error" else " ok", "bold red" if status == "error" else "green"),
        )
        body = content_text(message.content)
        if isinstance(remembered, Mapping):  # said on the line, not as the note meant for chat UIs
            who = " ".join(str(remembered[k]) for k in ("scope", "owner") if remembered.get(k))
            head.append(f" (remembered approval{', ' + who if who else ''})", style="yellow")
            body = body.removesuffix(remembered_note(remembered)).rstrip("\n")
        head.append(" > ")
        if "\n" in body:
            self.console.print(head)
            self.console.print(_indented(body))
        else:
            head.append(body)
            self.console.print(head)
        has_structured, data = structured_content(message)
        if has_structured and _same_json(body, data):
            return
        if has_structured and self.transcript:
            self.console.print(Text.assemble(("    structured: ", "dim"), _short(_json(data))))
        elif has_structured:
            self.console.print(Text("    structured content:", style="dim"))
            self.console.print(_indented(json.dumps(data, indent=2, ensure_ascii=False, default=str)))

    # ---------------------------------------------------------------------------------------- progress

    def progress_event(self, event: Mapping[str, Any]) -> None:
        """Show an ``mcp_progress`` custom stream event as a progress bar per tool call."""
        if self._progress is None:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[note]}"),
                console=self.console,
                transient=False,
            )
            self._progress.start()
        call_id = str(event.get("tool_call_id") or "")
        total = event.get("total")
        progress = event.get("progress")
        note = str(event.get("message") or "")
        task = self._tasks.get(call_id)
        if task is None:
            label = f"{event.get('server', '')}/{event.get('tool', '')}"
            task = self._progress.add_task(label, total=total, note=note)
            self._tasks[call_id] = task
        self._progress.update(
            task,
            completed=float(progress) if isinstance(progress, int | float) else None,
            total=float(total) if isinstance(total, int | float) else None,
            note=note,
        )

    def _pause_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._tasks.clear()

    def end_segment(self) -> None:
        """The run paused or finished: stop any live progress display."""
        self._pause_progress()

    # ---------------------------------------------------------------------------------------- interrupts

    def interrupt(self, item: PendingMcpInterrupt) -> None:
        """Show one pending interrupt, typed."""
        self._pause_progress()
        self.console.print(render_pending(item))

    def answered(self, item: PendingMcpInterrupt, reply: Reply) -> None:
        self.console.print(Text("    ").append_text(reply_text(item, reply)))


def render_pending(item: PendingMcpInterrupt) -> Group:
    """A typed view of one pending interrupt: approval (call, reason, allowed decisions) or elicitation."""
    value = cast(dict[str, Any], item.payload)
    if item.kind == "approval":
        return Group(*_approval_lines(item, value))
    if item.kind == "elicitation":
        return Group(*_elicitation_lines(item, value))
    if item.kind == "authorization":
        return Group(*_authorization_lines(item, value))
    if item.kind in ("sampling", "sampling_review"):
        return render_sampling(item)
    return Group(Text(f"paused: interrupt {item.interrupt_id}: {_short(_json(value))}", style="yellow"))


def _approval_lines(item: PendingMcpInterrupt, value: dict[str, Any]) -> list[Any]:
    lines: list[Any] = []
    lines.append(
        Text.assemble(
            ("paused ", "bold yellow"),
            ("approval", "bold"),
            f" for {value.get('published_name')} ",
            (f"({item.tool_call_id})", "dim"),
        )
    )
    lines.append(Text(f"    arguments: {_json(value.get('arguments', {}))}"))
    lines.append(Text(f"    reason: {value.get('reason', '')}"))
    if value.get("rule"):
        lines.append(Text(f"    rule: {value['rule']}"))
    if isinstance(value.get("expires_at"), int | float):
        when = datetime.datetime.fromtimestamp(value["expires_at"]).astimezone().strftime("%H:%M:%S %Z")
        lines.append(Text(f"    expires: {when} (an approval after that counts as a rejection)"))
    lines.append(Text(f"    allowed: {', '.join(value.get('allowed_decisions', []))}"))
    if value.get("remember"):
        lines.append(Text(f"    can be remembered for: {', '.join(value['remember'])}"))
    return lines


def _elicitation_lines(item: PendingMcpInterrupt, value: dict[str, Any]) -> list[Any]:
    lines: list[Any] = []
    lines.append(
        Text.assemble(
            ("paused ", "bold yellow"),
            ("input requested", "bold"),
            f" by {value.get('published_name')} ",
            (f"({item.tool_call_id}, round {value.get('round', 1)})", "dim"),
        )
    )
    for key, request in (value.get("requests") or {}).items():
        if request.get("mode") == "url":
            lines.append(Text(f"    [{key}] {request.get('message', '')}"))
            seen = inspect_url(str(request.get("url", "")))
            lines.append(Text(f"        URL: {request.get('url')}  (host: {seen.host or '?'})"))
            if seen.warning:
                lines.append(Text(f"        warning: {seen.warning}", style="red"))
            lines.append(Text("        (never opened automatically)", style="dim"))
        else:
            lines.append(Text(f"    [{key}] form: {request.get('message', '')}"))
            schema = request.get("requested_schema") or {}
            required = set(schema.get("required") or [])
            for name, prop in (schema.get("properties") or {}).items():
                options = field_options(prop) if isinstance(prop, Mapping) else None
                kind = prop.get("format") or prop.get("type") or "value"
                if options:
                    kind = "one of " + ", ".join(str(v) for v, _ in options)
                extra = " (required)" if name in required else ""
                hidden = " (hidden)" if name in request.get("sensitive", []) else ""
                lines.append(Text(f"        {name}: {kind}{extra}{hidden}"))
    return lines


def _authorization_lines(item: PendingMcpInterrupt, value: dict[str, Any]) -> list[Any]:
    lines: list[Any] = []
    lines.append(
        Text.assemble(
            ("paused ", "bold yellow"),
            ("sign-in needed", "bold"),
            f" for MCP server {value.get('server')!r} as {value.get('principal')!r} ",
            (f"({item.tool_call_id})", "dim"),
        )
    )
    lines.append(
        Text(f"    at {value.get('host') or '?'}, scopes: {', '.join(value.get('scopes') or []) or '-'}")
    )
    lines.append(Text("    (the link is never opened automatically)", style="dim"))
    return lines


def reply_text(item: PendingMcpInterrupt, reply: Reply) -> Text:
    """How an interrupt was answered, with hidden fields masked."""
    text = Text("answered ", style="bold green")
    value: Any = reply.value
    if item.kind == "approval" and isinstance(value, Mapping):
        text.append_text(_approval_reply(value))
    elif item.kind == "elicitation" and isinstance(value, Mapping):
        text.append(_elicitation_reply(item, value))
    elif item.kind == "authorization" and isinstance(value, Mapping):
        text.append(
            "signed in" if "callback_url" in value else "declined the sign-in"
        )  # the code is not shown
    elif item.kind in ("sampling", "sampling_review"):
        text.append_text(sampling_reply_text(item, value))
    else:
        text.append(_short(_json(value)))
    text.append(f"  ({reply.how})", style="dim")
    return text


def _approval_reply(value: Mapping[str, Any]) -> Text:
    """An approval decision: its type, then the edited args or the rejection message, and what it remembers."""
    text = Text()
    text.append(str(value.get("type")), style="bold")
    if value.get("type") == "edit":
        text.append(f" args={_json(value.get('edited_action', {}).get('args', {}))}")
    elif value.get("message"):
        text.append(f" message={_json(value.get('message'))}")
    if value.get("remember"):
        text.append(f" remember={value['remember']}")
    return text


def _elicitation_reply(item: PendingMcpInterrupt, value: Mapping[str, Any]) -> str:
    """Each request's answer, ``[key] action {content}``, with the request's sensitive fields masked."""
    requests = cast(dict[str, Any], item.payload.get("requests") or {})
    parts = []
    for key, answer in value.items():
        sensitive = set((requests.get(key) or {}).get("sensitive") or [])
        action = answer.get("action") if isinstance(answer, Mapping) else answer
        content = answer.get("content") if isinstance(answer, Mapping) else None
        shown = f"[{key}] {action}"
        if isinstance(content, Mapping):
            masked = {k: ("******" if k in sensitive else v) for k, v in content.items()}
            shown += f" {_json(masked)}"
        parts.append(shown)
    return "; ".join(parts)
