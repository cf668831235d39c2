"""What an agent raises when it cannot give the next actions. A rollout turns any of them into a
run with status ``policy_error`` and ``reward=None``, the message in ``Trajectory.error``."""

from __future__ import annotations

from hud_gym.errors import HudGymError

__all__ = ["AgentConfigError", "AgentError", "ModelCallError", "ReplyParseError"]


class AgentError(HudGymError, RuntimeError):
    """The agent failed; the message says why in one line."""


class AgentConfigError(AgentError, ValueError):
    """The agent cannot start: a missing API key or SDK, a bad option."""


class ModelCallError(AgentError):
    """The model call failed for good (after the retries): ``status`` is the HTTP status (``None``
    for a connection failure), ``provider_message`` the provider's own error text."""

    def __init__(
        self, message: str, *, status: int | None = None, provider_message: str | None = None, attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.status = status
        self.provider_message = provider_message
        self.attempts = attempts


class ReplyParseError(AgentError):
    """The model replied, but with no action we can run; ``reply`` is its text."""

    def __init__(self, message: str, *, reply: str = "") -> None:
        super().__init__(message)
        self.reply = reply
