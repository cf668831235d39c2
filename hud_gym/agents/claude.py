"""``ClaudeAgent``: Claude with Anthropic's computer-use tool, through the official ``anthropic`` SDK.

Each step sends the conversation (the task prompt and first screenshot, then the model's turns and
our ``tool_result`` blocks) to the Messages API and runs the model's ``tool_use`` as CLA actions
through :class:`~hud_gym.adapters.ClaudeAdapter`. Pairing follows the API's rule: every
``tool_use`` of an assistant turn is answered, by id, in the next user turn; when a turn holds
several, each runs as its own env step (so each result shows the screen after its own action) and
the model is called again once all are answered. Only the ``max_screenshots`` newest screenshots
stay in the history. A turn without a ``tool_use`` ends the episode: its text is the response.

Tool versions: ``computer_20251124`` (default, for the Claude 4.5+ models; beta
``computer-use-2025-11-24``, ``enable_zoom``), ``computer_20250124`` (older models; beta
``computer-use-2025-01-24``) and the GA ``computer_toolset_20260801`` (member tools named by action,
results carry ``toolset_name``).

Example (against a local server speaking the Messages API):
    >>> agent = ClaudeAgent(base_url="http://127.0.0.1:8000", api_key="local")   # doctest: +SKIP
    >>> job = run_job(agent, "miniwob", "claude", env_kwargs={"elements": False})  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from hud_gym.adapters.claude import ClaudeAdapter, tool_use_input, zoom_region
from hud_gym.adapters.images import encode_image, fit, to_array, zoom
from hud_gym.adapters.results import claude_image_block, claude_tool_result, cursor_position_text
from hud_gym.agents.errors import AgentConfigError, AgentError
from hud_gym.agents.history import ImageHistory
from hud_gym.agents.model_agent import ModelAgent

__all__ = ["CLAUDE_TOOL_VERSIONS", "ClaudeAgent"]

CLAUDE_TOOL_VERSIONS: dict[str, str | None] = {
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
    "computer_toolset_20260801": None,
}
"""Supported computer tool versions and the beta flag each needs (``None``: generally available)."""

DEFAULT_SYSTEM_PROMPT = (
    "You operate a computer through the computer tool; the screen is {width}x{height} pixels. Do the user's task "
    "step by step, looking at each screenshot. When the task is done, or it asks a question, reply with your final "
    "answer as plain text and no tool call."
)


class ClaudeAgent(ModelAgent):
    """Claude driving any gym through the computer-use tool (see the module docstring).

    Args:
        model: the Claude model (default ``claude-sonnet-4-6``).
        adapter: a :class:`~hud_gym.adapters.ClaudeAdapter` to use (its frame wins over ``display_size``).
        tool_version: a key of :data:`CLAUDE_TOOL_VERSIONS`.
        display_size: the frame the model sees ``(width, height)``; screenshots are resized to it and
            its coordinates scaled back. ``None``: the env's own frame (no resizing).
        max_screenshots: screenshots kept in the history (older ones become a text note).
        enable_zoom: offer the ``zoom`` action (``computer_20251124`` and the toolset).
        **settings: see :class:`~hud_gym.agents.model_agent.ModelAgent` (``api_key`` defaults to
            ``$ANTHROPIC_API_KEY``; ``temperature``, which the ``anthropic`` SDK 2.x no longer
            declares, is sent as an extra body field when set).
    """

    SDK = "anthropic"
    KEY_ENV = "ANTHROPIC_API_KEY"
    DEFAULT_MODEL = "claude-sonnet-4-6"

    def __init__(
        self,
        model: str | Any = None,
        adapter: ClaudeAdapter | None = None,
        *,
        tool_version: str = "computer_20251124",
        display_size: tuple[int, int] | None = (1024, 768),
        max_screenshots: int | None = 3,
        enable_zoom: bool = False,
        **settings: Any,
    ) -> None:
        if tool_version not in CLAUDE_TOOL_VERSIONS:
            raise AgentConfigError(
                f"ClaudeAgent: unknown tool_version {tool_version!r}; supported: {', '.join(CLAUDE_TOOL_VERSIONS)}"
            )
        if max_screenshots is not None and max_screenshots < 1:
            raise AgentConfigError(f"ClaudeAgent: max_screenshots must be at least 1, got {max_screenshots}")
        if adapter is None:
            adapter = ClaudeAdapter(*display_size) if display_size else ClaudeAdapter(follow_env=True)
        super().__init__(model, adapter=adapter, **settings)
        self.tool_version = tool_version
        self.max_screenshots = max_screenshots
        self.enable_zoom = enable_zoom
        self.reset()

    def _make_client(self) -> Any:
        return self._sdk.AsyncAnthropic(
            api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    def reset(self) -> None:
        """A fresh conversation."""
        super().reset()
        self.messages: list[dict[str, Any]] = []
        self.images = ImageHistory()
        self._queue: list[Any] = []
        self._running: Any = None
        self._results: list[dict[str, Any]] = []

    # ----------------------------------------------------------------- request

    def tools(self) -> list[dict[str, Any]]:
        """The ``tools`` of the request."""
        if self.tool_version == "computer_toolset_20260801":
            return [{"type": self.tool_version, "configs": {"zoom": {"enabled": self.enable_zoom}}}]
        width, height = self.adapter.agent_frame
        tool: dict[str, Any] = {
            "type": self.tool_version,
            "name": "computer",
            "display_width_px": width,
            "display_height_px": height,
        }
        if self.tool_version == "computer_20251124" and self.enable_zoom:
            tool["enable_zoom"] = True
        return [tool]

    def request(self) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for the conversation so far."""
        width, height = self.adapter.agent_frame
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": self.messages,
            "tools": self.tools(),
            "system": (self.system_prompt or DEFAULT_SYSTEM_PROMPT).format(width=width, height=height),
        }
        if self.temperature is not None:  # the anthropic SDK (2.x) has no sampling parameters: sent as is
            kwargs["extra_body"] = {"temperature": self.temperature}
        beta = CLAUDE_TOOL_VERSIONS[self.tool_version]
        if beta:
            kwargs["betas"] = [beta]
        return kwargs

    async def _create(self, client: Any, kwargs: dict[str, Any]) -> Any:
        if "betas" in kwargs:
            return await client.beta.messages.create(**kwargs)
        return await client.messages.create(**kwargs)

    # ----------------------------------------------------------------- the step

    def _image(self, screenshot: Any) -> dict[str, Any]:
        return self.images.register(claude_image_block(self.encode(screenshot)), self.screenshots - 1)

    def _result(self, tool_use: Any, observation: dict[str, Any]) -> dict[str, Any]:
        """The ``tool_result`` for ``tool_use``, whose action the last step ran."""
        info, data = observation["info"], tool_use_input(tool_use)
        toolset = getattr(tool_use, "toolset_name", None)
        if info.get("action_error"):
            return claude_tool_result(tool_use.id, error=str(info["action_error"]), toolset_name=toolset)
        if data.get("action") == "cursor_position":
            position = info.get("position")
            if position is None:
                return claude_tool_result(
                    tool_use.id, error="the cursor position is not available", toolset_name=toolset
                )
            return claude_tool_result(
                tool_use.id, text=cursor_position_text(*self.adapter.to_agent(*position)), toolset_name=toolset
            )
        if data.get("action") == "zoom":
            # The region as the model sees it (its frame's aspect), scaled up to fill the frame,
            # from the env's own pixels (more detail than the resized screenshot).
            x0, y0, x1, y1 = zoom_region(data)
            box = (*self.adapter.to_env(x0, y0), *self.adapter.to_env(x1, y1))
            size = fit((x1 - x0, y1 - y0), self.adapter.agent_frame)
            zoomed = zoom(to_array(observation["env_screenshot"]), box, size)
            image = encode_image(zoomed, self.image_format, self.image_quality)
            return claude_tool_result(tool_use.id, image=image, toolset_name=toolset)
        result = claude_tool_result(tool_use.id, toolset_name=toolset)
        result["content"].append(self._image(observation["screenshot"]))
        return result

    def _start(self, tool_use: Any) -> list[dict[str, Any]]:
        name, toolset = getattr(tool_use, "name", None), getattr(tool_use, "toolset_name", None)
        if name != "computer" and toolset != "computer":
            raise AgentError(f"ClaudeAgent: the model called an unknown tool {name!r}")
        self._running = tool_use
        return [tool_use_input(tool_use)]

    async def fetch_response(self, observation: dict[str, Any]) -> tuple[list[Any], bool]:
        """Answer the last tool call, then the next queued one or a new model turn."""
        trace: dict[str, Any] = {"provider": "anthropic", "model": self.model}
        self.screenshots += 1
        if self._running is not None:
            self._results.append(self._result(self._running, observation))
            self._running = None
        if self._queue:
            tool_use = self._queue.pop(0)
            self.last_trace = {**trace, "queued": True, "tool_use": _dump(tool_use)}
            return self._start(tool_use), False
        if self._results:
            self.messages.append({"role": "user", "content": self._results})
            self._results = []
        else:
            text = self.prompt(observation) if not self.messages else "Continue with the task."
            self.messages.append(
                {"role": "user", "content": [{"type": "text", "text": text}, self._image(observation["screenshot"])]}
            )
        self.images.prune(self.messages, self.max_screenshots)
        kwargs = self.request()
        response, meta = await self.call("Anthropic Messages call", lambda client: self._create(client, kwargs))
        content = [block.model_dump(exclude_none=True) for block in response.content]
        self.messages.append({"role": "assistant", "content": content})
        text = "\n".join(block.text for block in response.content if block.type == "text").strip()
        tool_uses = [block for block in response.content if block.type == "tool_use"]
        usage = getattr(response, "usage", None)
        self.last_trace = {
            **trace,
            **meta,
            "response_id": response.id,
            "stop_reason": response.stop_reason,
            "usage": {
                "input_tokens": getattr(usage, "input_tokens", None),
                "output_tokens": getattr(usage, "output_tokens", None),
            },
            "text": text,
            "tool_uses": [_dump(t) for t in tool_uses],
        }
        if not tool_uses:
            return [{"action": "response", "text": text}], True
        self._queue = tool_uses[1:]
        return self._start(tool_uses[0]), False


def _dump(tool_use: Any) -> dict[str, Any]:
    return {"id": tool_use.id, "name": tool_use.name, "input": dict(tool_use.input or {})}
