"""Pydantic ``ValidationError``s read as (location, message) pairs: one reading for config and policy errors.

Pydantic puts a tagged union's tag into an error's location (``servers.fs.stdio.command``) and prefixes a
validator's own ``ValueError`` with ``"Value error, "``; neither means anything to the person who wrote the file.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from pydantic import ValidationError

__all__ = ["Problem", "problems"]


class Problem(NamedTuple):
    """One invalid value: where it is (keys and list indexes, union tags dropped) and what is wrong."""

    location: tuple[str | int, ...]
    message: str


def problems(exc: ValidationError, *, tags: Collection[str] = (), at: int = 2) -> list[Problem]:
    """Every error of ``exc``; a location part at index ``at`` that is one of ``tags`` is left out.

    ``tags`` are the discriminator tags of a tagged union that is the value type of a dict field, so the tag
    sits right after the dict key (``servers.<name>.<tag>.command``: ``at=2``). Parts elsewhere (a server or a
    tool pattern that happens to be called like a tag) are kept.
    """
    out = []
    for error in exc.errors():
        location = tuple(
            part
            for i, part in enumerate(error["loc"])
            if not (i == at and isinstance(part, str) and part in tags)
        )
        out.append(Problem(location, error["msg"].removeprefix("Value error, ")))
    return out
