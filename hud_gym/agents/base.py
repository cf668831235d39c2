"""What an agent is: either style works everywhere (``run_job``, ``hud-gym run``, ``rollout``,
``rollout_group``).

- **act style** (hud-gym's): ``act(observation, info) -> actions`` and ``reset()``.
- **HUD style** (HUD's ``hud.agent.Agent``): ``async predict(observation) -> (actions, done)``,
  built from ``preprocess`` (the adapter resizes the screenshot to the agent's frame), ``async
  fetch_response(observation) -> (native actions, done)`` and ``postprocess`` (the adapter turns
  native actions into CLA in the env's pixels). ``done`` with no ``response`` action among the
  actions ends the episode with an empty response.

``isinstance(x, Agent)`` holds for any object of either style; subclass :class:`Agent` to write a
HUD-style agent (implement :meth:`Agent.fetch_response`). The observation
:meth:`Agent.preprocess` hands to ``fetch_response`` is a dict: ``screenshot`` (at the agent's
frame), ``text``, ``info`` (the env's latest info: ``prompt``, ``action_error``, ``position``)
and ``env_screenshot`` (as the env returned it).
"""

from __future__ import annotations

import copy
from abc import ABCMeta
from typing import Any

from hud_gym.actions import CLAAction, ResponseAction, parse_actions
from hud_gym.adapters.base import Adapter

__all__ = ["Agent", "is_hud_style"]


class Agent(metaclass=ABCMeta):  # noqa: B024  (ABCMeta for __subclasshook__: either style is an Agent)
    """Base of HUD-style agents, and the type of every agent (see the module docstring).

    Args:
        client: the model client (SDK object), if the agent uses one.
        adapter: turns native actions into CLA and screenshots into the agent's frame; without one
            ``fetch_response`` must return CLA actions (dicts or models) in env pixels.
    """

    last_trace: Any = None
    """What the last :meth:`predict` did, for the step's ``policy_trace`` (prompt, reply, usage)."""

    def __init__(self, client: Any = None, adapter: Adapter | None = None) -> None:
        self.client = client
        self.adapter = adapter
        self.last_trace = None

    @classmethod
    def __subclasshook__(cls, other: type) -> bool | Any:
        if cls is Agent:
            return any(callable(getattr(other, name, None)) for name in ("act", "predict"))
        return NotImplemented

    def reset(self) -> None:
        """Forget the episode. Subclasses assign fresh state here (never mutate shared state):
        :meth:`fork` relies on it."""
        if self.adapter is not None:
            self.adapter.reset()
        self.last_trace = None

    def fork(self) -> Agent:
        """A fresh agent with these settings for another run (runs may be concurrent); the model
        client is shared, the adapter copied, the episode state reset."""
        clone = copy.copy(self)
        clone.adapter = copy.deepcopy(self.adapter)
        clone.reset()
        return clone

    def preprocess(self, observation: Any, info: dict[str, Any] | None = None) -> dict[str, Any]:
        """The observation ``fetch_response`` sees: the screenshot at the agent's frame, the text,
        the env's ``info``, and the env's own screenshot."""
        if isinstance(observation, dict):
            screenshot, text = observation.get("screenshot"), observation.get("text")
        else:  # HUD's Observation (screenshot: base64 PNG, text)
            screenshot, text = getattr(observation, "screenshot", None), getattr(observation, "text", None)
        scaled = self.adapter.rescale(screenshot) if self.adapter is not None and screenshot is not None else screenshot
        return {"screenshot": scaled, "text": text or "", "info": dict(info or {}), "env_screenshot": screenshot}

    async def fetch_response(self, observation: dict[str, Any]) -> tuple[list[Any], bool]:
        """The model's native actions for ``observation`` and whether it is done (override it)."""
        raise NotImplementedError(f"{type(self).__name__} must implement fetch_response (or act)")

    def postprocess(self, actions: list[Any]) -> list[CLAAction]:
        """Native actions as CLA actions in the env's pixels (through the adapter)."""
        if self.adapter is not None:
            return self.adapter.adapt_list(actions)
        return parse_actions(list(actions))

    async def predict(self, observation: Any, info: dict[str, Any] | None = None) -> tuple[list[CLAAction], bool]:
        """HUD's agent step: ``preprocess``, ``fetch_response``, ``postprocess``.

        Raises:
            hud_gym.agents.AgentError: the model call or its reply failed.
            hud_gym.actions.ActionError: the reply held an action the adapter cannot convert.
        """
        processed = self.preprocess(observation, info)
        actions, done = await self.fetch_response(processed)
        return (self.postprocess(actions) if actions else []), bool(done)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> list[CLAAction]:
        """:meth:`predict` from sync code, on hud-gym's event loop; a finished agent's actions end
        with a ``response``. Not callable from that loop's thread (``await predict`` there)."""
        from hud_gym.core.loop import get_loop_thread

        actions, done = get_loop_thread().run(self.predict(observation, info))
        return finish(actions, done)


def finish(actions: list[Any], done: bool) -> list[Any]:
    """``actions``, ending with a ``response`` when ``done`` (an empty one if there is none)."""
    if done and not any(
        isinstance(a, ResponseAction) or (isinstance(a, dict) and a.get("type") == "response") for a in actions
    ):
        return [*actions, ResponseAction(text="")]
    return actions


def is_hud_style(agent: Any) -> bool:
    """True when ``agent`` (or agent class) answers through ``predict`` (HUD's style) rather than
    an ``act`` of its own."""
    kind = agent if isinstance(agent, type) else type(agent)
    act = getattr(kind, "act", None)
    if act is None or act is Agent.act:
        return callable(getattr(kind, "predict", None))
    return False
