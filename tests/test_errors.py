"""One root for hud-gym's errors (``HudGymError``) and warnings (``HudGymWarning``), with the
built-in bases users already catch kept."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
from pathlib import Path

import pytest

import hud_gym
from hud_gym.errors import HudGymError, HudGymWarning

LIBRARY = Path(hud_gym.__file__).parent

OVERLAY_ONLY = {"hud_gym.protocols.openenv": "openenv"}
"""Packages whose SDK lives in an overlay venv only (``make install``: ``.venv-openenv``), with it."""


def _library_modules() -> list[str]:
    """Every module of ``hud_gym/`` itself (``controllers/`` and ``wrappers/`` are other folders)."""
    names = []
    for info in pkgutil.walk_packages([str(LIBRARY)], prefix="hud_gym."):
        if info.name.endswith("__main__"):
            continue
        overlay = [sdk for package, sdk in OVERLAY_ONLY.items() if info.name.startswith(package + ".")]
        if overlay and importlib.util.find_spec(overlay[0]) is None:
            continue  # checked when tests/protocols/test_openenv.py runs this venv's overlay
        module = importlib.import_module(info.name)
        if Path(module.__file__ or "").resolve().is_relative_to(LIBRARY.resolve()):
            names.append(info.name)
    return names


def test_every_error_and_warning_class_has_the_root() -> None:
    checked = []
    for name in _library_modules():
        for _, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass):
            if cls.__module__ != name or not issubclass(cls, BaseException):
                continue
            root = HudGymWarning if issubclass(cls, Warning) else HudGymError
            assert issubclass(cls, root), f"{name}.{cls.__qualname__} does not derive from {root.__name__}"
            checked.append(cls)
    assert len(checked) >= 18, checked


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("ActionError", ValueError),
        ("TaskFileError", ValueError),
        ("UnknownKeyError", ValueError),
        ("UnknownFunctionError", ValueError),
        ("FunctionArgumentError", ValueError),
        ("SetupError", RuntimeError),
    ],
)
def test_the_builtin_bases_users_catch_are_kept(name: str, builtin: type[Exception]) -> None:
    cls = getattr(hud_gym, name, None) or getattr(importlib.import_module("hud_gym.evaluation"), name)
    assert issubclass(cls, HudGymError) and issubclass(cls, builtin)


def test_store_and_job_errors_keep_their_bases() -> None:
    from hud_gym.evaluation.patterns import PatternError
    from hud_gym.jobs import JobNotFoundError, StoreError

    assert issubclass(JobNotFoundError, KeyError) and issubclass(StoreError, RuntimeError)
    assert issubclass(PatternError, ValueError)
    assert all(issubclass(cls, HudGymError) for cls in (JobNotFoundError, StoreError, PatternError))


def test_one_except_catches_what_hud_gym_raises() -> None:
    with pytest.raises(hud_gym.HudGymError):
        hud_gym.parse_action({"type": "teleport"})
    with pytest.raises(hud_gym.HudGymError):
        hud_gym.normalize_key("no-such-key")
