"""The key-name table and its normaliser (hud_gym.keys)."""

from __future__ import annotations

import pytest

from hud_gym.keys import KEY_ALIASES, KEY_INDEX, KEYS, MODIFIER_KEYS, UnknownKeyError, normalize_key, normalize_keys


def test_key_table_is_consistent():
    assert len(KEYS) == len(set(KEYS))
    assert all(KEYS[i] == key and KEY_INDEX[key] == i for i, key in enumerate(KEYS))
    # every alias maps to a canonical name, and every modifier is a key
    assert all(target in KEY_INDEX for target in KEY_ALIASES.values())
    assert set(KEYS) >= MODIFIER_KEYS
    # pyautogui's table is lower-case only
    assert not any(k.isupper() for k in KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_canonical_names_pass_through(key):
    assert normalize_key(key) == key


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("Enter", "enter"),
        ("Return", "enter"),
        ("RETURN", "enter"),
        ("Control", "ctrl"),
        ("cmd", "command"),
        ("Cmd", "command"),
        ("PageDown", "pagedown"),
        ("Page Down", "pagedown"),
        ("page-down", "pagedown"),
        ("ArrowLeft", "left"),
        ("ArrowUp", "up"),
        ("A", "a"),
        ("Z", "z"),
        ("Escape", "escape"),  # pyautogui has both "esc" and "escape"
        ("Esc", "esc"),
        ("Tab", "tab"),
        ("Backspace", "backspace"),
        ("Meta", "win"),
        ("F5", "f5"),
        ("minus", "-"),
        ("Numpad7", "num7"),
        ("AudioVolumeUp", "volumeup"),
    ],
)
def test_aliases(alias, canonical):
    assert normalize_key(alias) == canonical


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("ctrl+shift+t", ["ctrl", "shift", "t"]),
        ("Control+Shift+T", ["ctrl", "shift", "t"]),
        ("ctrl+c", ["ctrl", "c"]),
        ("enter", ["enter"]),
        ("+", ["+"]),
        (["Control", "Shift", "T"], ["ctrl", "shift", "t"]),
        (("cmd", "A"), ["command", "a"]),
        ([], []),
    ],
)
def test_normalize_keys_splits_and_normalises(keys, expected):
    assert normalize_keys(keys) == expected


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [("entr", "enter"), ("ctrll", "ctrl"), ("pagdown", "pagedown"), ("backspce", "backspace")],
)
def test_unknown_key_names_key_and_close_matches(key, suggestion):
    with pytest.raises(UnknownKeyError) as info:
        normalize_key(key)
    message = str(info.value)
    assert repr(key) in message
    assert suggestion in info.value.suggestions
    assert repr(suggestion) in message
    assert "did you mean" in message


def test_unknown_key_without_close_match():
    with pytest.raises(UnknownKeyError) as info:
        normalize_key("Fooo")
    assert "'Fooo'" in str(info.value)
    assert info.value.key == "Fooo"
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("key", ["", "é", "\x00", "Ä", None, 5])
def test_invalid_single_characters_and_non_strings(key):
    with pytest.raises(UnknownKeyError) as info:
        normalize_key(key)  # type: ignore[arg-type]
    assert repr(key) in str(info.value)


def test_normalize_keys_reports_the_bad_key_in_a_combo():
    with pytest.raises(UnknownKeyError) as info:
        normalize_keys("ctrl+entr")
    assert "'entr'" in str(info.value)
    assert "enter" in str(info.value)
