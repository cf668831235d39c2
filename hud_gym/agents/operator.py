"""``OperatorAgent``: OpenAI's computer-use model through the official ``openai`` SDK (Responses API).

The first call sends the task prompt and the first screenshot; each later call sends only what is
new, a ``computer_call_output`` per ``computer_call`` of the last response (the screenshot after its
actions, by ``call_id``), chained to it with ``previous_response_id``, so the conversation lives on
the server. A call's actions (``action``, or the batched ``actions`` of the GA ``computer`` tool)
run as one env step through :class:`~hud_gym.adapters.OperatorAdapter`. Pending safety checks are
acknowledged in the next output and logged in the step's trace (``acknowledge_safety_checks=False``
makes one end the run as a policy error instead). A response without a ``computer_call`` ends the
episode: its text is the response. An action the env refused is reported as a user message after
the call's output.

Example (against a local server speaking the Responses API):
    >>> agent = OperatorAgent(base_url="http://127.0.0.1:8000/v1", api_key="local")   # doctest: +SKIP
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from hud_gym.adapters.operator import OperatorAdapter
from hud_gym.adapters.results import operator_call_output, operator_error_message
from hud_gym.agents.errors import AgentConfigError, AgentError
from hud_gym.agents.model_agent import ModelAgent

__all__ = ["OperatorAgent"]

log = logging.getLogger(__name__)

Environment = Literal["browser", "linux", "ubuntu", "windows", "mac"]


class OperatorAgent(ModelAgent):
    """OpenAI computer use driving any gym (see the module docstring).

    Args:
        model: default ``computer-use-preview``.
        adapter: an :class:`~hud_gym.adapters.OperatorAdapter` to use (its frame wins over ``display_size``).
        tool: ``"computer_use_preview"`` (declares the display and ``environment``) or
            ``"computer"`` (the GA tool).
        environment: what the model is told it controls; ``None`` picks ``browser`` for an env
            that reports a page URL, else ``linux``.
        display_size: the frame the model sees ``(width, height)``; ``None``: the env's frame.
        acknowledge_safety_checks: acknowledge pending safety checks (logged); ``False`` fails the
            run on the first one.
        reasoning: the request's ``reasoning`` (e.g. ``{"summary": "concise"}``).
        image_detail: the ``detail`` of the first screenshot (``auto``, ``high``, ``original``).
        **settings: see :class:`~hud_gym.agents.model_agent.ModelAgent` (``api_key`` defaults to
            ``$OPENAI_API_KEY``; ``system_prompt`` is sent as ``instructions``).
    """

    SDK = "openai"
    KEY_ENV = "OPENAI_API_KEY"
    DEFAULT_MODEL = "computer-use-preview"

    def __init__(
        self,
        model: str | Any = None,
        adapter: OperatorAdapter | None = None,
        *,
        tool: Literal["computer_use_preview", "computer"] = "computer_use_preview",
        environment: Environment | None = None,
        display_size: tuple[int, int] | None = (1024, 768),
        acknowledge_safety_checks: bool = True,
        reasoning: dict[str, Any] | None = None,
        image_detail: str = "auto",
        **settings: Any,
    ) -> None:
        if tool not in ("computer_use_preview", "computer"):
            raise AgentConfigError(f"OperatorAgent: tool must be 'computer_use_preview' or 'computer', got {tool!r}")
        if adapter is None:
            adapter = OperatorAdapter(*display_size) if display_size else OperatorAdapter(follow_env=True)
        super().__init__(model, adapter=adapter, **settings)
        self.tool = tool
        self.environment = environment
        self.acknowledge_safety_checks = acknowledge_safety_checks
        self.reasoning = reasoning
        self.image_detail = image_detail
        self.reset()

    def _make_client(self) -> Any:
        return self._sdk.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout)

    def reset(self) -> None:
        """A fresh conversation."""
        super().reset()
        self.response_id: str | None = None
        self._queue: list[Any] = []
        self._running: Any = None
        self._outputs: list[dict[str, Any]] = []
        self.safety_checks: list[dict[str, Any]] = []
        self._environment: str | None = None

    def tools(self, info: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``tools`` of the request."""
        if self.tool == "computer":
            return [{"type": "computer"}]
        width, height = self.adapter.agent_frame
        if self._environment is None:
            self._environment = self.environment or ("browser" if info.get("url") else "linux")
        environment = self._environment
        return [
            {
                "type": "computer_use_preview",
                "display_width": width,
                "display_height": height,
                "environment": environment,
            }
        ]

    def _output(self, call: Any, observation: dict[str, Any]) -> list[dict[str, Any]]:
        """The input items answering ``call``, whose actions the last step ran."""
        checks = list(call.pending_safety_checks or [])
        items = [operator_call_output(call.call_id, self.encode(observation["screenshot"]), checks)]
        error = observation["info"].get("action_error")
        if error:
            items.append(operator_error_message(str(error)))
        return items

    def _start(self, call: Any) -> list[dict[str, Any]]:
        checks = [{"id": c.id, "code": c.code, "message": c.message} for c in (call.pending_safety_checks or [])]
        if checks and not self.acknowledge_safety_checks:
            described = "; ".join(f"{c['code']}: {c['message']}" for c in checks)
            raise AgentError(f"OperatorAgent: the model asked to acknowledge safety checks: {described}")
        for check in checks:
            log.warning(
                "OperatorAgent acknowledges safety check %s (%s): %s", check["id"], check["code"], check["message"]
            )
        self.safety_checks.extend(checks)
        self._running = call
        actions = list(call.actions) if getattr(call, "actions", None) else [call.action] if call.action else []
        if not actions:
            raise AgentError(f"OperatorAgent: computer_call {call.call_id} has no action")
        return [a.model_dump(exclude_none=True) for a in actions]

    def request(self, items: list[dict[str, Any]], info: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of ``responses.create``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "input": items,
            "tools": self.tools(info),
            "truncation": "auto",
            "max_output_tokens": self.max_tokens,
        }
        if self.response_id is not None:
            kwargs["previous_response_id"] = self.response_id
        if self.system_prompt:
            kwargs["instructions"] = self.system_prompt
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.reasoning is not None:
            kwargs["reasoning"] = self.reasoning
        return kwargs

    async def fetch_response(self, observation: dict[str, Any]) -> tuple[list[Any], bool]:
        """Answer the last call, then run the next queued one or ask the model again."""
        trace: dict[str, Any] = {"provider": "openai-responses", "model": self.model}
        self.screenshots += 1
        if self._running is not None:
            self._outputs.extend(self._output(self._running, observation))
            self._running = None
        if self._queue:
            call = self._queue.pop(0)
            actions = self._start(call)
            self.last_trace = {**trace, "queued": True, "call_id": call.call_id, "actions": actions}
            return actions, False
        if self._outputs:
            items, self._outputs = self._outputs, []
        else:
            image = self.encode(observation["screenshot"])
            items = [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "input_text",
                            "text": self.prompt(observation) if self.response_id is None else "Continue.",
                        },
                        {"type": "input_image", "image_url": image.data_url, "detail": self.image_detail},
                    ],
                }
            ]
        kwargs = self.request(items, observation["info"])
        response, meta = await self.call("OpenAI Responses call", lambda client: client.responses.create(**kwargs))
        self.response_id = response.id
        calls = [item for item in response.output if item.type == "computer_call"]
        usage = getattr(response, "usage", None)
        self.last_trace = {
            **trace,
            **meta,
            "response_id": response.id,
            "previous_response_id": kwargs.get("previous_response_id"),
            "usage": {
                "input_tokens": getattr(usage, "input_tokens", None),
                "output_tokens": getattr(usage, "output_tokens", None),
            },
            "text": response.output_text,
            "calls": [c.call_id for c in calls],
        }
        if not calls:
            return [{"type": "response", "text": response.output_text.strip()}], True
        self._queue = calls[1:]
        actions = self._start(calls[0])
        if calls[0].pending_safety_checks:
            self.last_trace["acknowledged_safety_checks"] = [
                {"id": c.id, "code": c.code, "message": c.message} for c in calls[0].pending_safety_checks
            ]
        return actions, False
