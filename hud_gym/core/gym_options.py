"""The typed options of a gym (:class:`GymOptions`): declared once, validated once.

A gym's options (the browser's ``headless``, the desktop's ``allow_shell``, ...) are one frozen
pydantic model, a subclass of :class:`GymOptions` named by the gym's
:class:`~hud_gym.core.gym_type.GymType` (``options=``): each field typed, bounded and described
once, with ``Field(description=...)``. Everything else reads that model:

- the env: ``gymnasium.make(id, headless=True)`` builds the gym's options from its keywords
  (:meth:`GymOptions.build`: a bad value is an :class:`InvalidOptionError` naming the option),
  or takes them whole (``options=BrowserOptions(...)``); ``env.options`` keeps them;
- the controller: it is made with them (``Controller(screen_size, options)``);
- a controller server: a client sends them as JSON (:meth:`GymOptions.to_json`), the server
  validates that JSON with the same model;
- the docs: :func:`options_table` writes the model's fields as a Markdown table
  (``docs/options.md``).

As envpool's ``DefaultConfig`` and ``EnvSpec``: an option is written in one place.

Example:
    >>> from pydantic import Field
    >>> class Counter(GymOptions):
    ...     step_size: int = Field(1, ge=1, description="How much a click adds.")
    >>> Counter.build({"step_size": 2}, "test/Counter-v0").to_json()
    {'step_size': 2}
    >>> Counter.build({"step_size": 0}, "test/Counter-v0")
    Traceback (most recent call last):
    ...
    hud_gym.core.gym_options.InvalidOptionError: test/Counter-v0 option 'step_size': Input should be greater than or equal to 1 (got 0)
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from types import UnionType
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from hud_gym.errors import HudGymError

__all__ = ["GymOptions", "InvalidOptionError", "LimitName", "LimitsOption", "options_table"]

OptionsT = TypeVar("OptionsT", bound="GymOptions")

LimitName = Literal["memory_mb", "pids", "cpu_cores", "cpu_seconds"]
"""The fields of :class:`~hud_gym.controllers.sandbox.limits.ResourceLimits`."""
LimitsOption = dict[LimitName, int | float | None] | None
"""A gym's ``limits`` option: some of the resource limits (the others the gym's defaults; a value
``None``: no limit of that kind), or ``None`` for the gym's defaults. The controller checks the
values (:func:`~hud_gym.controllers.sandbox.limits.parse_limits`)."""


class InvalidOptionError(HudGymError, ValueError):
    """A gym option with a bad value (the message names the option, the problem and the value)."""


_SHORT = reprlib.Repr()
"""Reprs of a client's values and names, bounded (a controller server's client sends them)."""
_SHORT.maxstring = _SHORT.maxother = 120
_SHORT.maxlist = _SHORT.maxdict = _SHORT.maxtuple = 8


def _problem(exc: ValidationError, label: str) -> str:
    first = exc.errors(include_url=False)[0]
    name = ".".join(part if isinstance(part, str) and len(part) <= 64 else _SHORT.repr(part) for part in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{label} option {name or 'options'!r}: {message} (got {_SHORT.repr(first.get('input'))})"


class GymOptions(BaseModel):
    """Base of a gym's options model: frozen, unknown fields refused, every field described.
    A gym without options uses it as it is."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    @classmethod
    def build(cls: type[OptionsT], values: Mapping[str, Any], label: str) -> OptionsT:
        """The options from keyword values (the fields not given keep their defaults).

        Args:
            values: option name to value (each a field of the model).
            label: who takes them, for the message (``"hud/Browser-v0"``).

        Raises:
            InvalidOptionError: an unknown name or a bad value: the first one, named.
        """
        try:
            return cls.model_validate(dict(values))
        except ValidationError as exc:
            raise InvalidOptionError(_problem(exc, label)) from None

    def to_json(self) -> dict[str, Any]:
        """Every option, JSON-ready (what a controller server is sent; :meth:`build` reads it back)."""
        return self.model_dump(mode="json")


def _type_name(annotation: Any) -> str:
    """``annotation`` as written (``int``, ``str | None``, ``'clear' | 'fresh'``, ``tuple[str, ...]``)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _type_name(args[0])
    if origin in (Union, UnionType):
        return " | ".join(_type_name(arg) for arg in args)
    if origin is Literal:
        return " | ".join(repr(arg) for arg in args)
    if origin is not None:
        return f"{origin.__name__}[{', '.join('...' if arg is Ellipsis else _type_name(arg) for arg in args)}]"
    return "None" if annotation is type(None) else getattr(annotation, "__name__", repr(annotation))


def _default(field: Any) -> str:
    if field.default_factory is not None:
        return f"`{field.default_factory()!r}`"
    return f"`{field.default!r}`"


def options_table(model: type[GymOptions]) -> str:
    """The fields of ``model`` as a Markdown table: option, type, default, description."""
    rows = ["| option | type | default | description |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        kind = _type_name(field.annotation)
        description = " ".join((field.description or "").split())
        row = [f"`{name}`", f"`{kind}`", _default(field), description]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    return "\n".join(rows)
