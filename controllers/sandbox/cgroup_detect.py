"""Where this process can make cgroups (:mod:`.cgroups`), tried for real, and the groups a dead
hud-gym process left behind.

cgroup v2: a writable folder whose children get the ``memory``, ``pids`` and ``cpu`` controllers
(``HUD_GYM_CGROUP``, this process's own cgroup when its subtree has them, or its parent, as a
``systemd`` delegation gives). cgroup v1: this process's own group in each of the ``memory``,
``pids``, ``cpu`` and ``cpuacct`` hierarchies, when writable (root).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from hud_gym.controllers.sandbox.cgroups import CGROUP_ENV, CONTROLLERS, PREFIX, V1_CONTROLLERS, Cgroup, CgroupSupport

__all__ = ["detect", "sweep"]


def _mounts() -> list[tuple[str, str, set[str]]]:
    """``(mount point, fstype, super options)`` of the cgroup file systems."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) > 4 and len(tail) > 2 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup per v1 controller, and ``""`` -> its v2 cgroup."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup", encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split(":", 2)
            if len(parts) == 3:
                for name in parts[1].split(",") if parts[1] else [""]:
                    paths[name] = parts[2]
    return paths


def _v2_parent(mount: Path, own: str, override: str | None) -> Path | None:
    """A writable v2 folder whose children get every controller of :data:`CONTROLLERS`."""
    candidates = [Path(override)] if override else [mount / own.lstrip("/"), (mount / own.lstrip("/")).parent]
    for folder in candidates:
        try:
            available = (folder / "cgroup.controllers").read_text().split()
            enabled = (folder / "cgroup.subtree_control").read_text().split()
        except OSError:
            continue
        if not set(CONTROLLERS) <= set(available) or not os.access(folder, os.W_OK):
            continue
        missing = [c for c in CONTROLLERS if c not in enabled]
        if missing:
            try:  # possible in the root cgroup and in a delegated one without processes of its own
                (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))
            except OSError:
                continue
        return folder
    return None


def _candidates() -> list[CgroupSupport]:
    mounts, own = _mounts(), _own_paths()
    override = os.environ.get(CGROUP_ENV) or None
    found: list[CgroupSupport] = []
    for point, fstype, _ in mounts:
        if fstype == "cgroup2":
            parent = _v2_parent(Path(point), own.get("", "/"), override)
            if parent is not None:
                found.append(CgroupSupport(2, {c: parent for c in CONTROLLERS}))
    v1 = {}
    for point, fstype, options in mounts:
        for name in V1_CONTROLLERS:
            if fstype == "cgroup" and name in options and name not in v1:
                folder = Path(point) / own.get(name, "/").lstrip("/")
                if os.access(folder, os.W_OK):
                    v1[name] = folder
    if not override and set(v1) == set(V1_CONTROLLERS):
        found.append(CgroupSupport(1, v1))
    return found


def detect() -> tuple[CgroupSupport | None, str]:
    """The cgroups this process can confine episodes with, or ``None`` and why not.

    Each candidate is tried for real: a probe group is made with limits and removed."""
    if os.environ.get(CGROUP_ENV, "").lower() in ("off", "0", "no", "false"):
        return None, f"{CGROUP_ENV}=off"
    reasons = []
    for support in _candidates():
        try:
            probe = Cgroup.create(support, memory=64 << 20, pids=16, cpu=0.5)
            probe.remove()
            return support, support.describe()
        except OSError as exc:
            reasons.append(f"cgroup v{support.version}: {exc}")
    if not reasons:
        reasons.append("no writable cgroup with the memory, pids and cpu controllers (not root, no delegation)")
    return None, "; ".join(reasons)


def sweep(support: CgroupSupport) -> int:
    """Remove the groups left by hud-gym processes that are gone (killed before they could); their count."""
    removed = 0
    for parent in dict.fromkeys(support.parents.values()):
        with contextlib.suppress(OSError):
            for folder in parent.iterdir():
                owner = folder.name[len(PREFIX) :].split("-", 1)[0]
                if not folder.name.startswith(PREFIX) or not owner.isdigit() or Path(f"/proc/{owner}").exists():
                    continue
                group = Cgroup(support, {c: p / folder.name for c, p in support.parents.items()})
                removed += group.remove(timeout=1.0)
    return removed
