"""``ClaudeAdapter``: Anthropic's computer-use tool actions to CLA.

It takes the ``input`` of a ``tool_use`` block of the ``computer`` tool (``computer_20250124``,
``computer_20251124``: ``{"action": "left_click", "coordinate": [x, y], ...}``), a member
``tool_use`` of the ``computer_toolset_20260801`` (the action is the block's ``name``), or the
block itself. Every action of those versions maps:

========================  ==================================================================
Claude action              CLA
========================  ==================================================================
``key``                    ``press`` (xdotool names, ``+`` chords, space-separated sequences,
                           ``repeat``)
``hold_key``               ``keydown``, ``wait`` (``duration`` s), ``keyup``
``type``                   ``type``
``mouse_move``             ``move``
``left_click`` ...         ``click`` (``right``, ``middle``; double: ``pattern=[100]``, triple:
                           ``pattern=[100, 100]``); ``text`` is held (``"shift"``, ``"ctrl+alt"``)
``left_click_drag``        ``drag`` from ``start_coordinate`` (else the last pointer position)
``left_mouse_down``/``up`` emulated: down remembers the position (a ``screenshot`` step), moves
                           while down are recorded, up replays it as one ``drag`` (a ``click``
                           when the pointer did not move); CLA has no separate button press
``scroll``                 ``scroll`` of ``scroll_amount`` wheel clicks x 100 px, positive = down/right
``wait``                   ``wait`` (``duration`` s in ms)
``screenshot``, ``zoom``   ``screenshot`` (the agent crops a zoom's ``region`` from it)
``cursor_position``        ``position``
``response``               ``response`` (HUD's final answer)
========================  ==================================================================
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
    PositionFetch,
    PressAction,
    ResponseAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.adapters.base import Adapter
from hud_gym.adapters.common import WHEEL_CLICK_PX, chord, coordinate, field, integer, seconds_to_ms

__all__ = ["CLAUDE_ACTIONS", "CLAUDE_KEY_MAP", "ClaudeAdapter", "tool_use_input"]

CLAUDE_KEY_MAP: dict[str, str] = {
    "xf86audioraisevolume": "volumeup",
    "xf86audiolowervolume": "volumedown",
    "xf86audiomute": "volumemute",
    "xf86audioplay": "playpause",
    "xf86audiopause": "playpause",
    "xf86audionext": "nexttrack",
    "xf86audioprev": "prevtrack",
    "xf86audiostop": "stop",
    "xf86back": "browserback",
    "xf86forward": "browserforward",
    "xf86refresh": "browserrefresh",
    "xf86reload": "browserrefresh",
    "xf86homepage": "browserhome",
    "xf86search": "browsersearch",
    "xf86favorites": "browserfavorites",
    "xf86mail": "launchmail",
    "xf86calculator": "launchapp2",
    "super": "win",
    "hyper_l": "winleft",
    "hyper_r": "winright",
    "kp_space": "space",
    "kp_tab": "tab",
    "kp_home": "home",
    "kp_end": "end",
    "kp_insert": "insert",
    "kp_delete": "delete",
    "kp_up": "up",
    "kp_down": "down",
    "kp_left": "left",
    "kp_right": "right",
    "kp_prior": "pageup",
    "kp_next": "pagedown",
    "kp_page_up": "pageup",
    "kp_page_down": "pagedown",
    "kp_equal": "=",
    "kp_separator": "separator",
    "iso_level3_shift": "altright",
}
"""xdotool (X keysym) names of Claude's ``key`` action beyond :data:`hud_gym.keys.KEY_ALIASES`."""

CLAUDE_ACTIONS: tuple[str, ...] = (
    "key",
    "hold_key",
    "type",
    "cursor_position",
    "mouse_move",
    "left_mouse_down",
    "left_mouse_up",
    "left_click",
    "left_click_drag",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "scroll",
    "wait",
    "screenshot",
    "zoom",
    "response",
)
"""Every action the adapter converts (all of the computer tool's, and HUD's ``response``)."""

_CLICKS: dict[str, tuple[str, list[int] | None]] = {
    "left_click": ("left", None),
    "right_click": ("right", None),
    "middle_click": ("middle", None),
    "double_click": ("left", [100]),
    "triple_click": ("left", [100, 100]),
}
_SCROLL: dict[str, tuple[int, int]] = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
MAX_REPEAT = 100


