"""``OpenAICompatibleAgent``: any vision-language model behind an OpenAI-compatible Chat Completions
server (vLLM, SGLang, llama.cpp, Ollama, OpenAI itself), through the official ``openai`` SDK.

Each step sends the chat so far: the system prompt (the action format), the task and the
screenshot as an ``image_url`` part, then the model's replies and, after each, the new screenshot
(and the env's error for a refused action). Only the ``max_screenshots`` newest screenshots are
kept. The reply is parsed by :class:`~hud_gym.agents.reply_parsing.ReplyParser` (CLA JSON,
computer-use JSON or pyautogui-style calls); a reply with no action ends the run as a policy error
quoting it.

For trainers, each step's ``policy_trace`` holds the prompt exactly as sent (every image as
``{"type": "image", "screenshot": k}``, screenshot 0 being the reset observation and k the
observation after step k), the completion text, the finish reason, the token counts, and, when
asked (``logprobs=True``) or returned by the server (vLLM's ``return_token_ids``), the
completion's logprobs and the token ids.

Example (a local vLLM server):
    >>> agent = OpenAICompatibleAgent("Qwen/Qwen2.5-VL-7B-Instruct", base_url="http://127.0.0.1:8000/v1")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, Literal

from hud_gym.adapters.base import Adapter
from hud_gym.adapters.images import resize, to_array
from hud_gym.adapters.results import chat_user_message
from hud_gym.agents.errors import AgentConfigError, ReplyParseError
from hud_gym.agents.history import ImageHistory
from hud_gym.agents.model_agent import ModelAgent
from hud_gym.agents.reply_parsing import ReplyParser

__all__ = ["DEFAULT_PROMPT_TEMPLATE", "DEFAULT_SYSTEM_PROMPT", "OpenAICompatibleAgent"]

DEFAULT_SYSTEM_PROMPT = """You control a computer by looking at screenshots and replying with actions.
The screenshot is {width}x{height} pixels; {coordinates}.
Reply with your actions, one Python-style call per line, for example:
click(x=100, y=200)  double_click(x=100, y=200)  right_click(x=100, y=200)  move_to(x=100, y=200)
drag(100, 200, 300, 400)  scroll(-3, x=100, y=200) (3 wheel clicks down; positive scrolls up)
write('some text')  press('enter')  hotkey('ctrl', 'c')  wait(1)
When the task is done, or it asks a question, reply answer('your final answer')."""
"""The default system prompt; ``{width}``, ``{height}`` and ``{coordinates}`` are filled in."""

DEFAULT_PROMPT_TEMPLATE = "Task: {instruction}"
"""The default first user turn; ``{instruction}`` is the task's prompt."""

DEFAULT_FEEDBACK_TEMPLATE = "The screen after your actions.{error}"
"""The text of later user turns; ``{error}`` is empty or the env's message for a refused action."""

_COORDINATES = {
    "pixels": "x and y are pixels from the top-left corner",
    "relative": "x and y run from 0 to 1000 across the screenshot's width and height",
}


