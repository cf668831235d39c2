"""Every error the controllers define derives from :class:`hud_gym.errors.HudGymError` and keeps
the built-in base users catch (``RuntimeError``, ``ValueError``, ``FileNotFoundError``)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import hud_gym.controllers
from hud_gym.errors import HudGymError

pytestmark = pytest.mark.timeout(60)

BUILT_IN_BASES = {
    "ControllerError": RuntimeError,
    "SandboxError": RuntimeError,
    "RemoteError": RuntimeError,
    "ChromiumNotFoundError": FileNotFoundError,
    "DesktopNotAvailableError": FileNotFoundError,
    "NavigationRefused": ValueError,
    "DownloadRefused": PermissionError,
    "ProtocolError": ValueError,
}


def _controller_errors() -> dict[str, type[BaseException]]:
    errors = {}
    for info in pkgutil.walk_packages(hud_gym.controllers.__path__, "hud_gym.controllers."):
        if ".apps." in info.name:  # the desktop's Tk apps run as scripts, not imported
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                errors[name] = value
    return errors


def test_every_controller_error_has_the_root_and_its_built_in_base() -> None:
    errors = _controller_errors()
    assert set(errors) == set(BUILT_IN_BASES), "a new error class: add it here with the built-in base it keeps"
    for name, cls in errors.items():
        assert issubclass(cls, HudGymError), name
        assert issubclass(cls, BUILT_IN_BASES[name]), name


def test_an_os_error_base_still_builds_as_one() -> None:
    from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError

    error = DesktopNotAvailableError("Xvfb is not installed")
    assert str(error) == "Xvfb is not installed" and isinstance(error, OSError)
    with pytest.raises(HudGymError):
        raise error
