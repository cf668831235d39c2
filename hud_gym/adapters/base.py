"""HUD's ``Adapter``: a model's native actions to CLA actions, in the env's pixels.

The pipeline (HUD's names): :meth:`Adapter.convert` turns one native action into CLA;
:meth:`Adapter.adapt` converts, rescales every coordinate from the agent's frame
(``agent_width`` x ``agent_height``, the size of the screenshots the model sees) to the env's
observation size (``env_width`` x ``env_height``, learnt by :meth:`Adapter.rescale`), and appends
the result to :attr:`Adapter.memory`; :meth:`Adapter.adapt_list` does it for a list.

Rescaled are positions (``point``, ``path``) and pixel vectors (``offset``, ``scroll``): a scroll
amount is in the pixels of the frame the model sees, as its coordinates are. A frame of ``None``
follows the env (no rescaling, screenshots sent at the env's size).

This base adapter converts CLA dicts (what a model that speaks CLA JSON replies). An unsupported
or malformed action raises :class:`~hud_gym.actions.ActionError` (a ``ValueError``) naming it.

Example:
    >>> import numpy as np
    >>> adapter = Adapter(agent_width=1024, agent_height=768)
    >>> _ = adapter.rescale(np.zeros((720, 1280, 3), np.uint8))   # the env's frame is 1280x720
    >>> adapter.adapt({"type": "click", "point": {"x": 512, "y": 384}}).point
    Point(x=640, y=360)
"""

from __future__ import annotations

from typing import Any, ClassVar

from hud_gym.actions import ActionError, CLAAction, DragAction, Point, parse_action
from hud_gym.adapters.images import encode_image, resize, to_array

__all__ = ["Adapter"]


