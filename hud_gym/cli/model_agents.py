"""The model agents of ``hud-gym run --agent claude|operator|openai``.

``--model``, ``--base-url``, ``--max-tokens``, ``--temperature`` and ``--system-prompt`` become the
agent's constructor arguments; the API key comes from ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``
(optional for ``openai`` with a ``--base-url``: local servers take any). A missing key, a missing
SDK, a missing ``--model`` for ``openai`` or a ``--base-url`` nobody listens on is one error line
before any env starts.

Example:
    >>> make_model_agent("openai", {"model": "qwen", "base_url": "http://127.0.0.1:8000/v1"}).label  # doctest: +SKIP
    'openai (qwen)'
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from hud_gym.cli.errors import CLIError

__all__ = ["AGENT_OPTIONS", "MODEL_AGENTS", "check_reachable", "make_model_agent"]

MODEL_AGENTS: dict[str, str] = {
    "claude": "hud_gym.agents.claude:ClaudeAgent",
    "operator": "hud_gym.agents.operator:OperatorAgent",
    "openai": "hud_gym.agents.openai_compatible:OpenAICompatibleAgent",
}
"""``--agent`` names of the model agents and their classes."""

AGENT_OPTIONS: tuple[str, ...] = ("model", "base_url", "max_tokens", "temperature", "system_prompt")
"""The ``hud-gym run`` options that configure a model agent (``--model`` ...)."""

_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def check_reachable(base_url: str, timeout: float = 5.0) -> None:
    """Open (and close) a TCP connection to ``base_url``'s host and port.

    Raises:
        CLIError: a malformed URL, or nothing listening there.
    """
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CLIError(f"--base-url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            pass
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise CLIError(f"cannot reach the model server at {base_url}: {reason}") from None


def make_model_agent(kind: str, options: Mapping[str, Any]) -> Any:
    """The agent ``kind`` (a key of :data:`MODEL_AGENTS`) made with ``options``.

    Raises:
        CLIError: see the module docstring.
    """
    import importlib

    from hud_gym.agents.errors import AgentConfigError

    kwargs = {key: value for key, value in options.items() if value is not None}
    base_url = kwargs.get("base_url")
    if base_url and not any(os.environ.get(name) for name in _PROXY_VARS):
        check_reachable(base_url)
    module_name, _, class_name = MODEL_AGENTS[kind].partition(":")
    try:
        agent_class = getattr(importlib.import_module(module_name), class_name)
        return agent_class(**kwargs)
    except AgentConfigError as exc:
        raise CLIError(str(exc) + (" (or --model M)" if kind == "openai" and "model" not in kwargs else "")) from None
