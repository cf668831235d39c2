"""A task's names are checked as names before they touch a host path (issue 23, the audit of
host-side functions): MiniWoB++'s ``miniwob_start`` looked for ``<package>/miniwob/{name}.html``
on the host with the task's ``name`` as given, so ``../`` walked the host's files (whether a file
exists there showed in the reset's error)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

pytest.importorskip("miniwob")

from hud_gym.evaluation import FunctionContext
from hud_gym.evaluation.registry import REGISTRY
from hud_gym.suites.miniwob.tasks import miniwob_html_root
from hud_gym.task import FunctionConfig

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("kind", ["existing", "missing"])
def test_miniwob_start_takes_a_task_name_not_a_path(tmp_path: Path, kind: str) -> None:
    probe = tmp_path / "probe.html"
    if kind == "existing":
        probe.write_text("<html></html>")
    name = os.path.relpath(probe.with_suffix(""), miniwob_html_root() / "miniwob")
    assert name.startswith("../")
    call = REGISTRY.resolve("setup", "browser", FunctionConfig(function="miniwob_start", args=[name]))
    # No page is touched (the context has no controller): the name is refused as a name, whether
    # the file it points to exists or not.
    with pytest.raises(ValueError, match="no MiniWoB\\+\\+ task"):
        asyncio.run(call.run(FunctionContext(gym="browser")))
