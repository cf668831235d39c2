"""The trust policy of a controller server: which controller options a client may send.

A client opens an env with the keyword options of the gym's controller (``headless``,
``reset_mode``, ``allow_shell``, ...). They are checked against the controller's own signature
(:func:`options_model`: an unknown option or a wrong type is refused, naming it and the known
ones), then against the trust policy: options that run programs or reach the host's files or
network, or open windows on the server's display (``allow_shell``, ``sandbox=False``,
``allow_network``, ``headless=False``, ``executable_path``,
``launch_args``, ``allow_file_urls``, and the browser context's ``proxy``, ``storage_state``,
``record_*`` ...; the table is :data:`HOST_OPTIONS`) are refused unless the server trusts its
clients (``--trust-client-options``; the ``"subprocess"`` launcher sets it, the client being the
same user on the same machine). A token holder can otherwise drive the gym, not the host.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from hud_gym.controllers.base import Controller
from hud_gym.controllers.remote.protocol import ProtocolError
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


@cache
def options_model(gym: str) -> type[BaseModel]:
    """A pydantic model of the keyword options of ``gym``'s controller (from its signature)."""
    cls = controller_class(gym)
    hints = typing.get_type_hints(cls.__init__)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name in ("self", "screen_size") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is param.empty else param.default
        fields[name] = (hints.get(name, Any), default)
    return create_model(f"{cls.__name__}Options", __config__=ConfigDict(extra="forbid"), **fields)


def validate_options(gym: str, options: dict[str, Any], *, trusted: bool) -> dict[str, Any]:
    """Check a client's controller options against the controller's signature and the trust policy.

    Raises:
        ProtocolError: an unknown option, a wrong type, or a host-reaching option from an untrusted
            client; the message names the option.
    """
    model = options_model(gym)
    try:
        checked = model.model_validate(options)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        known = ", ".join(model.model_fields) or "none"
        raise ProtocolError(
            f"option '{loc}' of the {gym} controller: {first['msg']} (known options: {known})"
        ) from None
    values = {name: getattr(checked, name) for name in model.model_fields}
    if not trusted:
        refused = [name for name, risky in HOST_OPTIONS.items() if name in values and risky(values[name])]
        context = values.get("context_options") or {}
        refused += [f"context_options.{key}" for key in sorted(set(context) & HOST_CONTEXT_OPTIONS)]
        if refused:
            raise ProtocolError(
                f"option(s) {', '.join(refused)} reach beyond the gym's sandbox and this server does not trust its "
                "clients with them; start it with --trust-client-options to allow them",
                error_type="Forbidden",
            )
    return values