def tool_use_input(data: Any) -> dict[str, Any]:
    """The action dict of ``data``: a ``tool_use`` block (SDK object or dict) of the ``computer``
    tool or of a computer toolset member, or already an input dict with an ``action``."""
    name = getattr(data, "name", None) if not isinstance(data, dict) else data.get("name")
    payload = getattr(data, "input", None) if not isinstance(data, dict) else data.get("input")
    if name is not None and payload is not None:
        if not isinstance(payload, dict):
            raise ActionError(f"Invalid action: the tool_use input must be an object, got {type(payload).__name__}")
        return dict(payload) if name == "computer" else {**payload, "action": name}
    if not isinstance(data, dict):
        raise ActionError(f"Invalid action: expected a computer tool_use input dict, got {type(data).__name__}")
    return data


class ClaudeAdapter(Adapter):
    """Claude's computer-use actions to CLA (see the module docstring); frame 1024x768 by default,
    or the tool's ``display_width_px`` x ``display_height_px`` (:meth:`from_tool`)."""

    DEFAULT_FRAME: ClassVar[tuple[int, int] | None] = (1024, 768)

    def __init__(self, agent_width: int | None = None, agent_height: int | None = None, **kwargs: Any) -> None:
        super().__init__(agent_width, agent_height, **kwargs)
        self.position: Point | None = None
        self._down_path: list[Point] | None = None

    @classmethod
    def from_tool(cls, tool: dict[str, Any]) -> ClaudeAdapter:
        """An adapter for a ``computer`` tool definition (its display size is the frame)."""
        width, height = tool.get("display_width_px"), tool.get("display_height_px")
        return cls(width, height) if width and height else cls()

    def reset(self) -> None:
        """Forget the episode, the pointer position and a pending ``left_mouse_down``."""
        super().reset()
        self.position = None
        self._down_path = None

    def convert(self, data: Any) -> CLAAction | list[CLAAction]:
        """One Claude action as CLA (in the agent's frame).

        Raises:
            ActionError: ``Unsupported action type: X`` or ``Invalid action: ...``.
        """
        return self._dispatch(tool_use_input(data), "action", CLAUDE_ACTIONS)

    # ----------------------------------------------------------------- keyboard

    def _keys(self, data: dict[str, Any], action: str) -> list[str]:
        return chord(field(data, "text", action), action, CLAUDE_KEY_MAP)

    def _key(self, data: dict[str, Any], action: str) -> CLAAction | list[CLAAction]:
        text = field(data, "text", action)
        if not isinstance(text, str):
            raise ActionError(f"Invalid action: key 'text' must be a string, got {text!r}")
        repeat = integer(data.get("repeat", 1) if data.get("repeat") is not None else 1, "repeat", action, minimum=1)
        if repeat > MAX_REPEAT:
            raise ActionError(f"Invalid action: key 'repeat' must be at most {MAX_REPEAT}, got {repeat}")
        chords = text.split() if text.strip() else ["space" if text else text]
        presses: list[CLAAction] = [PressAction(keys=chord(c, action, CLAUDE_KEY_MAP)) for c in chords]
        presses *= repeat
        return presses[0] if len(presses) == 1 else presses

    def _hold_key(self, data: dict[str, Any], action: str) -> list[CLAAction]:
        keys = self._keys(data, action)
        ms = seconds_to_ms(field(data, "duration", action), "duration", action)
        return [KeyDownAction(keys=keys), WaitAction(time=ms), KeyUpAction(keys=keys)]

    def _type(self, data: dict[str, Any], action: str) -> CLAAction:
        text = field(data, "text", action)
        if not isinstance(text, str):
            raise ActionError(f"Invalid action: type 'text' must be a string, got {text!r}")
        return TypeAction(text=text)

    # ----------------------------------------------------------------- mouse

    def _point(self, data: dict[str, Any], action: str, *, required: bool) -> Point | None:
        value = field(data, "coordinate", action, required=required)
        if value is None:
            return None
        point = coordinate(value, action)
        self.position = point
        if self._down_path is not None:
            self._down_path.append(point)
        return point

    def _modifiers(self, data: dict[str, Any], action: str) -> list[str] | None:
        text = data.get("text")
        return None if text in (None, "") else chord(text, action, CLAUDE_KEY_MAP)

    def _mouse_move(self, data: dict[str, Any], action: str) -> CLAAction:
        return MoveAction(point=self._point(data, action, required=True))

    def _click(self, data: dict[str, Any], action: str) -> CLAAction:
        button, pattern = _CLICKS[action]
        hold = self._modifiers(data, action)
        return ClickAction(
            point=self._point(data, action, required=False),
            button=button,  # type: ignore[arg-type]
            pattern=pattern,
            hold_keys=hold,
        )

    _left_click = _right_click = _middle_click = _double_click = _triple_click = _click

    def _left_click_drag(self, data: dict[str, Any], action: str) -> CLAAction:
        start_value = data.get("start_coordinate")
        start = coordinate(start_value, action, "start_coordinate") if start_value is not None else self.position
        if start is None:
            raise ActionError(
                "Invalid action: left_click_drag needs 'start_coordinate' (the pointer position is unknown)"
            )
        hold = self._modifiers(data, action)
        end = self._point(data, action, required=True)
        assert end is not None
        return DragAction(path=[start, end], hold_keys=hold)

    def _left_mouse_down(self, data: dict[str, Any], action: str) -> CLAAction:
        if self.position is None:
            raise ActionError(
                "Invalid action: left_mouse_down with the pointer position unknown (move the mouse first)"
            )
        self._down_path = [self.position]
        return ScreenshotFetch()

    def _left_mouse_up(self, data: dict[str, Any], action: str) -> CLAAction:
        if self._down_path is None:
            raise ActionError("Invalid action: left_mouse_up without a left_mouse_down before it")
        path, self._down_path = self._down_path, None
        if self.position is not None and path[-1] != self.position:
            path.append(self.position)
        if len(path) < 2:
            return ClickAction(point=path[0])
        return DragAction(path=path)

    def _scroll(self, data: dict[str, Any], action: str) -> CLAAction:
        direction = field(data, "scroll_direction", action)
        if not isinstance(direction, str) or direction not in _SCROLL:
            raise ActionError(
                f"Invalid action: scroll 'scroll_direction' must be up, down, left or right, got {direction!r}"
            )
        amount = integer(field(data, "scroll_amount", action), "scroll_amount", action)
        dx, dy = _SCROLL[direction]
        hold = self._modifiers(data, action)
        point = self._point(data, action, required=False)
        return ScrollAction(
            point=point, scroll=Point(x=dx * amount * WHEEL_CLICK_PX, y=dy * amount * WHEEL_CLICK_PX), hold_keys=hold
        )

    # ----------------------------------------------------------------- the rest

    def _wait(self, data: dict[str, Any], action: str) -> CLAAction:
        return WaitAction(time=seconds_to_ms(field(data, "duration", action), "duration", action))

    def _screenshot(self, data: dict[str, Any], action: str) -> CLAAction:
        return ScreenshotFetch()

    def _zoom(self, data: dict[str, Any], action: str) -> CLAAction:
        zoom_region(data)
        return ScreenshotFetch()

    def _cursor_position(self, data: dict[str, Any], action: str) -> CLAAction:
        return PositionFetch()

    def _response(self, data: dict[str, Any], action: str) -> CLAAction:
        text = field(data, "text", action)
        if not isinstance(text, str):
            raise ActionError(f"Invalid action: response 'text' must be a string, got {text!r}")
        return ResponseAction(text=text)


def zoom_region(data: dict[str, Any]) -> tuple[int, int, int, int]:
    """The ``region`` ``(x0, y0, x1, y1)`` of a ``zoom`` action, in the agent's frame.

    Raises:
        ActionError: not four non-negative integers with ``x0 < x1`` and ``y0 < y1``.
    """
    region = field(data, "region", "zoom")
    if not isinstance(region, (list, tuple)) or len(region) != 4:
        raise ActionError(f"Invalid action: zoom 'region' must be [x0, y0, x1, y1], got {region!r}")
    x0, y0, x1, y1 = (integer(v, "region", "zoom") for v in region)
    if x1 <= x0 or y1 <= y0:
        raise ActionError(f"Invalid action: zoom 'region' must have x0 < x1 and y0 < y1, got {list(region)}")
    return x0, y0, x1, y1
