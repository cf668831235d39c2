"""OSWorld's files without the internet: a content cache and an optional offline mirror.

A task's file (a ``download`` step's URL, a ``cloud_file`` getter's) is looked up, in order, in

1. the cache, ``$HUD_GYM_HOME/cache/osworld/<sha256 of the URL>`` (:func:`cache_root`);
2. the mirror, ``$HUD_GYM_OSWORLD_FILES`` (:data:`MIRROR_ENV_VAR`), laid out like OSWorld's file
   cache dataset (``<domain>/<task id>/<file name>``), or by URL (``by-url/<sha256 of the URL>``);
   what is found there is copied into the cache;
3. the URL itself, downloaded into the cache with the episode's network rules
   (:mod:`hud_gym.controllers.ubuntu.download`: none without the network, never the host's loopback).

A file found nowhere is an :class:`OSWorldFileMissing` naming the URL (a ``setup_error`` at reset).
The mirror's names come from the task (domain, id, file name): each is one path component, checked
(:func:`_component`), and the mirror and the cache are read beneath their directory, never
following a link (:class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import platformdirs

from hud_gym.controllers.ubuntu.download import MAX_DOWNLOAD_BYTES, download
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.errors import HudGymError

__all__ = ["MIRROR_ENV_VAR", "OSWorldFileMissing", "cache_root", "cached_file", "episode_file", "mirror_paths"]

MIRROR_ENV_VAR = "HUD_GYM_OSWORLD_FILES"
"""The environment variable naming the offline mirror directory."""
_MAX_COMPONENT = 255


class OSWorldFileMissing(HudGymError, FileNotFoundError):
    """A task's file is in neither the cache nor the mirror, and could not be downloaded."""


def cache_root() -> Path:
    """``$HUD_GYM_HOME/cache/osworld`` (created), else the per-user data directory's."""
    configured = os.environ.get("HUD_GYM_HOME")
    base = Path(configured).expanduser().absolute() if configured else Path(platformdirs.user_data_dir("hud-gym"))
    root = base / "cache" / "osworld"
    root.mkdir(parents=True, exist_ok=True)
    return root


def url_key(url: str) -> str:
    """The cache's name of ``url``: its SHA-256 (hex)."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def _component(value: Any) -> str | None:
    """``value`` when it is one safe path component, else ``None``."""
    if not isinstance(value, str) or not 0 < len(value) <= _MAX_COMPONENT:
        return None
    if "/" in value or "\0" in value or value in (".", ".."):
        return None
    return value


def mirror_paths(url: str, domain: str | None, task_id: str | None, name: str | None) -> list[str]:
    """The mirror-relative paths where ``url``'s file may be (see the module docstring)."""
    paths = []
    parts = [_component(domain), _component(task_id), _component(name)]
    if all(parts):
        paths.append("/".join(p for p in parts if p))
    paths.append(f"by-url/{url_key(url)}")
    return paths


def _from_mirror(url: str, cache: HomeFiles, target: Path, names: tuple[str | None, ...]) -> bool:
    mirror = os.environ.get(MIRROR_ENV_VAR)
    if not mirror:
        return False
    root = Path(mirror)
    files = HomeFiles(root)
    for relative in mirror_paths(url, *names):
        try:
            if files.kind(root / relative) != "file":
                continue
            data = files.read_bytes(root / relative, MAX_DOWNLOAD_BYTES)
        except OSError:
            continue
        cache.write_bytes(target, data)
        return True
    return False


def cached_file(
    url: str,
    *,
    domain: str | None = None,
    task_id: str | None = None,
    name: str | None = None,
    network: bool = False,
    own_network: int | None = None,
    timeout: float = 300.0,
) -> Path:
    """The cache's copy of ``url``'s file, fetched into the cache first when it is not there
    (mirror, else download: see the module docstring).

    Raises:
        OSWorldFileMissing: nowhere to be had (the message names the URL and why).
    """
    root = cache_root()
    cache = HomeFiles(root)
    target = root / url_key(url)
    if cache.kind(target) == "file":
        return target
    if _from_mirror(url, cache, target, (domain, task_id, name)):
        return target
    try:
        download(url, cache, target, network=network, own_network=own_network, timeout=timeout)
    except (OSError, ValueError) as exc:
        where = os.environ.get(MIRROR_ENV_VAR) or f"${MIRROR_ENV_VAR} (not set)"
        raise OSWorldFileMissing(
            f"OSWorld file {url[:500]!r} is not in the cache ({root}) nor the mirror ({where}), "
            f"and was not downloaded: {str(exc)[:500]}"
        ) from None
    return target


def episode_file(desktop: Any, url: str, *, domain: str | None, task_id: str | None, name: str) -> Path:
    """:func:`cached_file` under the episode's network rules (``desktop``: the desktop API of its
    controller, ``ctx.controller.desktop``): its own network when the episode has one
    (``state.episode_network``), else a network namespace of its own with nothing in it
    (``own_network``), so a download never runs with the host's network.

    Raises:
        OSWorldFileMissing: the file is nowhere to be had.
    """
    network = bool(desktop.state.episode_network)
    own = desktop.own_network() if not network else None
    try:
        return cached_file(url, domain=domain, task_id=task_id, name=name, network=network, own_network=own)
    finally:
        if own is not None:
            os.close(own)
