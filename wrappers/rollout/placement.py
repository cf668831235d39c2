"""Where the envs of a vector env or pool run their controllers: one place, or spread over many.

``controller=`` of a single env is one place (``"local"``, ``"subprocess"``, ``"docker"`` or a
``ws://host:port`` server). Vector envs and pools also take a list of places, e.g. the servers
of a fleet of controller containers; env ``i`` then uses ``places[i % len(places)]``, and
``controller_token`` is one token for all of them or a list parallel to the places.

Example:
    >>> fleet = ["ws://10.0.0.5:8765", "ws://10.0.0.6:8765"]
    >>> envs = gymnasium.make_vec("hud/Browser-v0", num_envs=8, controller=fleet,
    ...                           controller_token=token)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["controller_kwargs", "spreads_controllers"]


def spreads_controllers(env_kwargs: dict[str, Any]) -> bool:
    """Whether ``env_kwargs`` name several controller places (a list for ``controller``)."""
    return isinstance(env_kwargs.get("controller"), (list, tuple))


def controller_kwargs(env_kwargs: dict[str, Any], index: int) -> dict[str, Any]:
    """The kwargs of env ``index``: ``env_kwargs`` with its own ``controller`` (and token) picked
    round-robin from the lists; unchanged when ``controller`` is a single place.

    Raises:
        ValueError: an empty list of places, or a token list of another length.
    """
    places = env_kwargs.get("controller")
    if not isinstance(places, (list, tuple)):
        return env_kwargs
    if not places:
        raise ValueError("controller=[] names no place to run the controllers")
    tokens: Any = env_kwargs.get("controller_token")
    if isinstance(tokens, Sequence) and not isinstance(tokens, str):
        if len(tokens) != len(places):
            raise ValueError(f"{len(tokens)} controller tokens for {len(places)} controller places")
        token = tokens[index % len(places)]
    else:
        token = tokens
    kwargs = {**env_kwargs, "controller": places[index % len(places)]}
    if token is not None or "controller_token" in env_kwargs:
        kwargs["controller_token"] = token
    return kwargs
