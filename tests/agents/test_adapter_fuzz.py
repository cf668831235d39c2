"""Fuzzing the provider adapters: whatever a model replies, the only exception is an ``ActionError``.

A malformed action is the agent's mistake (the step's ``action_error``), never a crash of the
policy: every payload hypothesis builds, of every JSON shape, in every field of every action,
converts or raises :class:`~hud_gym.actions.ActionError`.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hud_gym.actions import ActionError
from hud_gym.adapters import CLAUDE_ACTIONS, OPERATOR_ACTIONS, Adapter, ClaudeAdapter, OperatorAdapter

pytestmark = pytest.mark.timeout(300)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["up", "down", "left", "right", "ctrl+c", "enter", "+", "++", " ", "", "x", "left"]),
)
_JSON: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["x", "y", "a", "text"]), inner, max_size=3)
    ),
    max_leaves=8,
)
_CLAUDE_FIELDS = [
    "text",
    "coordinate",
    "start_coordinate",
    "scroll_direction",
    "scroll_amount",
    "duration",
    "region",
    "repeat",
]
_OPERATOR_FIELDS = ["x", "y", "button", "keys", "scroll_x", "scroll_y", "text", "ms", "path"]
_CLA_FIELDS = ["type", "point", "button", "pattern", "hold_keys", "keys", "text", "scroll", "path", "time"]


def _payloads(key: str, actions: tuple[str, ...], fields: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    name = st.one_of(st.sampled_from(actions), _SCALARS)
    return st.builds(lambda n, rest: {key: n, **rest}, name, st.dictionaries(st.sampled_from(fields), _JSON))


def _convert_all(adapter: Adapter, payloads: list[Any]) -> None:
    for payload in payloads:
        try:
            adapter.adapt(payload)
        except ActionError:
            pass


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.lists(_payloads("action", CLAUDE_ACTIONS, _CLAUDE_FIELDS), min_size=1, max_size=4))
def test_claude_adapter_raises_only_action_errors(payloads: list[dict[str, Any]]) -> None:
    adapter = ClaudeAdapter()
    adapter.set_env_frame(1280, 720)
    _convert_all(adapter, payloads)


@_SETTINGS
@given(st.lists(_payloads("type", OPERATOR_ACTIONS, _OPERATOR_FIELDS), min_size=1, max_size=4))
def test_operator_adapter_raises_only_action_errors(payloads: list[dict[str, Any]]) -> None:
    adapter = OperatorAdapter()
    adapter.set_env_frame(1280, 720)
    _convert_all(adapter, payloads)


@_SETTINGS
@given(st.lists(st.one_of(_JSON, _payloads("type", ("click", "press", "scroll", "drag", "type"), _CLA_FIELDS))))
def test_base_adapter_raises_only_action_errors(payloads: list[Any]) -> None:
    adapter = Adapter(agent_width=1024, agent_height=768, env_width=1280, env_height=720)
    _convert_all(adapter, payloads)


@pytest.mark.parametrize("direction", [{"a": 1}, ["down"], [], {}])
def test_claude_scroll_with_an_unhashable_direction_is_an_action_error(direction: Any) -> None:
    with pytest.raises(ActionError, match="scroll_direction"):
        ClaudeAdapter().adapt({"action": "scroll", "scroll_direction": direction, "scroll_amount": 3})
