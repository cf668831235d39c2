"""TRL adapter: a class for ``GRPOTrainer(environment_factory=...)``.

TRL (``trl >= 1.0``, ``transformers >= 5.2``) builds one instance per rollout slot with no
arguments, pools and reuses them, calls ``reset(**row)`` with the dataset row before each episode
(a returned string is appended to the row's last user message), exposes every public function of
the class except ``reset`` and ``get_reward`` as a tool (schema from its type hints and
Google-style docstring) and scores each rollout with ``get_reward()`` (logged under the class's
name; NaN is left out of TRL's reward aggregation).

So the class's only public functions are ``reset``, ``get_reward`` and the tools the model should
have. Its envs are released by ``close_all()`` (every instance of every class this module made),
by a finalizer when an instance is garbage collected (e.g. with its trainer) and at interpreter
exit; ``HudTRLEnvironment.close_all()`` (a classmethod, never a tool) releases one class's.

With ``screenshots=True`` every tool returns TRL's multimodal content blocks
(``[{"type": "image", "image": <PIL image>}, {"type": "text", "text": ...}]``, the image at the
env's ``observation_size``), which TRL feeds to a VLM; the default returns the text only (for a
text-only model) and keeps the last screenshot in ``last_image``.

With ``elements=True`` (browser gyms) the model reads the page as text: ``reset`` and every tool
append the elements inside the observed image, one numbered line each (``[2] button id=subbtn "ONE"``, from
``info["elements"]``), and the extra tool ``click_element(index)`` clicks the centre of the
element with that number, so a text-only policy can act on what it reads.

TRL calls ``reset`` and the tools one rollout after another (a sync loop); each call goes through
the env's sync facade, which runs the work on hud-gym's private event-loop thread.

Example:
    >>> HudQA = trl_environment_factory("qa")
    >>> def env_reward(environments, **kwargs):
    ...     return [env.get_reward() for env in environments]
    >>> # GRPOTrainer(model=..., train_dataset=ds, reward_funcs=env_reward, environment_factory=HudQA)

Dataset rows carry ``task`` (a Task dict or a ``"<taskset>/<id>"`` reference; ``task_id`` is
accepted as an alias) or the task's own fields (``prompt``, ``target``, ``choices``, ...), and
optionally ``seed``. A row with a ``prompt`` already shows the model its question, so ``reset``
then returns ``None`` (TRL would append the instruction a second time); a row without one gets
the task's instruction from ``reset``.
"""

from __future__ import annotations

import math
import weakref
from typing import Any, ClassVar

from hud_gym.rewards import graded_reward
from hud_gym.task import Task
from hud_gym.tasksets import resolve_task
from hud_gym.trajectory import FAILED

__all__ = ["ToolResult", "close_all", "element_lines", "trl_environment_factory"]

ToolResult = str | list[dict[str, Any]]
"""What a tool returns: the text, or TRL's content blocks (an image block, then a text block)."""

_TASK_FIELDS = ("id", "setup", "evaluate", "gym", "target", "choices", "files", "metadata", "config")


