"""Controllers as services: a hud-gym env drives a controller that runs in another process, a
container or on another machine, through a small versioned WebSocket protocol.

- :mod:`~hud_gym.controllers.remote.protocol`: the message schema (v1) and the binary frame layout;
- :mod:`~hud_gym.controllers.remote.server`: the controller server (``hud-gym serve GYM``,
  ``python -m hud_gym.controllers.remote.server GYM``), with its per-connection
  :mod:`~hud_gym.controllers.remote.sessions` and its :mod:`~hud_gym.controllers.remote.trust`
  policy (which controller options a client may send);
- :mod:`~hud_gym.controllers.remote.client`: :class:`RemoteController`, which an env uses when made
  with ``controller="subprocess" | "docker" | "ws://host:port"``, over the shared WebSockets of
  :mod:`~hud_gym.controllers.remote.connection`;
- :mod:`~hud_gym.controllers.remote.launch`: starting and stopping servers for
  ``"subprocess"`` and ``"docker"`` (the Docker engine side: :mod:`~hud_gym.controllers.remote.docker`).

Example:
    >>> import gymnasium, hud_gym
    >>> env = gymnasium.make("hud/Browser-v0", controller="subprocess")   # doctest: +SKIP
    >>> envs = gymnasium.make_vec("hud/Browser-v0", num_envs=4, controller="subprocess")  # doctest: +SKIP

The submodules are imported on use (the server module also runs as ``python -m``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PROTOCOL_VERSION", "ControllerServer", "RemoteController", "main", "serve"]

from hud_gym.controllers.remote.protocol import PROTOCOL_VERSION

_EXPORTS = {
    "ControllerServer": "server",
    "serve": "server",
    "main": "server",
    "RemoteController": "client",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
