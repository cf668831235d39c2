"""The keyword arguments an env class takes, checked before the env is made.

A misspelt option (``scren_size``) would otherwise be Python's bare ``TypeError: __init__() got
an unexpected keyword argument``; :func:`check_env_options` names the env and the closest option
names instead. :func:`parse_size` reads a ``(width, height)`` pair, also written ``"1024x768"``.

Example:
    >>> from hud_gym.core.env import HudEnv
    >>> check_env_options(HudEnv, {"scren_size": (800, 600)}, "hud/QA-v0")
    Traceback (most recent call last):
    ...
    hud_gym.core.options.UnknownEnvOptionError: hud/QA-v0 has no option 'scren_size' (did you mean 'screen_size' or 'observation_size'?)
    >>> parse_size("1024x768", "screen_size")
    (1024, 768)
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
from collections.abc import Mapping
from typing import Any

from hud_gym.core.gym_options import GymOptions
from hud_gym.core.gym_type import gym_of_env
from hud_gym.core.suite_hooks import suite_option_names
from hud_gym.errors import HudGymError

__all__ = [
    "LIVE_VIEW_ENV_VAR",
    "NO_HUMAN_RENDERING",
    "UnknownEnvOptionError",
    "check_env_options",
    "env_option_names",
    "gym_options",
    "live_view_requested",
    "parse_size",
]

NO_HUMAN_RENDERING = (
    "render_mode='human' is not supported: hud-gym opens no window (no pygame, no X server needed); "
    "to watch the env as it steps, pass live_view=True (or set HUD_GYM_LIVE_VIEW=1): its first reset prints "
    "the URL of its page in `hud-gym ui`; or use render_mode='rgb_array'"
)
LIVE_VIEW_ENV_VAR = "HUD_GYM_LIVE_VIEW"

_SIZE = re.compile(r"^\s*(\d+)\s*[xX,]\s*(\d+)\s*$")


class UnknownEnvOptionError(HudGymError, TypeError):
    """An option the env class does not take (a ``TypeError``, as Python's own)."""


def env_option_names(env_class: type[Any]) -> set[str] | None:
    """The keyword arguments ``env_class(...)`` takes, following ``**kwargs`` up the class tree
    (``**named_options``: the fields of the gym's options model, :mod:`hud_gym.core.gym_options`,
    and the options of the suites of the env's gym, :mod:`hud_gym.core.suite`); ``None`` when
    some ``__init__`` takes ``**kwargs`` it does not pass on (any name goes)."""
    names: set[str] = set()
    for klass in env_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        if klass is object:
            return names
        parameters = inspect.signature(init).parameters.values()
        names.update(
            p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
        )
        variadic = [p.name for p in parameters if p.kind is p.VAR_KEYWORD]
        if not variadic:
            return names
        if variadic == ["named_options"]:
            gym = gym_of_env(env_class)
            if gym is None:
                return names
            return names | set(gym.options.model_fields) | suite_option_names(gym.name)
        if klass.__module__ == "gymnasium.core":
            return None
    return names


def check_env_options(env_class: type[Any], options: Mapping[str, Any], label: str) -> None:
    """Refuse an option ``env_class`` does not take, naming the closest ones.

    Raises:
        UnknownEnvOptionError: the first unknown option, with up to three close matches.
        ValueError: ``render_mode="human"`` for an env that has no window.
    """
    if options.get("render_mode") == "human" and "human" not in getattr(env_class, "metadata", {}).get(
        "render_modes", ()
    ):
        raise ValueError(NO_HUMAN_RENDERING)  # before Gymnasium wraps the env in its pygame window
    known = env_option_names(env_class)
    if known is None:
        return
    for name in options:
        if name in known:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise UnknownEnvOptionError(
            f"{label} has no option {name!r}{hint}" + ("" if close else f"; its options: {', '.join(sorted(known))}")
        )


def gym_options(
    model: type[GymOptions], options: GymOptions | None, named: Mapping[str, Any], label: str
) -> GymOptions:
    """An env's gym options: ``options`` (an instance of ``model``, else its defaults) with the
    fields of ``model`` among the ``named`` keywords in their place, validated once.

    Raises:
        TypeError: ``options`` is not a ``model``.
        InvalidOptionError: a bad value, named.
    """
    if options is not None and not isinstance(options, model):
        raise TypeError(f"{label} takes options={model.__name__}(...), got {type(options).__name__}")
    given = {name: value for name, value in named.items() if name in model.model_fields}
    if options is not None and not given:
        return options
    base = options.model_dump() if options is not None else {}
    return model.build({**base, **given}, label)


def live_view_requested(value: bool | None) -> bool:
    """Whether an env shows a live view: ``value`` when given, else ``$HUD_GYM_LIVE_VIEW`` (``1``,
    ``true``, ``yes`` or ``on``).

    Example:
        >>> live_view_requested(True)
        True
    """
    if value is not None:
        return bool(value)
    return os.environ.get(LIVE_VIEW_ENV_VAR, "").strip().lower() in ("1", "true", "yes", "on")


def parse_size(value: Any, name: str) -> tuple[int, int]:
    """``(width, height)`` from a pair of positive integers or a ``"WxH"`` string.

    Raises:
        ValueError: anything else, naming the option and the value.
    """
    if isinstance(value, str):
        match = _SIZE.match(value)
        if match:
            value = (int(match.group(1)), int(match.group(2)))
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    ):
        return int(value[0]), int(value[1])
    raise ValueError(f"{name} must be (width, height), two positive integers or 'WIDTHxHEIGHT', got {value!r}")