def _prompt_text(prompt: Any) -> str:
    """A task prompt from a row's ``prompt``: a string, or TRL's conversational list of messages
    (the last user message's text)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        for message in reversed(prompt):
            if isinstance(message, dict) and message.get("role", "user") == "user":
                content = message.get("content", "")
                if isinstance(content, str):
                    return content
                return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise ValueError(f"a row's prompt must be a string or a list of chat messages, got {type(prompt).__name__}")


def _task_from_row(row: dict[str, Any]) -> Task:
    reference = row.get("task", row.get("task_id"))
    if reference is not None:
        return resolve_task(reference)
    if row.get("prompt") is None:
        raise ValueError("a dataset row needs a 'task' (Task dict or '<taskset>/<id>') or a 'prompt'")
    fields = {k: row[k] for k in _TASK_FIELDS if row.get(k) is not None}
    return Task(prompt=_prompt_text(row["prompt"]), **fields)


class _EnvSlot:
    """The env of one TRL environment instance, held apart from it so that a finalizer can close it."""

    def __init__(self, owner: type) -> None:
        self.owner = owner
        self.env: Any = None

    def open(self, env: Any) -> None:
        self.env = env
        _OPEN.add(self)

    def close(self) -> None:
        env, self.env = self.env, None
        _OPEN.discard(self)
        if env is not None:
            env.close()


_OPEN: set[_EnvSlot] = set()  # the slots holding an env, over every class


def _close_slots(owner: type | None = None) -> None:
    for slot in [s for s in _OPEN if owner is None or s.owner is owner]:
        slot.close()


def close_all() -> None:
    """Close the envs of every TRL environment instance this module's classes made (call it after
    ``trainer.train()``; a finalizer and interpreter exit do it too). Instances stay usable: the
    next ``reset`` makes a new env."""
    _close_slots()


def element_lines(elements: list[dict[str, Any]]) -> str:
    """``info["elements"]`` as numbered lines: ``[index] tag id=... "text"`` (id and text when present)."""
    lines = []
    for index, element in enumerate(elements):
        parts = [f"[{index}]", str(element.get("tag") or "element")]
        if element.get("id"):
            parts.append(f"id={element['id']}")
        text = str(element.get("text") or element.get("value") or "").strip()
        if text:
            parts.append(f'"{text}"')
        lines.append(" ".join(parts))
    return "\n".join(lines)


def _visible(info: dict[str, Any], observation: Any) -> list[dict[str, Any]]:
    """``info["elements"]`` whose centre lies inside the observed image (a MiniWoB page's side panel,
    outside its observed task area, is left out)."""
    screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
    height, width = screenshot.shape[:2] if screenshot is not None else (math.inf, math.inf)
    kept = []
    for element in info.get("elements") or []:
        x, y, w, h = element.get("bbox") or (0, 0, 0, 0)
        if 0 <= x + w / 2 < width and 0 <= y + h / 2 < height:
            kept.append(element)
    return kept


class _HudTRLEnvironment:
    """One hud-gym env as a TRL environment: ``reset``, tool methods, ``get_reward``."""

    _gym_id: ClassVar[str] = ""
    _make_kwargs: ClassVar[dict[str, Any]] = {}
    _screenshots: ClassVar[bool] = False
    _list_elements: ClassVar[bool] = False

    def __init__(self) -> None:
        self._slot = _EnvSlot(type(self))
        weakref.finalize(self, self._slot.close)
        self.last_image: Any = None
        self._task: Task | None = None
        self._reward: float | None = None
        self._status = "ok"
        self._over = True
        self._elements: list[dict[str, Any]] = []

    @property
    def env(self) -> Any:
        """The hud-gym env (``None`` before the first ``reset`` and after ``close_all``)."""
        return self._slot.env

    @classmethod
    def close_all(cls) -> None:
        """Close the envs of every instance of this class (they are made again at the next ``reset``)."""
        _close_slots(cls)

    # ------------------------------------------------------------ episode

    def reset(self, **row: Any) -> str | None:
        """Start an episode for the dataset row's task (and ``seed``); return its instruction,
        or ``None`` when the row's own ``prompt`` already carries it."""
        from hud_gym.registration import gym_id_for

        task = _task_from_row(row)
        if task.gym is not None and gym_id_for(task.gym) != self._gym_id:
            raise ValueError(f"task {task.id!r} is for gym {task.gym!r}, but this environment runs {self._gym_id}")
        if self._slot.env is None:
            import hud_gym

            self._slot.open(hud_gym.make(self._gym_id, **self._make_kwargs).unwrapped)
        seed = row.get("seed")
        observation, info = self.env.reset(seed=None if seed is None else int(seed), options={"task": task})
        self._task, self._reward, self._status, self._over = task, None, "ok", False
        self._keep_image(observation)
        self._elements = _visible(info, observation)
        listing = f"Elements:\n{element_lines(self._elements)}" if self._list_elements else ""
        if row.get("prompt") is not None:
            return listing or None
        # The instruction last, right before the model's turn.
        return "\n".join(p for p in (listing, str(info.get("prompt") or task.prompt)) if p)

    def get_reward(self) -> float:
        """The evaluator's reward of the episode (graded now if it has not ended); NaN when the
        reward is absent (the episode failed: ``env_error``, ``timeout``, ``eval_error``, or
        grading now failed), which TRL ignores."""
        if self.env is None or self._task is None:
            raise RuntimeError("get_reward() before reset()")
        if self._status in FAILED:
            return math.nan
        if self._reward is None:
            grade = self.env.evaluate()
            return math.nan if grade.is_error else float(grade.reward)
        return self._reward

    # ------------------------------------------------------------ tools

    def click(self, x: int, y: int) -> ToolResult:
        """Click the left mouse button at a point of the screenshot.

        Args:
            x: horizontal pixel position, from the left edge.
            y: vertical pixel position, from the top edge.

        Returns:
            The observation text and the step status (after the screenshot, with ``screenshots``).
        """
        return self._act({"type": "click", "point": {"x": int(x), "y": int(y)}})

    def type_text(self, text: str) -> ToolResult:
        """Type text at the keyboard focus.

        Args:
            text: the text to type.

        Returns:
            The observation text and the step status (after the screenshot, with ``screenshots``).
        """
        return self._act({"type": "type", "text": str(text)})

    def press(self, keys: str) -> ToolResult:
        """Press a key or a key combination.

        Args:
            keys: key names joined by "+", pressed together, e.g. "enter" or "ctrl+a".

        Returns:
            The observation text and the step status (after the screenshot, with ``screenshots``).
        """
        text = str(keys).strip()
        parts = [text] if text == "+" else [k.strip() for k in text.split("+") if k.strip()]
        return self._act({"type": "press", "keys": parts})

    def scroll(self, dx: int, dy: int) -> ToolResult:
        """Scroll at the pointer position.

        Args:
            dx: horizontal pixels to scroll (positive = right).
            dy: vertical pixels to scroll (positive = down).

        Returns:
            The observation text and the step status (after the screenshot, with ``screenshots``).
        """
        return self._act({"type": "scroll", "scroll": {"x": int(dx), "y": int(dy)}})

    def answer(self, text: str) -> ToolResult:
        """Give the final answer. This ends the episode.

        Args:
            text: the final answer.

        Returns:
            The observation text and the step status (after the screenshot, with ``screenshots``).
        """
        return self._act({"type": "response", "text": str(text)})

    # ------------------------------------------------------------ helpers

    def _keep_image(self, observation: dict[str, Any]) -> None:
        screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
        if screenshot is not None:
            from PIL import Image

            self.last_image = Image.fromarray(screenshot)

    def _act(self, action: dict[str, Any]) -> ToolResult:
        if self.env is None or self._task is None:
            return "Error: the environment has not been reset."
        if self._over:
            return "Error: the episode is over; no more actions are accepted."
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._keep_image(observation)
        self._elements = _visible(info, observation)
        status = info.get("status", "ok")
        lines = [observation.get("text", ""), f"Status: {status}"]
        if self._list_elements and not (terminated or truncated):
            lines.append(f"Elements:\n{element_lines(self._elements)}")
        error = info.get("action_error") or info.get("error")
        if error:
            lines.append(f"Error: {error}")
        if terminated or truncated:
            self._over, self._status = True, status
            self._reward = None if status in FAILED else graded_reward(reward)
            lines.append("The episode is over.")
        text = "\n".join(line for line in lines if line)
        if self._screenshots and self.last_image is not None:
            return [{"type": "image", "image": self.last_image}, {"type": "text", "text": text}]
        return text


