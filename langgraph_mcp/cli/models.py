"""The chat model of a demo thread: the offline scripted model, or a real one named ``provider:model``.

Both ``demo`` (which starts a thread) and ``resume``/``pending`` (which rebuild its graph in a new process)
need the same model, so it is chosen here, from the thread's stored ``--model`` option. A server config's
``"sampling_model"`` is a string in JSON, resolved here too: ``"scripted"`` (the offline
:class:`~langgraph_mcp.examples.scripted_model.ScriptedSamplingModel`) or ``"provider:model"``.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from langgraph_mcp.config import McpServersConfig
from langgraph_mcp.errors import CliError
from langgraph_mcp.examples.scripted_model import ScriptedChatModel, ScriptedSamplingModel

__all__ = ["demo_model", "with_sampling_models"]


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


def with_sampling_models(config: McpServersConfig) -> McpServersConfig:
    """``config`` with each server's ``sampling_model`` string made a chat model (``"scripted"`` or
    ``"provider:model"``)."""
    servers = {}
    for name, spec in config.servers.items():
        named = spec.sampling_model
        if isinstance(named, str):
            try:
                model = ScriptedSamplingModel() if named == "scripted" else demo_model(named)
            except CliError as exc:
                raise CliError(f"server {name!r}: sampling_model {named!r}: {exc}") from exc
            spec = spec.model_copy(update={"sampling_model": model})
        servers[name] = spec
    return config.model_copy(update={"servers": servers})
