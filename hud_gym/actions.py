"""Common Language Actions (CLA): the action vocabulary every hud-gym environment understands.

The models keep HUD's names, fields and defaults (``hud.adapters.common.types``), with the defects
of HUD fixed: key names are normalised (``"Enter"`` becomes ``"enter"``), scroll amounts are
pixels with positive = down/right on both axes at once, and ``WaitAction.time`` is milliseconds.

Empty optional lists (``pattern=[]``, ``hold_keys=[]``) mean the same as ``None`` and are stored as
``None``, and ``TypeAction.enter_after=None`` is stored as ``False``, so every action has one
canonical form.

Example:
    >>> from hud_gym.actions import parse_action
    >>> parse_action({"type": "press", "keys": ["Control", "A"]})
    PressAction(type='press', reasoning=None, logs=None, keys=['ctrl', 'a'])
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from hud_gym.errors import HudGymError
from hud_gym.keys import normalize_keys

__all__ = [
    "ActionError",
    "ActionType",
    "Button",
    "CLA",
    "CLAAction",
    "ClickAction",
    "CustomAction",
    "DragAction",
    "KeyDownAction",
    "KeyUpAction",
    "MoveAction",
    "Point",
    "PositionFetch",
    "PressAction",
    "ResponseAction",
    "ScreenshotFetch",
    "ScrollAction",
    "TypeAction",
    "WaitAction",
    "parse_action",
    "parse_actions",
]

Button = Literal["left", "right", "middle", "back", "forward"]
"""Mouse buttons. HUD's legacy ``"wheel"`` is accepted as ``"middle"``."""


class ActionType(str, Enum):
    """The CLA action types, in the order the action space's ``action_type`` index uses."""

    CLICK = "click"
    PRESS = "press"
    KEYDOWN = "keydown"
    KEYUP = "keyup"
    TYPE = "type"
    SCROLL = "scroll"
    MOVE = "move"
    WAIT = "wait"
    DRAG = "drag"
    RESPONSE = "response"
    SCREENSHOT = "screenshot"
    POSITION = "position"
    CUSTOM = "custom"


class ActionError(HudGymError, ValueError):
    """An action that cannot be parsed or executed. The message names the field at fault."""