class _HudTRLElementEnvironment(_HudTRLEnvironment):
    """A hud-gym env as a TRL environment whose observations list the page's elements."""

    def click_element(self, index: int) -> ToolResult:
        """Click the centre of a listed element.

        Args:
            index: the element's number in the last element list.

        Returns:
            The observation text, the step status and the new element list.
        """
        if self.env is not None and not self._over and not 0 <= int(index) < len(self._elements):
            return f"Error: no element {index}; the list has {len(self._elements)} (0-{len(self._elements) - 1})."
        if self._over or self.env is None:
            return self._act({})
        x, y, width, height = self._elements[int(index)]["bbox"]
        return self._act({"type": "click", "point": {"x": round(x + width / 2), "y": round(y + height / 2)}})


def trl_environment_factory(
    gym: str = "qa", *, screenshots: bool = False, elements: bool = False, **env_kwargs: Any
) -> type:
    """A class for TRL's ``GRPOTrainer(environment_factory=Cls)`` over the hud-gym ``gym``.

    Args:
        gym: the gym name or id (``"qa"``, ``"hud-browser"``, ``"hud-ubuntu"``, ``"hud/QA-v0"``).
        screenshots: tools return the screenshot and the text as TRL content blocks (for a VLM);
            ``False`` returns the text only.
        elements: observations list the page's elements as numbered text lines and the tool
            ``click_element(index)`` clicks one (browser gyms; the env is made with ``elements=True``).
        **env_kwargs: keyword arguments for ``hud_gym.make`` (``max_steps``, ``observation_size``, ...).

    The env is made lazily at the first ``reset`` (constructing an instance launches nothing) and
    kept across episodes; :func:`close_all` (or the class's ``close_all()``) releases it.
    """
    from hud_gym.registration import gym_id_for

    gym_id = gym_id_for(gym)
    kwargs = dict(env_kwargs)
    if elements:
        kwargs["elements"] = True
    base = _HudTRLElementEnvironment if elements else _HudTRLEnvironment
    name = f"HudTRLEnvironment_{gym_id.split('/')[-1].replace('-', '_')}"
    namespace = {
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": base.__doc__,
        "_gym_id": gym_id,
        "_make_kwargs": kwargs,
        "_screenshots": screenshots,
        "_list_elements": elements,
    }
    return type(name, (base,), namespace)
