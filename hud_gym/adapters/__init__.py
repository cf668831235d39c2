"""Adapters (HUD's ``hud.adapters``): a model's native actions to CLA actions in the env's
pixels, screenshots to the model's frame, and the tool results each provider expects back.

- :class:`Adapter`: the base (CLA dicts in; ``convert``, ``adapt``, ``adapt_list``,
  ``rescale``, ``reset``).
- :class:`ClaudeAdapter`: Anthropic's computer-use tool (1024x768 by default).
- :class:`OperatorAdapter`: OpenAI's computer-use tool (1024x768 by default).
- :mod:`hud_gym.adapters.results`: ``tool_result`` / ``computer_call_output`` / chat messages.

Example:
    >>> adapter = ClaudeAdapter()
    >>> adapter.adapt({"action": "key", "text": "ctrl+shift+t"})
    PressAction(type='press', reasoning=None, logs=None, keys=['ctrl', 'shift', 't'])
"""

from hud_gym.adapters.base import Adapter
from hud_gym.adapters.claude import CLAUDE_ACTIONS, CLAUDE_KEY_MAP, ClaudeAdapter
from hud_gym.adapters.images import EncodedImage, encode_image
from hud_gym.adapters.operator import OPERATOR_ACTIONS, OPERATOR_KEY_MAP, OperatorAdapter
from hud_gym.adapters.results import (
    chat_user_message,
    claude_tool_result,
    cursor_position_text,
    operator_call_output,
    operator_error_message,
)

__all__ = [
    "CLAUDE_ACTIONS",
    "CLAUDE_KEY_MAP",
    "OPERATOR_ACTIONS",
    "OPERATOR_KEY_MAP",
    "Adapter",
    "ClaudeAdapter",
    "EncodedImage",
    "OperatorAdapter",
    "chat_user_message",
    "claude_tool_result",
    "cursor_position_text",
    "encode_image",
    "operator_call_output",
    "operator_error_message",
]
