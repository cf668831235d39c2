"""The agent protocol the built-in agents follow."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from hud_gym.actions import CLAAction

__all__ = ["Agent"]


@runtime_checkable
class Agent(Protocol):
    """Maps an observation (and the step's ``info``) to the CLA actions of the next step."""

    def reset(self) -> None:
        """Forget the previous episode."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> list[CLAAction]:
        """The actions to execute next (one ``env.step`` runs them all, in order)."""
        ...
