"""A griffe extension: the package's reST docstrings read as Markdown in the API reference.

The docstrings use Sphinx roles (``:class:`~langgraph_mcp.x.Y```), ``::`` before literal blocks and ``\\s``
after a literal for plurals. This rewrites each docstring as it is loaded, leaving the source alone: a role
becomes inline code (``~`` keeps the last dotted part, as Sphinx shows it), ``::`` at the end of a line becomes
``:`` (the indented block after it is already a Markdown code block), and ``\\s`` becomes ``s``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const|ref):`(?P<target>[^`]+)`")
_LABELLED = re.compile(r"^(?P<text>.+?)\s*<(?P<target>[^>]+)>$")


def _role(match: re.Match[str]) -> str:
    target = match.group("target").strip()
    labelled = _LABELLED.match(target)
    if labelled:
        return f"`{labelled.group('text')}`"
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    return f"`{target}`"


def markdown(text: str) -> str:
    """``text`` (a reST docstring) as Markdown."""
    text = _ROLE.sub(_role, text)
    text = re.sub(r"(?<=\S)::$", ":", text, flags=re.M)
    text = re.sub(r"^::$", "", text, flags=re.M)
    return text.replace("``\\s", "``s")


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
