"""``hud-gym serve GYM --mcp`` (and ``--openenv``): one env served through another protocol.

The env is made here, from the operator's command line (the gym, ``--task`` or ``--taskset``):
what a protocol's client may do is pick a task by reference and act (:mod:`hud_gym.protocols`).
"""

from __future__ import annotations

import json
from typing import Any

from hud_gym.cli.errors import CLIError

__all__ = ["PROTOCOLS", "serve_protocol"]

PROTOCOLS = ("mcp", "openenv")
"""The protocols ``serve`` speaks besides hud-gym's own controller protocol."""


def env_options(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as env keyword options, each VALUE read as JSON, else kept as a string.

    Raises:
        CLIError: a pair without ``=``.
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.isidentifier():
            raise CLIError(f"--option {pair!r}: expected KEY=VALUE (e.g. elements=true)")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def served_env(gym: str, task: str | None, taskset: str | None, options: dict[str, Any]) -> Any:
    """The env to serve: ``task`` (a reference), else ``gym`` with ``taskset`` (or no task yet),
    with the operator's ``options``.

    Raises:
        CLIError: an unknown gym, task, task set or option.
    """
    import hud_gym
    from hud_gym.gyms import UnknownGymError

    try:
        if task is not None:
            return hud_gym.make(task, **options)
        return hud_gym.make(gym, **({"taskset": taskset} if taskset else {}), **options)
    except (UnknownGymError, ValueError, TypeError, KeyError) as exc:
        raise CLIError(str(exc)) from None


def serve_protocol(
    protocol: str,
    gym: str,
    *,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    max_message_size: int | None,
    task: str | None,
    taskset: str | None,
    options: list[str],
) -> None:
    """Serve one env through ``protocol`` (``"mcp"`` or ``"openenv"``) until stopped.

    Raises:
        CLIError: the protocol's package is missing, a bad transport, or the env cannot be made.
    """
    if protocol == "mcp":
        try:
            from hud_gym.protocols.mcp import DEFAULT_MAX_MESSAGE_SIZE, serve
        except ModuleNotFoundError as exc:
            raise CLIError(f"hud-gym serve --mcp needs the mcp SDK ({exc}): pip install 'hud-gym[mcp]'") from None
        if transport not in ("stdio", "http"):
            raise CLIError(f"--transport {transport!r}: use stdio or http")
        from hud_gym.protocols.session import ServedEnv

        served = ServedEnv(served_env(gym, task, taskset, env_options(options)))
        try:
            serve(
                served,
                transport=transport,
                host=host,
                port=port,
                token=token,
                max_message_size=max_message_size or DEFAULT_MAX_MESSAGE_SIZE,
            )
        except OSError as exc:
            raise CLIError(f"cannot serve on {host}:{port}: {exc.strerror or exc}", exit_code=1) from None
        return
    if protocol == "openenv":
        from hud_gym.protocols.openenv.serve import serve_openenv

        kwargs = env_options(options)
        serve_openenv(lambda: served_env(gym, task, taskset, kwargs), host=host, port=port, token=token)
        return
    raise CLIError(f"unknown protocol {protocol!r}; one of {', '.join(PROTOCOLS)}")
