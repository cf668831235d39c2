"""MkDocs hook: give mkdocstrings the package as the wheel lays it out.

``controllers/`` and ``wrappers/`` are the subpackages ``hud_gym.controllers`` and
``hud_gym.wrappers`` (mapped in ``setup.py``), which griffe's static loader cannot see through the
editable install. As ``scripts/check.sh`` does for mypy, this lays out a tree of symlinks in which
they sit inside ``hud_gym/`` (``build/docs-api/hud_gym``, git-ignored) before mkdocstrings reads its
handler's ``paths`` (``mkdocs.yml`` points them there). The tree is brought up to date in place, so
two builds at once (``make check`` and the docs test) never see it half made. Nothing is fetched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

MAPPED = {"controllers": "controllers", "wrappers": "wrappers"}
"""Subpackages of ``hud_gym`` that live in top-level folders: name inside ``hud_gym`` -> folder."""


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink():
        link.unlink(missing_ok=True)
    try:
        link.symlink_to(target)
    except FileExistsError:  # another build made it meanwhile
        pass


def api_tree(root: Path) -> Path:
    """Lay out ``root/build/docs-api/hud_gym`` (symlinks into the checkout at ``root``); return it."""
    tree = root / "build" / "docs-api" / "hud_gym"
    tree.mkdir(parents=True, exist_ok=True)
    wanted = {e.name: e for e in (root / "hud_gym").iterdir() if e.name != "__pycache__"}
    wanted.update({name: root / folder for name, folder in MAPPED.items()})
    for stale in tree.iterdir():
        if stale.name not in wanted and stale.is_symlink():
            stale.unlink(missing_ok=True)
    for name, target in wanted.items():
        _link(tree / name, target)
    return tree


@event_priority(100)  # before mkdocstrings reads its handler's paths
def on_config(config: Any) -> Any:
    """Bring the symlink tree up to date next to ``mkdocs.yml``."""
    api_tree(Path(config.config_file_path).resolve().parent)
    return config
