"""``ModelAgent``: what the provider agents share: their settings, an SDK client per event loop,
the task prompt, screenshot encoding and the model call with retries (timed, for the trace).

Settings every provider agent takes: ``model``, ``api_key`` (default from the provider's
environment variable), ``base_url``, ``max_tokens``, ``system_prompt``, ``temperature``,
``retry`` (a :class:`~hud_gym.agents.retry.RetryPolicy`), ``timeout`` (seconds per call),
``image_format`` / ``image_quality`` (screenshots sent as JPEG 85 by default) and ``client``
(an SDK client to use instead of making one; HUD's ``ClaudeAgent(client, adapter)`` positional
form works too).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, TypeVar

import numpy as np

from hud_gym.adapters.base import Adapter
from hud_gym.adapters.images import EncodedImage, ImageFormat, encode_image, to_array
from hud_gym.agents.base import Agent
from hud_gym.agents.clients import DEFAULT_TIMEOUT_S, ClientCache, require_sdk, resolve_api_key
from hud_gym.agents.errors import AgentConfigError
from hud_gym.agents.retry import RetryPolicy, call_with_retries

__all__ = ["ModelAgent"]

T = TypeVar("T")


class ModelAgent(Agent):
    """Base of the agents that call a model through a provider's SDK (see the module docstring)."""

    SDK: ClassVar[str] = ""
    KEY_ENV: ClassVar[str] = ""
    DEFAULT_MODEL: ClassVar[str] = ""
    adapter: Adapter

    def __init__(
        self,
        model: str | Any = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
        system_prompt: str | None = None,
        temperature: float | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        image_format: ImageFormat = "jpeg",
        image_quality: int = 85,
        client: Any = None,
        adapter: Adapter | None = None,
        api_key_required: bool = True,
    ) -> None:
        if model is not None and not isinstance(model, str):  # HUD's signature: Agent(client, adapter)
            model, client = None, model
        super().__init__(None, adapter or Adapter(follow_env=True))
        name = type(self).__name__
        if max_tokens < 1:
            raise AgentConfigError(f"{name}: max_tokens must be at least 1, got {max_tokens}")
        if temperature is not None and not 0 <= temperature <= 2:
            raise AgentConfigError(f"{name}: temperature must be between 0 and 2, got {temperature}")
        if image_format not in ("jpeg", "png"):
            raise AgentConfigError(f"{name}: image_format must be 'jpeg' or 'png', got {image_format!r}")
        self.model = model or self.DEFAULT_MODEL
        self.base_url = base_url.rstrip("/") if base_url else None
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.image_format: ImageFormat = image_format
        self.image_quality = image_quality
        self._sdk: Any = require_sdk(self.SDK, name) if client is None else None
        self._api_key = resolve_api_key(api_key, self.KEY_ENV, name, required=api_key_required and client is None)
        self._clients = ClientCache(self._make_client, client)
        self.screenshots = 0

    def _make_client(self) -> Any:
        """A new SDK client (in the running event loop); the SDK's own retries are off."""
        raise NotImplementedError

    @property
    def endpoint(self) -> str:
        """Where the model is called (for messages)."""
        return self.base_url or "the provider's default endpoint"

    async def aclose(self) -> None:
        """Close the SDK client this agent made for the running event loop (its connections);
        the agent makes a new one if used again. ``run_job`` and ``rollout`` on hud-gym's loop
        need no closing: that loop lives as long as the process."""
        await self._clients.aclose()

    def reset(self) -> None:
        """Forget the episode (a fresh conversation)."""
        super().reset()
        self.screenshots = 0

    # ----------------------------------------------------------------- helpers

    @staticmethod
    def prompt(observation: dict[str, Any]) -> str:
        """The task's instruction: ``info["prompt"]``, else the observation's text."""
        return str(observation["info"].get("prompt") or observation.get("text") or "").strip()

    def encode(self, screenshot: Any) -> EncodedImage:
        """A screenshot (already at the agent's frame) as the provider wants it."""
        array = screenshot if isinstance(screenshot, np.ndarray) else to_array(screenshot)
        return encode_image(array, self.image_format, self.image_quality)

    async def call(self, what: str, request: Callable[[Any], Awaitable[T]]) -> tuple[T, dict[str, Any]]:
        """``await request(client)`` with retries; returns the result and ``{attempts, latency_s}``.

        Raises:
            hud_gym.agents.ModelCallError: the call failed for good, in one line.
        """
        client = self._clients.get()
        retries: list[str] = []

        def on_retry(attempt: int, exc: BaseException, wait: float) -> None:
            retries.append(
                f"attempt {attempt}: {getattr(exc, 'status_code', None) or type(exc).__name__}, "
                f"retried after {wait:.2f} s"
            )

        started = time.perf_counter()
        result, attempts = await call_with_retries(
            lambda: request(client), self.retry, what=f"{what} ({self.model} at {self.endpoint})", on_retry=on_retry
        )
        meta: dict[str, Any] = {"attempts": attempts, "latency_s": round(time.perf_counter() - started, 4)}
        if retries:
            meta["retries"] = retries
        return result, meta
