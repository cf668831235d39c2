"""Gymnasium spaces of hud-gym: the CLA action ``Dict`` and the shared observation ``Dict``.

Every shape is fixed, so any vector env can batch the spaces. The action ``Dict`` encodes every
CLA action: an ``action_type`` index plus the fields each type needs. :func:`encode` and
:func:`decode` are exact inverses for every valid action within the limits of
:class:`ActionSpaceConfig` (``decode(encode(a)) == a``), and every ``action_space.sample()`` decodes
to a valid action.

Action ``Dict`` keys (W, H = screen width and height; limits from the config):

=================  ============================================  ======================================
key                space                                         used by
=================  ============================================  ======================================
``action_type``    ``Discrete(len(action_types))``               all
``point``          ``Box(0, [W-1, H-1], (2,), int32)``           click, scroll, move
``has_point``      ``Discrete(2)``                               click, scroll, move (0 = no point)
``offset``         ``Box(-[W-1, H-1], [W-1, H-1], (2,), int32)`` move
``has_offset``     ``Discrete(2)``                               move
``scroll``         ``Box(-max_scroll, max_scroll, (2,), int32)`` scroll (pixels, + = right/down)
``has_scroll``     ``Discrete(2)``                               scroll
``button``         ``Discrete(5)``                               click
``pattern``        ``Box(0, max_delay_ms, (max_pattern,))``      click, drag (delays in ms)
``pattern_len``    ``Discrete(max_pattern + 1)``                 click, drag (0 = no pattern)
``keys``           ``MultiDiscrete([len(KEYS)] * max_keys)``     press, keydown, keyup
``keys_len``       ``Discrete(max_keys)``                        press, keydown, keyup (length - 1)
``hold_keys``      ``MultiDiscrete([len(KEYS)] * max_hold_keys)`` click, scroll, drag
``hold_keys_len``  ``Discrete(max_hold_keys + 1)``               click, scroll, drag (0 = none)
``text``           ``Text(max_text_length, charset)``            type, response, custom (action name)
``enter_after``    ``Discrete(2)``                               type
``time``           ``Box(0, max_wait_ms, (1,), int32)``          wait (ms)
``path``           ``Box(0, [W-1, H-1], (max_drag_points, 2))``  drag
``path_len``       ``Discrete(max_drag_points - 1)``             drag (length - 2)
``args``           ``Text(max_args_length, charset)``            custom (a JSON object, or empty)
=================  ============================================  ======================================

Slots past a ``*_len`` are ignored by :func:`decode` and written as zeros by :func:`encode`.
``reasoning`` and ``logs`` are agent annotations and are not part of the space.

Modules: :mod:`~hud_gym.spaces.text` (the text space and its charset),
:mod:`~hud_gym.spaces.layout` (the limits and the two ``Dict`` spaces),
:mod:`~hud_gym.spaces.codec` (:func:`encode` / :func:`decode`), :mod:`~hud_gym.spaces.encoding` (the fields),
:mod:`~hud_gym.spaces.shared_memory` (text observations through ``AsyncVectorEnv(shared_memory=True)``,
registered on import).

Example:
    >>> from hud_gym.actions import ClickAction
    >>> config = ActionSpaceConfig(width=1280, height=720)
    >>> encoded = encode(ClickAction(point=(10, 20)), config)
    >>> decode(encoded, config) == ClickAction(point=(10, 20))
    True
"""

from hud_gym.spaces import shared_memory as _shared_memory  # noqa: F401  (registers the UnicodeText reader)
from hud_gym.spaces.codec import decode, encode, is_encoded_action
from hud_gym.spaces.layout import BUTTONS, ActionSpaceConfig, make_action_space, make_observation_space
from hud_gym.spaces.text import REPLACEMENT_CHAR, TEXT_CHARSET, UnicodeText, sanitize_text, text_space

__all__ = [
    "BUTTONS",
    "REPLACEMENT_CHAR",
    "TEXT_CHARSET",
    "ActionSpaceConfig",
    "UnicodeText",
    "decode",
    "encode",
    "is_encoded_action",
    "make_action_space",
    "make_observation_space",
    "sanitize_text",
    "text_space",
]
