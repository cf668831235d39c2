"""``OperatorAdapter``: OpenAI computer-use actions (Responses API ``computer_call``) to CLA.

It takes one action of a ``computer_call`` (its ``action``, or an item of its batched
``actions``), as the SDK's object or as a dict:

===============  =====================================================================
OpenAI action     CLA
===============  =====================================================================
``click``         ``click`` at ``x, y`` (``left``, ``right``, ``wheel`` = middle, ``back``,
                  ``forward``); ``keys`` are held
``double_click``  ``click`` with ``pattern=[100]``
``scroll``        ``scroll`` by ``scroll_x, scroll_y`` pixels at ``x, y`` (positive = right/down)
``type``          ``type``
``keypress``      ``press`` of ``keys`` together (``CTRL``, ``ENTER``, ``ARROWUP``, ``ESC``, ...)
``wait``          ``wait`` (``ms``, default 1000)
``move``          ``move`` to ``x, y`` (``keys`` held: keydown, move, keyup)
``drag``          ``drag`` along ``path`` (at least two ``{x, y}`` points); ``keys`` are held
``screenshot``    ``screenshot``
``response``      ``response`` (HUD's final answer)
===============  =====================================================================

Key names follow OpenAI's reference implementation (``CMD``, ``SUPER``, ``WIN`` and ``META`` are
the Meta/Super key, ``OPTION`` is Alt), then :func:`hud_gym.keys.normalize_key`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hud_gym.actions import (
    ActionError,
    CLAAction,
    ClickAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    Point,
    PressAction,
    ResponseAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.adapters.base import Adapter
from hud_gym.adapters.common import coordinate, field, integer, key

__all__ = ["OPERATOR_ACTIONS", "OPERATOR_BUTTONS", "OPERATOR_KEY_MAP", "OperatorAdapter"]

OPERATOR_KEY_MAP: dict[str, str] = {"cmd": "win", "command": "win", "super": "win", "meta": "win", "option": "alt"}
"""OpenAI's key names that mean something else than :func:`hud_gym.keys.normalize_key` reads."""

OPERATOR_BUTTONS: dict[str, str] = {
    "left": "left",
    "right": "right",
    "wheel": "middle",
    "middle": "middle",
    "back": "back",
    "forward": "forward",
}

OPERATOR_ACTIONS: tuple[str, ...] = (
    "click",
    "double_click",
    "scroll",
    "type",
    "keypress",
    "wait",
    "move",
    "drag",
    "screenshot",
    "response",
)
"""Every action the adapter converts (all of OpenAI's computer tool's, and HUD's ``response``)."""

DEFAULT_WAIT_MS = 1000


def _as_dict(data: Any) -> dict[str, Any]:
    if hasattr(data, "model_dump") and not isinstance(data, dict):
        data = data.model_dump(exclude_none=True)
    if not isinstance(data, dict):
        raise ActionError(f"Invalid action: expected a computer_call action dict, got {type(data).__name__}")
    return data


class OperatorAdapter(Adapter):
    """OpenAI computer-use actions to CLA (see the module docstring); frame 1024x768 by default."""

    DEFAULT_FRAME: ClassVar[tuple[int, int] | None] = (1024, 768)

    def convert(self, data: Any) -> CLAAction | list[CLAAction]:
        """One OpenAI computer action as CLA (in the agent's frame).

        Raises:
            ActionError: ``Unsupported action type: X`` or ``Invalid action: ...``.
        """
        return self._dispatch(_as_dict(data), "type", OPERATOR_ACTIONS)

    # ----------------------------------------------------------------- fields

    @staticmethod
    def _xy(data: dict[str, Any], action: str) -> Point:
        return coordinate([field(data, "x", action), field(data, "y", action)], action, "x, y")

    @staticmethod
    def _keys(data: dict[str, Any], action: str, *, required: bool = False) -> list[str] | None:
        keys = field(data, "keys", action, required=required)
        if keys is None or keys == [] and not required:
            return None
        if not isinstance(keys, (list, tuple)) or not keys or not all(isinstance(k, str) for k in keys):
            raise ActionError(f"Invalid action: {action} 'keys' must be a non-empty list of key names, got {keys!r}")
        return [key(k, action, OPERATOR_KEY_MAP) for k in keys]

    # ----------------------------------------------------------------- actions

    def _click(self, data: dict[str, Any], action: str) -> CLAAction:
        button = data.get("button", "left")
        if not isinstance(button, str) or button not in OPERATOR_BUTTONS:
            raise ActionError(
                f"Invalid action: click 'button' must be one of {', '.join(OPERATOR_BUTTONS)}, got {button!r}"
            )
        return ClickAction(
            point=self._xy(data, action),
            button=OPERATOR_BUTTONS[button],  # type: ignore[arg-type]
            hold_keys=self._keys(data, action),
        )

    def _double_click(self, data: dict[str, Any], action: str) -> CLAAction:
        return ClickAction(point=self._xy(data, action), pattern=[100], hold_keys=self._keys(data, action))

    def _scroll(self, data: dict[str, Any], action: str) -> CLAAction:
        dx = integer(data.get("scroll_x", 0), "scroll_x", action, minimum=None)
        dy = integer(data.get("scroll_y", 0), "scroll_y", action, minimum=None)
        return ScrollAction(point=self._xy(data, action), scroll=Point(x=dx, y=dy), hold_keys=self._keys(data, action))

    def _type(self, data: dict[str, Any], action: str) -> CLAAction:
        text = field(data, "text", action)
        if not isinstance(text, str):
            raise ActionError(f"Invalid action: type 'text' must be a string, got {text!r}")
        return TypeAction(text=text)

    def _keypress(self, data: dict[str, Any], action: str) -> CLAAction:
        keys = self._keys(data, action, required=True)
        assert keys is not None
        return PressAction(keys=keys)

    def _wait(self, data: dict[str, Any], action: str) -> CLAAction:
        ms = data.get("ms", DEFAULT_WAIT_MS)
        return WaitAction(time=integer(ms, "ms", action))

    def _move(self, data: dict[str, Any], action: str) -> CLAAction | list[CLAAction]:
        move = MoveAction(point=self._xy(data, action))
        keys = self._keys(data, action)
        return [KeyDownAction(keys=keys), move, KeyUpAction(keys=keys)] if keys else move

    def _drag(self, data: dict[str, Any], action: str) -> CLAAction:
        path = field(data, "path", action)
        if not isinstance(path, (list, tuple)) or len(path) < 2:
            raise ActionError(f"Invalid action: drag 'path' must list at least two {{x, y}} points, got {path!r}"[:300])
        points = [coordinate(p, action, "path") for p in path]
        return DragAction(path=points, hold_keys=self._keys(data, action))

    def _screenshot(self, data: dict[str, Any], action: str) -> CLAAction:
        return ScreenshotFetch()

    def _response(self, data: dict[str, Any], action: str) -> CLAAction:
        text = field(data, "text", action)
        if not isinstance(text, str):
            raise ActionError(f"Invalid action: response 'text' must be a string, got {text!r}")
        return ResponseAction(text=text)
