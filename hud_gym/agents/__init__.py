"""Agents: the :class:`Agent` type (hud-gym's ``act`` style and HUD's ``predict`` /
``fetch_response`` style), the model agents, and the built-in baselines.

- :class:`ClaudeAgent`: Claude with Anthropic's computer-use tool (``anthropic`` SDK).
- :class:`OperatorAgent`: OpenAI computer use, Responses API (``openai`` SDK).
- :class:`OpenAICompatibleAgent`: any VLM on an OpenAI-compatible chat server (vLLM, SGLang,
  llama.cpp, Ollama), replies read as CLA JSON or pyautogui-style calls.
- :class:`RandomAgent`, :class:`MiniWoBScriptedAgent`: baselines.

The SDKs are the ``agents`` extra (``pip install 'hud-gym[agents]'``), imported when a model agent
is made. A model call that fails for good, or a reply with no usable action, raises an
:class:`AgentError`: the run ends ``policy_error`` with ``reward=None`` and the message.
"""

from hud_gym.agents.base import Agent
from hud_gym.agents.claude import ClaudeAgent
from hud_gym.agents.errors import AgentConfigError, AgentError, ModelCallError, ReplyParseError
from hud_gym.agents.miniwob_scripted import MiniWoBScriptedAgent
from hud_gym.agents.needs import AgentNeeds
from hud_gym.agents.openai_compatible import OpenAICompatibleAgent
from hud_gym.agents.operator import OperatorAgent
from hud_gym.agents.policy import HudAgentPolicy, as_policy
from hud_gym.agents.random_agent import RandomAgent
from hud_gym.agents.retry import RetryPolicy

__all__ = [
    "Agent",
    "AgentConfigError",
    "AgentError",
    "AgentNeeds",
    "ClaudeAgent",
    "HudAgentPolicy",
    "MiniWoBScriptedAgent",
    "ModelCallError",
    "OpenAICompatibleAgent",
    "OperatorAgent",
    "RandomAgent",
    "ReplyParseError",
    "RetryPolicy",
    "as_policy",
]
