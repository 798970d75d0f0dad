"""Shared pytest fixtures: the anyio backend and the bundled example server in every transport."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
