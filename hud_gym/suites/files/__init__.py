"""``files``: task families of files and the terminal on ``hud/Ubuntu-v0`` (issue 26).

Six families, each generating unlimited variants from a seed (``load_taskset("files",
split="test", n=200)``, or one family by name), with three difficulty levels that add steps:

- ``files-organise`` (:mod:`.organise`): sort ``~/inbox`` into folders by extension or year;
- ``files-rename`` (:mod:`.rename`): rename photos by a pattern;
- ``files-find`` (:mod:`.find`): find the notes that mention a code;
- ``files-archive`` (:mod:`.archive`): pack and unpack tar and zip archives;
- ``files-permissions`` (:mod:`.permissions`): set permission bits;
- ``files-pipeline`` (:mod:`.pipeline`): count, sort and deduplicate a log with a pipeline.

Each task lays its files down in the episode's home and opens a terminal; its evaluators read
the home's files from the host through the safe helpers (:mod:`hud_gym.controllers.ubuntu.fs_checks`).
Each family's oracle types shell commands into the terminal (CLA typing only).

Example:
    >>> [f.name for f in FAMILIES][:2]
    ['files-organise', 'files-rename']
"""

from __future__ import annotations

from hud_gym.core.family import Family
from hud_gym.core.suite import Suite

__all__ = ["FAMILIES", "SUITE"]

SUITE = Suite(
    name="files",
    gym="ubuntu",
    function_modules=("hud_gym.controllers.ubuntu.fs_checks",),
    description="task families of files and the terminal (organise, rename, find, archive, permissions, pipelines)",
)
"""The ``files`` suite (its tasks are made by its families)."""

_DESCRIPTIONS = {
    "organise": "sort ~/inbox into folders by extension or modification year",
    "rename": "rename photos by a pattern (extension, prefix, renumbering)",
    "find": "find the notes that mention a code (path list, or copies)",
    "archive": "pack and unpack tar.gz and zip archives",
    "permissions": "set permission bits of scripts, private files and a shared folder",
    "pipeline": "count, sort and deduplicate a web log with a shell pipeline",
}

ENV_OPTIONS = {"max_steps": 1000, "step_timeout": 120.0}
"""The env the families' check plays them in (an oracle's polling waits count as steps)."""

FAMILIES: tuple[Family, ...] = tuple(
    Family(
        name=f"files-{short}",
        gym="ubuntu",
        kind="files",
        generate=f"{__name__}.{short}:generate",
        oracle=f"{__name__}.{short}:oracle",
        description=description,
        attacks="hud_gym.suites.files.attacks:DESKTOP_FAMILY_ATTACKS",
        env_options=ENV_OPTIONS,
    )
    for short, description in _DESCRIPTIONS.items()
)
"""The suite's families (registered by :mod:`hud_gym.suites`)."""
