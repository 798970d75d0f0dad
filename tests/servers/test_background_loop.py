"""The one background event loop class: McpServers' sync API and the CLI both run coroutines through it."""

from __future__ import annotations

import asyncio
import contextvars
import signal
import threading

import pytest

from langgraph_mcp.servers.sync import BackgroundLoop

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


def test_results_errors_context_and_the_factory_thread() -> None:
    loop = BackgroundLoop("test-loop")
    threads: list[str] = []

    async def value() -> str:
        return VAR.get()

    def factory() -> object:
        threads.append(threading.current_thread().name)
        return value()

    async def boom() -> None:
        raise ValueError("boom")

    try:
        assert loop.run(value()) == "unset"
        VAR.set("caller's")
        assert loop.run(value()) == "caller's"  # a copy of the caller's context by default
        other = contextvars.Context()
        assert loop.run(value(), context=other) == "unset"
        assert loop.run(factory) == "caller's"  # type: ignore[arg-type]
        assert threads == ["test-loop"]
        with pytest.raises(ValueError, match="boom"):
            loop.run(boom())
    finally:
        loop.close()
    assert loop.loop.is_closed()


def test_ctrl_c_while_waiting_cancels_the_coroutine_and_reaches_the_caller() -> None:
    loop = BackgroundLoop()
    cancelled = threading.Event()

    async def hangs_after_ctrl_c() -> None:
        main = threading.main_thread().ident
        assert main is not None
        signal.pthread_kill(main, signal.SIGINT)  # as if the user pressed Ctrl-C while the caller waits
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run(hangs_after_ctrl_c())
        assert cancelled.wait(10)
    finally:
        loop.close()
