"""The trust policy of a controller server: which controller options a client may send.

A client opens an env with the gym's options as JSON (``headless``, ``reset_mode``,
``allow_shell``, ...: ``env.options.to_json()``). They are read with the gym's options model
(:func:`options_model`, :mod:`hud_gym.core.gym_options`: an unknown option or a bad value is
refused, naming it and the known ones), then checked against the trust policy: options that run
programs or reach the host's files or network, or open windows on the server's display (``allow_shell``, ``sandbox=False``,
``allow_network``, ``headless=False``, ``executable_path``, ``launch_args``, ``allow_file_urls``,
``limits``, and the browser context's ``proxy``, ``storage_state``,
``record_*`` ...; the table is :data:`HOST_OPTIONS`) are refused unless the server trusts its
clients (``--trust-client-options``; the ``"subprocess"`` launcher sets it, the client being the
same user on the same machine). A token holder can otherwise drive the gym, not the host.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, cast

from hud_gym.controllers.base import Controller
from hud_gym.controllers.remote.protocol import ProtocolError
from hud_gym.core.gym_options import GymOptions, InvalidOptionError
from hud_gym.gyms import UnknownGymError, all_gyms, get_gym

__all__ = [
    "HOST_CONTEXT_OPTIONS",
    "served_gym",
    "HOST_OPTIONS",
    "controller_class",
    "options_model",
    "validate_options",
]

HOST_OPTIONS: dict[str, Callable[[Any], bool]] = {
    "allow_shell": lambda v: bool(v),
    "allow_absolute_paths": lambda v: bool(v),
    "in_container": lambda v: v is not None,
    "sandbox": lambda v: v is False,
    "allow_network": lambda v: bool(v),
    "executable_path": lambda v: v is not None,
    "launch_args": lambda v: bool(v),
    "allow_file_urls": lambda v: v is not None,
    "headless": lambda v: v is False,
    "limits": lambda v: v is not None,  # a client could lift the episode's memory, pids and CPU limits
}
"""Options that reach beyond the gym's sandbox: name -> whether a value does (refused unless trusted)."""
HOST_CONTEXT_OPTIONS = frozenset(
    {"record_har_path", "record_video_dir", "storage_state", "client_certificates", "proxy"}
)
"""Browser context options (``context_options``) that reach the host's files or network."""


@cache
def served_gym(name: str) -> str:
    """The gym a server started for ``name`` (a gym's name, alias or id) serves (its ``served_as``).

    Raises:
        ValueError: no registered gym has that name.
    """
    try:
        return get_gym(name).served_as
    except UnknownGymError:
        names = ", ".join(g.name for g in all_gyms())
        raise ValueError(f"unknown gym {name!r}; a controller server serves one of: {names}") from None


def controller_class(gym: str) -> type[Controller]:
    """The controller class serving ``gym``.

    Raises:
        ValueError: an unknown gym type.
    """
    try:
        descriptor = get_gym(gym)
    except UnknownGymError:
        names = ", ".join(g.name for g in all_gyms())
        raise ValueError(f"unknown gym {gym!r}; a controller server serves one of: {names}") from None
    return cast("type[Controller]", descriptor.controller_factory())


def options_model(gym: str) -> type[GymOptions]:
    """The options model of ``gym`` (its descriptor's ``options``): what a client's JSON is read with.

    Raises:
        ValueError: an unknown gym type.
    """
    try:
        return get_gym(gym).options
    except UnknownGymError:
        names = ", ".join(g.name for g in all_gyms())
        raise ValueError(f"unknown gym {gym!r}; a controller server serves one of: {names}") from None


def validate_options(gym: str, options: dict[str, Any], *, trusted: bool) -> GymOptions:
    """A client's controller options (JSON), read with the gym's options model and checked
    against the trust policy.

    Raises:
        ProtocolError: an unknown option, a bad value, or a host-reaching option from an untrusted
            client; the message names the option.
    """
    model = options_model(gym)
    try:
        checked = model.build(options, f"the {gym} controller's")
    except InvalidOptionError as exc:
        known = ", ".join(model.model_fields) or "none"
        raise ProtocolError(f"{exc} (known options: {known})") from None
    if not trusted:
        values = dict(checked)
        refused = [name for name, risky in HOST_OPTIONS.items() if name in values and risky(values[name])]
        context = values.get("context_options") or {}
        refused += [f"context_options.{key}" for key in sorted(set(context) & HOST_CONTEXT_OPTIONS)]
        if refused:
            raise ProtocolError(
                f"option(s) {', '.join(refused)} reach beyond the gym's sandbox and this server does not trust its "
                "clients with them; start it with --trust-client-options to allow them",
                error_type="Forbidden",
            )
    return checked
