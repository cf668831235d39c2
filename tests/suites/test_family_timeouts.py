"""A family's env gives its reset the time its setup may wait: a setup that waits up to T seconds
for an app's window (a cold LibreOffice on a loaded box) in an env whose reset gives up sooner
would end the episode as an env error before the setup's own bound."""

from __future__ import annotations

import pytest

import hud_gym  # noqa: F401  (registers the families)
from hud_gym.core.family import families, generate_task
from hud_gym.task import FunctionConfig

pytestmark = pytest.mark.timeout(120)

_DEFAULT_RESET_TIMEOUT = 60.0


@pytest.mark.parametrize("name", [f.name for f in families() if f.gym == "ubuntu"])
def test_the_families_reset_timeout_exceeds_every_wait_of_its_setup(name: str) -> None:
    family = next(f for f in families() if f.name == name)
    reset_timeout = float(family.env_options.get("reset_timeout", _DEFAULT_RESET_TIMEOUT))
    for difficulty in family.difficulties:
        task = generate_task(family, 5, difficulty)
        setup = task.setup if isinstance(task.setup, list) else [task.setup]
        waits = [
            float(call.kwargs.get("timeout", 0)) for call in setup if isinstance(call, FunctionConfig) and call.kwargs
        ]
        assert all(wait < reset_timeout for wait in waits), (name, waits, reset_timeout)