class Adapter:
    """Native actions to CLA, rescaled from the agent's frame to the env's; see the module docstring.

    Args:
        agent_width / agent_height: the frame the model sees and points in (default: the class's
            :attr:`DEFAULT_FRAME`, for this base the env's frame).
        env_width / env_height: the env's observation size, if known before the first
            :meth:`rescale` (until then the env's frame is taken to be the agent's).
        follow_env: the agent's frame is the env's (no rescaling, whatever the default frame).
    """

    DEFAULT_FRAME: ClassVar[tuple[int, int] | None] = None

    def __init__(
        self,
        agent_width: int | None = None,
        agent_height: int | None = None,
        *,
        env_width: int | None = None,
        env_height: int | None = None,
        follow_env: bool = False,
    ) -> None:
        frame = (
            (agent_width, agent_height) if agent_width is not None or agent_height is not None else self.DEFAULT_FRAME
        )
        if follow_env:
            frame = None
        if frame is not None and not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in frame):
            raise ValueError(f"the agent's frame must be two positive integers, got {frame}")
        self._agent_frame: tuple[int, int] | None = frame  # type: ignore[assignment]
        self._env_frame: tuple[int, int] | None = (env_width, env_height) if env_width and env_height else None
        self.memory: list[CLAAction] = []

    # ----------------------------------------------------------------- frames

    @property
    def agent_width(self) -> int:
        """Width of the frame the model sees; settable, as HUD's (``adapter.agent_width = 1024``):
        the screenshots and the rescaling of the actions follow the new value."""
        return self.agent_frame[0]

    @agent_width.setter
    def agent_width(self, value: int) -> None:
        self._set_agent_frame(value, None)

    @property
    def agent_height(self) -> int:
        """Height of the frame the model sees; settable, as :attr:`agent_width`."""
        return self.agent_frame[1]

    @agent_height.setter
    def agent_height(self, value: int) -> None:
        self._set_agent_frame(None, value)

    def _set_agent_frame(self, width: int | None, height: int | None) -> None:
        """Set one side of the agent's frame; the other is the current frame's (the env's when
        the frame follows it, else the env's or the new side's until the env is known).

        Raises:
            ValueError: not a positive integer.
        """
        value = width if width is not None else height
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(
                f"agent_{'width' if width is not None else 'height'} must be a positive integer, got {value!r}"
            )
        current = self._agent_frame or self._env_frame or (value, value)
        self._agent_frame = (width or current[0], height or current[1])

    @property
    def env_width(self) -> int:
        """Width of the env's observations."""
        return self.env_frame[0]

    @property
    def env_height(self) -> int:
        """Height of the env's observations."""
        return self.env_frame[1]

    @property
    def agent_frame(self) -> tuple[int, int]:
        """``(width, height)`` the model sees (the env's frame when following it)."""
        frame = self._agent_frame or self._env_frame
        if frame is None:
            raise ValueError("the agent's frame follows the env's, which is not known yet: call rescale() first")
        return frame

    @property
    def env_frame(self) -> tuple[int, int]:
        """``(width, height)`` of the env's observations (the agent's until :meth:`rescale`)."""
        frame = self._env_frame or self._agent_frame
        if frame is None:
            raise ValueError("the env's frame is not known yet: call rescale() first")
        return frame

    def set_env_frame(self, width: int, height: int) -> None:
        """Tell the adapter the env's observation size."""
        self._env_frame = (int(width), int(height))

    def to_env(self, x: float, y: float) -> tuple[int, int]:
        """A position (or vector) in the agent's frame, in env pixels."""
        (aw, ah), (ew, eh) = self.agent_frame, self.env_frame
        return round(x * ew / aw), round(y * eh / ah)

    def to_agent(self, x: float, y: float) -> tuple[int, int]:
        """A position (or vector) in env pixels, in the agent's frame."""
        (aw, ah), (ew, eh) = self.agent_frame, self.env_frame
        return round(x * aw / ew), round(y * ah / eh)

    # ----------------------------------------------------------------- observations

    def rescale(self, observation: Any) -> Any:
        """The screenshot of ``observation`` resized to the agent's frame; learns the env's frame.

        Takes an observation dict or object, an array, a PIL image, or base64 image text. Base64
        text in gives base64 PNG text out (HUD's convention); anything else gives an
        ``(H, W, 3)`` uint8 array. ``None`` gives ``None``.
        """
        if observation is None:
            return None
        source = observation.get("screenshot") if isinstance(observation, dict) else observation
        array = to_array(observation)
        self.set_env_frame(array.shape[1], array.shape[0])
        resized = resize(array, self.agent_frame)
        if isinstance(source, str):
            return encode_image(resized, "png").data
        return resized

    # ----------------------------------------------------------------- actions

    def preprocess(self, data: Any) -> Any:
        """A hook before :meth:`convert` (HUD's); returns ``data`` unchanged."""
        return data

    def convert(self, data: Any) -> CLAAction | list[CLAAction]:
        """One native action as CLA, in the agent's frame. This base takes CLA dicts or models.

        Raises:
            ActionError: not an action, an unsupported type, or a malformed one.
        """
        if data is None or not isinstance(data, (dict, CLAAction)):
            raise ActionError(f"Invalid action: expected a CLA action dict, got {type(data).__name__}")
        try:
            return parse_action(data)
        except ActionError as exc:
            if isinstance(data, dict) and "unknown action type" in str(exc):
                raise ActionError(f"Unsupported action type: {data.get('type')!r}") from None
            raise ActionError(f"Invalid action: {exc}") from None

    def _dispatch(self, data: dict[str, Any], key: str, known: tuple[str, ...]) -> CLAAction | list[CLAAction]:
        """Run the handler ``_<name>(data, name)`` of the action named by ``data[key]``.

        Raises:
            ActionError: ``Invalid action`` (no name) or ``Unsupported action type: X`` (not in ``known``).
        """
        action = data.get(key)
        if not isinstance(action, str):
            raise ActionError(f"Invalid action: the action has no {key!r} name: {data!r}"[:300])
        if action not in known:
            raise ActionError(f"Unsupported action type: {action!r}")
        result: CLAAction | list[CLAAction] = getattr(self, f"_{action}")(data, action)
        return result

    def postprocess(self, action: CLAAction) -> CLAAction:
        """``action`` with its coordinates in the env's frame."""
        if self._agent_frame is None or self._env_frame is None or self._agent_frame == self._env_frame:
            return action  # one frame (following the env's, or the env's not known yet)
        update: dict[str, Any] = {}
        for name in ("point", "scroll", "offset"):
            value = getattr(action, name, None)
            if isinstance(value, Point):
                update[name] = self._point_to_env(value)
        if isinstance(action, DragAction):
            update["path"] = [self._point_to_env(p) for p in action.path]
        return action.model_copy(update=update) if update else action

    def _point_to_env(self, point: Point) -> Point:
        x, y = self.to_env(point.x, point.y)
        return Point(x=x, y=y)

    def adapt(self, data: Any) -> CLAAction | list[CLAAction]:
        """Convert ``data`` and rescale it to the env's frame; remembered in :attr:`memory`.
        One native action may become several CLA actions (a list then)."""
        converted = self.convert(self.preprocess(data))
        actions = converted if isinstance(converted, list) else [converted]
        adapted = [self.postprocess(action) for action in actions]
        self.memory.extend(adapted)
        return adapted if isinstance(converted, list) else adapted[0]

    def adapt_list(self, actions: Any) -> list[CLAAction]:
        """:meth:`adapt` every item of ``actions``, flattened into one list.

        Raises:
            ActionError: ``actions`` is not a list, or an item fails (its index is named).
        """
        if not isinstance(actions, (list, tuple)):
            raise ActionError(f"Invalid action list: expected a list of actions, got {type(actions).__name__}")
        out: list[CLAAction] = []
        for index, data in enumerate(actions):
            try:
                adapted = self.adapt(data)
            except ActionError as exc:
                raise ActionError(f"action {index}: {exc}") from None
            out.extend(adapted if isinstance(adapted, list) else [adapted])
        return out

    def reset(self) -> None:
        """Forget the episode (memory and pointer state); the frames stay."""
        self.memory = []

    def __repr__(self) -> str:
        frame = self._agent_frame or "env"
        return f"{type(self).__name__}(agent_frame={frame}, env_frame={self._env_frame})"
