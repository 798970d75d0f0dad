"""An mkdocs hook: a code fence's test words (``name=``, ``into=``, ``fragment``, ``no-run``, ``run``, ...) stay out
of the rendered page.

The pages' fences carry words that ``tests/users/test_readme.py`` reads (its docstring has the rule). Markdown's
fenced-code extension would not take them as a fence at all, so before rendering each fence keeps its language,
and a ``name=FILE`` becomes the block's title (the file the page tells the reader to save it as).
"""

from __future__ import annotations

import re
from typing import Any

_FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})```(?P<lang>[\w+-]*)(?P<words>[^\n`]*)$", re.M)


def _fence(match: re.Match[str]) -> str:
    words = match.group("words").split()
    name = next((w.split("=", 1)[1] for w in words if w.startswith("name=")), None)
    if match.group("lang") == "python" and "fragment" in words:
        name = None  # a fragment's name is only the splicing key
    title = f' title="{name}"' if name else ""
    return f"{match.group('indent')}```{match.group('lang')}{title}"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return _FENCE_OPEN.sub(_fence, markdown)