class OpenAICompatibleAgent(ModelAgent):
    """A VLM on an OpenAI-compatible server driving any gym (see the module docstring).

    Args:
        model: the served model's name (required).
        base_url: the server, e.g. ``http://127.0.0.1:8000/v1`` (default: OpenAI's API). With a
            ``base_url`` the API key is optional (local servers take any).
        display_size: the size screenshots are sent at; ``None`` (default): the env's frame.
        coordinates: ``"pixels"`` of the screenshot, or ``"relative"`` (0-1000 on both axes, as
            Qwen3-VL and UI-TARS answer).
        system_prompt: a template with ``{width}``, ``{height}``, ``{coordinates}``.
        prompt_template: the first user turn, with ``{instruction}``.
        feedback_template: later user turns, with ``{error}``.
        max_screenshots: screenshots kept in the chat.
        logprobs: ask for the completion's logprobs (kept in the trace).
        extra_body: extra request fields for the server (``{"top_k": 20}``, vLLM's
            ``{"return_token_ids": True}``).
        **settings: see :class:`~hud_gym.agents.model_agent.ModelAgent`.
    """

    SDK = "openai"
    KEY_ENV = "OPENAI_API_KEY"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        display_size: tuple[int, int] | None = None,
        coordinates: Literal["pixels", "relative"] = "pixels",
        prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
        feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE,
        max_screenshots: int | None = 3,
        logprobs: bool = False,
        extra_body: dict[str, Any] | None = None,
        **settings: Any,
    ) -> None:
        if not model:
            raise AgentConfigError("OpenAICompatibleAgent needs the served model's name (model=...)")
        if coordinates not in _COORDINATES:
            raise AgentConfigError(
                f"OpenAICompatibleAgent: coordinates must be 'pixels' or 'relative', got {coordinates!r}"
            )
        if max_screenshots is not None and max_screenshots < 1:
            raise AgentConfigError(f"OpenAICompatibleAgent: max_screenshots must be at least 1, got {max_screenshots}")
        if coordinates == "relative":
            adapter = Adapter(1000, 1000)
        else:
            adapter = Adapter(*display_size) if display_size else Adapter(follow_env=True)
        settings.setdefault("system_prompt", DEFAULT_SYSTEM_PROMPT)
        super().__init__(model, base_url=base_url, adapter=adapter, api_key_required=base_url is None, **settings)
        self.display_size = display_size
        self.coordinates = coordinates
        self.prompt_template = prompt_template
        self.feedback_template = feedback_template
        self.max_screenshots = max_screenshots
        self.logprobs = logprobs
        self.extra_body = dict(extra_body or {})
        self.reset()

    def _make_client(self) -> Any:
        return self._sdk.AsyncOpenAI(
            api_key=self._api_key or "not-needed", base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    def reset(self) -> None:
        """A fresh chat."""
        super().reset()
        self.messages: list[dict[str, Any]] = []
        self.images = ImageHistory()
        self.parser = ReplyParser()

    def preprocess(self, observation: Any, info: dict[str, Any] | None = None) -> dict[str, Any]:
        """As :meth:`Agent.preprocess`; with relative coordinates the screenshot keeps its own
        frame (or ``display_size``) while actions are read in 0-1000."""
        if self.coordinates == "pixels":
            return super().preprocess(observation, info)
        screenshot = observation.get("screenshot") if isinstance(observation, dict) else observation.screenshot
        text = observation.get("text") if isinstance(observation, dict) else observation.text
        array = to_array(screenshot)
        self.adapter.set_env_frame(array.shape[1], array.shape[0])
        scaled = resize(array, self.display_size) if self.display_size else array
        return {"screenshot": scaled, "text": text or "", "info": dict(info or {}), "env_screenshot": screenshot}

    def _user_turn(self, text: str, screenshot: Any) -> dict[str, Any]:
        message = chat_user_message(text, self.encode(screenshot))
        self.images.register(message["content"][-1], self.screenshots - 1)
        return message

    async def fetch_response(self, observation: dict[str, Any]) -> tuple[list[Any], bool]:
        """Send the new screenshot, parse the reply into CLA actions."""
        self.screenshots += 1
        screenshot = observation["screenshot"]
        if not self.messages:
            height, width = screenshot.shape[:2]
            system = (self.system_prompt or "").format(
                width=width, height=height, coordinates=_COORDINATES[self.coordinates]
            )
            if system:
                self.messages.append({"role": "system", "content": system})
            text = self.prompt_template.format(instruction=self.prompt(observation))
        else:
            error = observation["info"].get("action_error")
            text = self.feedback_template.format(error=f" Your last action failed: {error}" if error else "")
        self.messages.append(self._user_turn(text, screenshot))
        self.images.prune(self.messages, self.max_screenshots)
        kwargs: dict[str, Any] = {"model": self.model, "messages": self.messages, "max_tokens": self.max_tokens}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.logprobs:
            kwargs["logprobs"] = True
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        response, meta = await self.call("chat completion", lambda client: client.chat.completions.create(**kwargs))
        if not response.choices:
            raise ReplyParseError(f"the server at {self.endpoint} returned no choices")
        choice = response.choices[0]
        reply = choice.message.content or ""
        self.last_trace = self._trace(response, choice, reply, meta)
        self.messages.append({"role": "assistant", "content": reply})
        parsed = self.parser.parse(reply)
        self.last_trace["format"] = parsed.format
        done = any(action.get("type") == "response" for action in parsed.actions)
        return parsed.actions, done

    def _trace(self, response: Any, choice: Any, reply: str, meta: dict[str, Any]) -> dict[str, Any]:
        usage = getattr(response, "usage", None)
        trace: dict[str, Any] = {
            "provider": "openai-chat",
            "model": self.model,
            **meta,
            "response_id": getattr(response, "id", None),
            "prompt": self.images.redacted(self.messages),
            "completion": reply,
            "finish_reason": getattr(choice, "finish_reason", None),
            "usage": {
                name: getattr(usage, name, None) for name in ("prompt_tokens", "completion_tokens", "total_tokens")
            },
        }
        content = getattr(getattr(choice, "logprobs", None), "content", None)
        if content:
            trace["logprobs"] = [{"token": t.token, "logprob": t.logprob} for t in content]
        for source, name, key in (
            (response, "prompt_token_ids", "prompt_token_ids"),
            (choice, "token_ids", "completion_token_ids"),
        ):
            value = getattr(source, name, None)
            if value is not None:
                trace[key] = list(value)
        return trace
