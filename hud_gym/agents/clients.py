"""The providers' official SDK clients, made lazily (the ``agents`` extra) and per event loop.

An async SDK client holds an HTTP connection pool bound to the event loop that first used it, so an
agent keeps one client per running loop (``await agent.predict`` in the user's loop and
``run_job`` on hud-gym's loop each get theirs). The SDKs' own retries are off:
:mod:`hud_gym.agents.retry` is the one retry policy.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

from hud_gym.agents.errors import AgentConfigError

__all__ = ["ClientCache", "require_sdk", "resolve_api_key"]

DEFAULT_TIMEOUT_S = 120.0


def require_sdk(module: str, agent: str) -> ModuleType:
    """Import the SDK ``module`` (``anthropic``, ``openai``).

    Raises:
        AgentConfigError: it is not installed; the message says how to install it.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AgentConfigError(f"{agent} needs the {module!r} package: pip install 'hud-gym[agents]'") from None


def resolve_api_key(api_key: str | None, env_var: str, agent: str, *, required: bool = True) -> str | None:
    """``api_key``, else ``$env_var``.

    Raises:
        AgentConfigError: neither is set and ``required``.
    """
    key = api_key if api_key is not None else os.environ.get(env_var)
    if key is not None and not key.strip():
        key = None
    if key is None and required:
        raise AgentConfigError(f"{agent} needs an API key: pass api_key=... or set {env_var}")
    return key


class ClientCache:
    """One SDK client per running event loop, made by ``factory()`` (or the one given)."""

    def __init__(self, factory: Callable[[], Any], client: Any = None) -> None:
        self._factory = factory
        self._given = client
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    async def aclose(self) -> None:
        """Close the client of the running loop (one given to the agent is the caller's to close)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def get(self) -> Any:
        """The client for the running loop."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._factory()
        return client
