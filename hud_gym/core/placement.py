"""Where an env's controller runs: its *placement* (the ``controller=`` argument of every env).

``"local"`` (in the env's own process) is the core's own. The others (``"subprocess"``,
``"docker"``, ``"ws://host:port"``) are served by :mod:`hud_gym.controllers.remote`, which
:mod:`hud_gym.registration` installs here with :func:`set_remote_placement`: the env core never
imports the remote client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hud_gym.controllers.base import Controller

__all__ = ["LOCAL", "RemotePlacement", "check_placement", "remote_controller", "set_remote_placement"]

LOCAL = "local"
"""The placement of a controller in the env's own process."""


class RemotePlacement(Protocol):
    """Controllers that run elsewhere than in the env's process."""

    def check(self, placement: str, token: str | None) -> tuple[str, str | None]:
        """``placement`` normalised, with its token (raises ``ValueError`` on a bad one)."""
        ...

    def controller(
        self, gym: str, screen_size: tuple[int, int], placement: str, token: str | None, options: dict[str, Any]
    ) -> Controller:
        """A (not started) controller of ``gym`` at ``placement``, made with ``options``."""
        ...


_remote: list[RemotePlacement | None] = [None]


def set_remote_placement(remote: RemotePlacement) -> None:
    """Serve every placement but ``"local"`` with ``remote``."""
    _remote[0] = remote


def _installed() -> RemotePlacement:
    remote = _remote[0]
    if remote is None:
        raise ValueError("only controller='local' is available: no remote placement is installed (import hud_gym)")
    return remote


def check_placement(placement: Any, token: str | None = None) -> tuple[str, str | None]:
    """``placement`` (an env's ``controller=``) normalised, with its token.

    Raises:
        ValueError: not ``"local"``, ``"subprocess"``, ``"docker"`` or a ``ws://`` URL with a token.
    """
    if placement == LOCAL:
        return LOCAL, token
    return _installed().check(placement, token)


def remote_controller(
    gym: str, screen_size: tuple[int, int], placement: str, token: str | None, options: dict[str, Any]
) -> Controller:
    """A controller of ``gym`` running at the (non-local) ``placement``."""
    return _installed().controller(gym, screen_size, placement, token, options)