class Point(BaseModel):
    """A pixel position (or, for offsets and scroll amounts, a pixel vector). Origin top-left."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: int
    y: int


def _point_like(value: Any) -> Any:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return {"x": value[0], "y": value[1]}
    return value


def _keys(value: Any) -> Any:
    if value is None:
        return None
    return normalize_keys(value)


def _none_if_empty(value: Any) -> Any:
    return None if value is not None and len(value) == 0 else value


class CLAAction(BaseModel):
    """Base of every CLA action. ``reasoning`` and ``logs`` are agent annotations, never executed."""

    model_config = ConfigDict(extra="forbid")

    type: str
    reasoning: str | None = None
    logs: str | dict[str, Any] | list[str | dict[str, Any]] | None = None


class ClickAction(CLAAction):
    """Click at ``point`` (the current pointer position when ``None``).

    ``pattern`` lists the delays in ms between repeated clicks: ``[100]`` is a double click,
    ``[100, 100]`` a triple click. ``hold_keys`` are held down during the click.
    """

    type: Literal["click"] = "click"
    point: Point | None = None
    button: Button = "left"
    pattern: list[Annotated[int, Field(ge=0)]] | None = None
    hold_keys: list[str] | None = None

    _point = field_validator("point", mode="before")(_point_like)
    _hold = field_validator("hold_keys", mode="before")(_keys)
    _empty = field_validator("pattern", "hold_keys", mode="after")(_none_if_empty)

    @field_validator("button", mode="before")
    @classmethod
    def _legacy_wheel(cls, value: Any) -> Any:
        return "middle" if value == "wheel" else value


class PressAction(CLAAction):
    """Press ``keys`` together as one hotkey (all down in order, then up in reverse order)."""

    type: Literal["press"] = "press"
    keys: Annotated[list[str], Field(min_length=1)]

    _keys = field_validator("keys", mode="before")(_keys)


class KeyDownAction(CLAAction):
    """Press and hold ``keys``, in order."""

    type: Literal["keydown"] = "keydown"
    keys: Annotated[list[str], Field(min_length=1)]

    _keys = field_validator("keys", mode="before")(_keys)


class KeyUpAction(CLAAction):
    """Release ``keys``, in reverse order."""

    type: Literal["keyup"] = "keyup"
    keys: Annotated[list[str], Field(min_length=1)]

    _keys = field_validator("keys", mode="before")(_keys)


class TypeAction(CLAAction):
    """Type ``text`` (any Unicode), then press enter when ``enter_after``."""

    type: Literal["type"] = "type"
    text: str
    enter_after: bool = False

    @field_validator("enter_after", mode="before")
    @classmethod
    def _none_is_false(cls, value: Any) -> Any:
        return False if value is None else value


class ScrollAction(CLAAction):
    """Scroll by ``scroll`` pixels (positive x = right, positive y = down) with the pointer at ``point``."""

    type: Literal["scroll"] = "scroll"
    point: Point | None = None
    scroll: Point | None = None
    hold_keys: list[str] | None = None

    _points = field_validator("point", "scroll", mode="before")(_point_like)
    _hold = field_validator("hold_keys", mode="before")(_keys)
    _empty = field_validator("hold_keys", mode="after")(_none_if_empty)


class MoveAction(CLAAction):
    """Move the pointer to ``point``, or by ``offset`` pixels when ``point`` is ``None``."""

    type: Literal["move"] = "move"
    point: Point | None = None
    offset: Point | None = None

    _points = field_validator("point", "offset", mode="before")(_point_like)


class WaitAction(CLAAction):
    """Wait ``time`` milliseconds."""

    type: Literal["wait"] = "wait"
    time: Annotated[int, Field(ge=0)]


class DragAction(CLAAction):
    """Press at ``path[0]``, move through every following point, release at the last one.

    ``pattern`` gives the delays in ms between path points (cycled); ``hold_keys`` are held
    during the whole drag.
    """

    type: Literal["drag"] = "drag"
    path: Annotated[list[Point], Field(min_length=2)]
    pattern: list[Annotated[int, Field(ge=0)]] | None = None
    hold_keys: list[str] | None = None

    _hold = field_validator("hold_keys", mode="before")(_keys)
    _empty = field_validator("pattern", "hold_keys", mode="after")(_none_if_empty)

    @field_validator("path", mode="before")
    @classmethod
    def _path_points(cls, value: Any) -> Any:
        return [_point_like(p) for p in value] if isinstance(value, (list, tuple)) else value


class ResponseAction(CLAAction):
    """The agent's final answer. It ends the episode and is graded by the task's evaluator."""

    type: Literal["response"] = "response"
    text: str


class ScreenshotFetch(CLAAction):
    """Ask for a fresh screenshot (every step returns one anyway)."""

    type: Literal["screenshot"] = "screenshot"


class PositionFetch(CLAAction):
    """Ask for the pointer position; it is reported in ``info["position"]``."""

    type: Literal["position"] = "position"


class CustomAction(CLAAction):
    """A gym-specific action by name, e.g. ``CustomAction(action="goto", args={"url": "..."})``."""

    type: Literal["custom"] = "custom"
    action: str
    args: dict[str, Any] | None = None


CLA = Annotated[
    ClickAction
    | PressAction
    | KeyDownAction
    | KeyUpAction
    | TypeAction
    | ScrollAction
    | MoveAction
    | WaitAction
    | DragAction
    | ResponseAction
    | ScreenshotFetch
    | PositionFetch
    | CustomAction,
    Field(discriminator="type"),
]
"""Any CLA action, discriminated on ``type``."""

ACTION_CLASSES: dict[ActionType, type[CLAAction]] = {
    ActionType.CLICK: ClickAction,
    ActionType.PRESS: PressAction,
    ActionType.KEYDOWN: KeyDownAction,
    ActionType.KEYUP: KeyUpAction,
    ActionType.TYPE: TypeAction,
    ActionType.SCROLL: ScrollAction,
    ActionType.MOVE: MoveAction,
    ActionType.WAIT: WaitAction,
    ActionType.DRAG: DragAction,
    ActionType.RESPONSE: ResponseAction,
    ActionType.SCREENSHOT: ScreenshotFetch,
    ActionType.POSITION: PositionFetch,
    ActionType.CUSTOM: CustomAction,
}

_CLA_ADAPTER: TypeAdapter[Any] = TypeAdapter(CLA)


def _describe(error: ValidationError) -> str:
    parts = []
    for err in error.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        # A discriminated union puts the action type first in the location; keep it, it helps.
        parts.append(f"{loc or 'action'}: {err['msg']}")
    return "; ".join(parts)


def parse_action(action: Any) -> CLAAction:
    """Validate one action given as a CLA model or a dict in CLA form.

    Raises:
        ActionError: the message names the action type and the field at fault.
    """
    if isinstance(action, CLAAction):
        return action
    if not isinstance(action, dict):
        raise ActionError(f"an action must be a CLA model or a dict with a 'type' field, got {type(action).__name__}")
    if "type" not in action:
        raise ActionError(f"action dict has no 'type' field (one of {', '.join(t.value for t in ActionType)})")
    if not isinstance(action["type"], str) or action["type"] not in ActionType._value2member_map_:
        raise ActionError(
            f"unknown action type {action['type']!r}; expected one of {', '.join(t.value for t in ActionType)}"
        )
    try:
        return _CLA_ADAPTER.validate_python(action)
    except ValidationError as exc:
        raise ActionError(f"invalid {action['type']!r} action: {_describe(exc)}") from None
    except (ValueError, TypeError, ArithmeticError, RecursionError) as exc:
        # A validator meeting a value it cannot even inspect: still the action's fault, never a crash.
        raise ActionError(f"invalid {action['type']!r} action: {type(exc).__name__}: {exc}") from None


def parse_actions(actions: CLAAction | dict[str, Any] | Sequence[CLAAction | dict[str, Any]]) -> list[CLAAction]:
    """Validate one action or a list of actions (executed in order); see :func:`parse_action`."""
    if isinstance(actions, (CLAAction, dict)):
        return [parse_action(actions)]
    if isinstance(actions, (list, tuple)):
        parsed = []
        for i, item in enumerate(actions):
            try:
                parsed.append(parse_action(item))
            except ActionError as exc:
                raise ActionError(f"action {i}: {exc}") from None
        return parsed
    raise ActionError(f"expected a CLA action, a dict or a list of them, got {type(actions).__name__}")
