"""The one door to dependencies' private internals: each access guarded, with a documented fallback or a clear error.

No other module of the package names a private module or attribute of a dependency. Each entry is guarded the way
``langgraph/prebuilt/tool_node.py`` guards ``CONFIG_KEY_READ_STATE``: an import or attribute check, then either a
documented fallback or an :class:`~langgraph_mcp.errors.IncompatibleDependencyError` naming the installed version.
``tests/test_compat_langgraph.py`` checks every entry against the installed dependency, so an upgrade that changes
one fails there with a message saying which.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from typing import Any, Protocol, cast

from langgraph_mcp.errors import IncompatibleDependencyError

# ================================================================================================= langgraph
#
# What LangGraph 1.2 has no public API for:
# * ``RunnableCallable`` — the node base class ``ToolNode`` itself subclasses (config injection, sync + async).
# * The task's resume values — ``interrupt()`` keeps them on the pregel scratchpad; the answer book needs to see
#   all of them (to match stored answers to questions by key) without consuming them.
# * Whether the run has a checkpointer — LangGraph puts it in ``config["configurable"]``.

LANGGRAPH_VERSION = importlib.metadata.version("langgraph")

try:
    from langgraph._internal._runnable import RunnableCallable as RunnableCallable
except ImportError as exc:  # pragma: no cover - no fallback: the node classes are built on it
    raise IncompatibleDependencyError(
        "langgraph",
        LANGGRAPH_VERSION,
        "has no langgraph._internal._runnable.RunnableCallable, the base class of McpToolNode and the approval "
        "gate (as of langgraph.prebuilt.ToolNode); langgraph-mcp supports langgraph 1.2.x",
    ) from exc

# Fallbacks for the config keys: a langgraph that stops exporting a constant still sets the key under this name.
try:
    # Public (kept in langgraph.constants.__all__ for backwards compatibility).
    from langgraph.constants import CONFIG_KEY_CHECKPOINTER
except ImportError:  # pragma: no cover
    CONFIG_KEY_CHECKPOINTER = "__pregel_checkpointer"

try:
    from langgraph._internal._constants import CONFIG_KEY_SCRATCHPAD
except ImportError:  # pragma: no cover
    CONFIG_KEY_SCRATCHPAD = "__pregel_scratchpad"


class TaskScratchpad(Protocol):
    """The parts of LangGraph's ``PregelScratchpad`` the answer book reads."""

    resume: list[Any]
    get_null_resume: Callable[[bool], Any]


def has_checkpointer(configurable: Mapping[str, Any]) -> bool:
    """Whether the run behind ``config["configurable"]`` has a checkpointer (so a task can pause)."""
    return configurable.get(CONFIG_KEY_CHECKPOINTER) is not None


def in_graph_task(configurable: Mapping[str, Any]) -> bool:
    """Whether ``config["configurable"]`` belongs to a task of a running graph (not a plain runnable call)."""
    return CONFIG_KEY_SCRATCHPAD in configurable


def task_scratchpad(configurable: Mapping[str, Any]) -> TaskScratchpad | None:
    """The running task's scratchpad, or ``None`` outside a graph task. Raises
    :class:`~langgraph_mcp.errors.IncompatibleDependencyError` if LangGraph changed its shape."""
    scratchpad = configurable.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None:
        return None
    resume = getattr(scratchpad, "resume", None)
    get_null_resume = getattr(scratchpad, "get_null_resume", None)
    if not isinstance(resume, list) or not callable(get_null_resume):
        raise IncompatibleDependencyError(
            "langgraph",
            LANGGRAPH_VERSION,
            "changed the pregel task scratchpad (expected a 'resume' list and 'get_null_resume'), which "
            "langgraph-mcp reads to match stored elicitation answers; langgraph-mcp supports langgraph 1.2.x",
        )
    return cast(TaskScratchpad, scratchpad)


def stored_resume_values(scratchpad: TaskScratchpad) -> list[Any]:
    """Every resume value of the task in interrupt order, including a fresh one not yet consumed by
    ``interrupt()`` (without consuming it)."""
    values = list(scratchpad.resume)
    fresh = _unconsumed_null_resume(scratchpad)
    if fresh is not None:
        values.append(fresh)
    return values


def _unconsumed_null_resume(scratchpad: TaskScratchpad) -> Any:
    """The plain ``Command(resume=v)`` value while no ``interrupt()`` of the task has taken it yet.

    ``get_null_resume(False)`` keeps returning the value after ``interrupt()`` consumed it (and appended the
    same object to ``resume``), so a consumed one is recognised by identity with the last stored value.
    """
    fresh = scratchpad.get_null_resume(False)
    if fresh is not None and scratchpad.resume and scratchpad.resume[-1] is fresh:
        return None
    return fresh


try:
    from langgraph._internal._constants import CONFIG_KEY_RESUME_MAP
except ImportError:  # pragma: no cover
    CONFIG_KEY_RESUME_MAP = "__pregel_resume_map"

_interrupt_id: Callable[[str, int], str] | None
try:
    from langgraph.types import _interrupt_id
except ImportError:  # pragma: no cover - fallback: fresh map answers are not told apart (see below)
    _interrupt_id = None


def fresh_resume_index(scratchpad: TaskScratchpad, configurable: Mapping[str, Any]) -> int | None:
    """The index (in :func:`stored_resume_values`) of a resume value given by *this* invocation, not yet checked.

    A plain ``Command(resume=v)`` is the null resume (last, not yet in ``resume``). A ``Command(resume={id: v})``
    value is appended to ``resume`` by LangGraph before the task runs, under the interrupt id of the next index
    (or, for older checkpoints, the first one); it is recognised by identity with the map entry. Without
    LangGraph's ``_interrupt_id`` (a future version) map answers are not recognised and ``None`` is returned.
    """
    null = scratchpad.get_null_resume(False)
    if null is not None:  # consumed already (see _unconsumed_null_resume): it sits last in ``resume``
        return (
            len(scratchpad.resume) - 1
            if _unconsumed_null_resume(scratchpad) is None
            else len(scratchpad.resume)
        )
    resume_map = configurable.get(CONFIG_KEY_RESUME_MAP)
    if (
        not isinstance(resume_map, Mapping)
        or not resume_map
        or not scratchpad.resume
        or _interrupt_id is None
    ):
        return None
    last = len(scratchpad.resume) - 1
    ns = str(configurable.get("checkpoint_ns", ""))
    for interrupt_id in (_interrupt_id(ns, last), _interrupt_id(ns, 0)):
        if interrupt_id in resume_map and resume_map[interrupt_id] is scratchpad.resume[last]:
            return last
    return None


# ================================================================================================= mcp
