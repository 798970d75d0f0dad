"""The four string formats MCP elicitation allows (``date``, ``date-time``, ``email``, ``uri``), by our own rules.

``date`` and ``date-time`` are RFC 3339, ``email`` the WHATWG ``<input type=email>`` rule, ``uri`` an absolute
RFC 3986 URI: checked the same whatever optional ``jsonschema`` format packages are installed.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import jsonschema

__all__ = ["FORMAT_CHECKER", "is_date_time", "is_email", "is_uri"]

_EMAIL_RE = re.compile(
    r"[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*"
)
_DATE_TIME_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))", re.ASCII
)
_URI_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")


def is_email(instance: object) -> bool:
    """WHATWG "valid e-mail address" (what ``<input type=email>`` accepts): ``local@label(.label)*``."""
    return not isinstance(instance, str) or _EMAIL_RE.fullmatch(instance) is not None


def is_date_time(instance: object) -> bool:
    """RFC 3339 ``date-time``."""
    if not isinstance(instance, str):
        return True
    m = _DATE_TIME_RE.fullmatch(instance)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    try:
        date(year, month, day)
    except ValueError:
        return False
    if hour > 23 or minute > 59 or second > 60:  # 60: leap second
        return False
    return m.group(7) is None or (int(m.group(8)) <= 23 and int(m.group(9)) <= 59)


def is_uri(instance: object) -> bool:
    """Absolute RFC 3986 URI: a scheme, then only URI characters."""
    return not isinstance(instance, str) or _URI_RE.fullmatch(instance) is not None


def _make_format_checker() -> Any:
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
    # Our own checkers for the formats elicitation allows, so validation never depends on which optional
    # jsonschema format packages happen to be installed (and no process pays ~1 s importing them).
    checker.checkers["email"] = (is_email, ())
    checker.checkers["date-time"] = (is_date_time, ())
    checker.checkers["uri"] = (is_uri, ())
    return checker


FORMAT_CHECKER = _make_format_checker()
"""A ``jsonschema`` format checker whose ``date``, ``date-time``, ``email`` and ``uri`` are the functions above."""
