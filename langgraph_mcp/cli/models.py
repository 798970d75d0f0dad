"""The chat model of a demo thread: the offline scripted model, or a real one named ``provider:model``.

Both ``demo`` (which starts a thread) and ``resume``/``pending`` (which rebuild its graph in a new process)
need the same model, so it is chosen here, from the thread's stored ``--model`` option.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from langgraph_mcp.cli.runner import CliError
from langgraph_mcp.examples.scripted_model import ScriptedChatModel

__all__ = ["demo_model"]


def demo_model(spec: str | None) -> BaseChatModel:
    """The scripted model, or ``init_chat_model(spec)`` for ``--model provider:model``."""
    if not spec:
        return ScriptedChatModel()
    try:
        from langchain.chat_models import init_chat_model  # optional dependency (the `agents` extra)
    except ImportError as exc:
        raise CliError(
            f"--model {spec} needs the `langchain` package: pip install 'langgraph-mcp[agents]' "
            "(plus the provider's package, e.g. langchain-openai)"
        ) from exc
    try:
        model = init_chat_model(spec)
    except Exception as exc:  # missing provider package, unknown provider, missing API key...
        raise CliError(f"--model {spec}: {exc}") from exc
    if not isinstance(model, BaseChatModel):
        raise CliError(f"--model {spec}: init_chat_model returned {type(model).__name__}, not a chat model")
    return model
