"""Models for ``interrupt(value, response_schema=...)``: our own check runs before LangGraph saves a resume value.

LangGraph 1.2 validates a resume value against a pydantic ``response_schema`` when ``interrupt()`` takes it and
saves it only if it passes: a failure raises ``pydantic.ValidationError`` and the same interrupt stays pending (a
value refused *after* ``interrupt()`` returned would be replayed forever). The approval gate (decisions) and the
elicitation asker (answers) both need that, each with a check of its own and a JSON Schema shown to clients as
``Interrupt.response_schema``; :func:`checked_response` builds one such model.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast

from pydantic import ConfigDict, GetJsonSchemaHandler, RootModel, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = ["CheckedResponse", "checked_response"]


class CheckedResponse(RootModel[Any]):
    """Base of every response model: validating runs ``check`` (its result becomes ``root``), and clients are
    shown ``shown_schema``. Errors never echo the input (``hide_input_in_errors``): answers may hold secrets."""

    model_config = ConfigDict(hide_input_in_errors=True)

    check: ClassVar[Callable[[object], object]]
    shown_schema: ClassVar[dict[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _run_check(cls, data: Any) -> Any:
        if isinstance(data, CheckedResponse):  # e.g. an instance of a rebuilt class
            data = data.root
        return cls.check(data)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return copy.deepcopy(cls.shown_schema)


R = TypeVar("R", bound=CheckedResponse)


def checked_response(
    base: type[R],
    name: str,
    check: Callable[[object], object],
    shown_schema: dict[str, Any],
    **attributes: Any,
) -> type[R]:
    """A subclass of ``base`` named ``name`` that validates with ``check`` and shows ``shown_schema`` (titled
    ``name`` unless it has a title).

    ``check`` raises ``ValueError`` (our ``AnswerError``/``DecisionError``) for a bad value; pydantic turns it into
    the ``ValidationError`` LangGraph raises. ``attributes`` become class attributes (e.g. the requests checked).
    """
    namespace = {
        "__module__": base.__module__,
        "check": staticmethod(check),
        "shown_schema": {"title": name, **shown_schema},
        **attributes,
    }
    return cast(type[R], type(name, (base,), namespace))
