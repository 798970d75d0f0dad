"""The replies the CLI collects for pending interrupts, and a few helpers over the typed pending view.

What a thread waits for is read with :func:`langgraph_mcp.questions.resume.apending_for_thread` (typed
:class:`~langgraph_mcp.questions.resume.PendingMcpInterrupt` items); each gets one :class:`Reply` (a decision for an
approval, answers for an elicitation), and :func:`langgraph_mcp.questions.resume.resume_command` turns them into the one
``Command`` that resumes the thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.types import Command

from langgraph_mcp.questions.resume import PendingMcpInterrupt, resume_command

__all__ = ["PendingMcpInterrupt", "Reply", "command_for", "published_name"]


@dataclass(frozen=True)
class Reply:
    """A reply to one pending item: a ``Decision`` (approval) or ``ElicitationAnswers`` (elicitation)."""

    value: Any
    how: str
    """Where the reply came from, for the transcript: ``"you"``, ``"--yes"``, ``"answers file"``."""


def published_name(item: PendingMcpInterrupt) -> str:
    return str(item.payload.get("published_name") or "")


def command_for(pending: Sequence[PendingMcpInterrupt], replies: dict[str, Reply]) -> Command[Any]:
    """The resume ``Command`` for ``replies`` keyed by interrupt id (values are checked again there)."""
    decisions = {
        i.interrupt_id: replies[i.interrupt_id].value
        for i in pending
        if i.interrupt_id in replies and i.kind in ("approval", "sampling", "sampling_review")
    }
    answers = {
        i.interrupt_id: replies[i.interrupt_id].value
        for i in pending
        if i.interrupt_id in replies and i.kind == "elicitation"
    }
    sign_ins = {
        i.interrupt_id: replies[i.interrupt_id].value
        for i in pending
        if i.interrupt_id in replies and i.kind == "authorization"
    }
    return resume_command(
        list(pending_to_interrupts(pending)),
        answers=answers or None,
        decisions=decisions or None,
        sign_ins=sign_ins or None,
    )


def pending_to_interrupts(pending: Sequence[PendingMcpInterrupt]) -> list[dict[str, Any]]:
    """``{"id", "value"}`` dicts (the SDK shape ``resume_command`` reads) for typed pending items."""
    return [{"id": i.interrupt_id, "value": i.payload} for i in pending]
