"""The density benchmark's measurement (``benchmarks/desktop_density.py``, issue 25 point 7) on two
real desktops with LibreOffice Calc open on a task file: it counts, per env, only that env's
processes (its Xvfb, window manager and episode sandbox: found by pid, never by name), with a PSS
for each env, and returns its figures in the structure the report reads. No timing is asserted.

And the home profile's LibreOffice extension registry: Calc's first start in a fresh episode
takes it as it is, instead of building it again (what made each start ~1 s of CPU longer).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import psutil
import pytest

from benchmarks.density_probe import env_processes
from benchmarks.desktop_density import env_memory, measure_open, open_envs, summary, task_for
from hud_gym.controllers.sandbox.runner import pid_namespace

pytestmark = pytest.mark.timeout(900)

APP = "libreoffice-calc"


def _environ(pid: int) -> dict[str, str]:
    try:
        return psutil.Process(pid).environ()
    except psutil.Error:
        return {}


def _check_belongs(env: Any, pids: dict[int, str]) -> None:
    """Every counted process descends from one of the env's sandbox launchers, lives in one of the
    env's pid namespaces (or is a launcher), and shows the env's display; Xvfb serves it and Calc
    has its task file open."""
    controller = env.unwrapped.controller
    found = env_processes(env)
    roots = set(found.roots.values())
    namespaces = {pid_namespace(pid) for pid in found.members if pid not in roots}
    host = pid_namespace(1)
    for pid, sandbox in pids.items():
        assert sandbox in found.roots, (pid, sandbox)
        if pid in roots:
            continue
        ancestors = {p.pid for p in psutil.Process(pid).parents()}
        assert ancestors & roots, f"{pid} does not descend from the env's launchers {roots}"
        assert pid_namespace(pid) in namespaces and pid_namespace(pid) != host
        display = _environ(pid).get("DISPLAY")
        assert display in (None, controller.state.display), (pid, display, controller.state.display)
    names = {pid: psutil.Process(pid).name() for pid in pids}
    xvfb = [pid for pid, name in names.items() if name == "Xvfb"]
    assert xvfb and all(controller.state.display in psutil.Process(pid).cmdline() for pid in xvfb)
    calc = [pid for pid, name in names.items() if name == "soffice.bin"]
    assert calc, f"no soffice.bin among {names}"
    opened = {Path(f.path).name for pid in calc for f in psutil.Process(pid).open_files()}
    cmdlines = " ".join(" ".join(psutil.Process(pid).cmdline()) for pid in calc)
    assert any(name.startswith("task-") for name in opened) or str(controller.state.home) in cmdlines


def test_the_density_measure_counts_each_envs_own_processes() -> None:
    with open_envs(2) as envs:
        result = measure_open(envs, APP, resets=1, steps=2, settle=1.0)
        assert len(result["memory"]) == 2 and all(m["pss_kib"] > 0 for m in result["memory"])
        assert all(m["by_program"].get("soffice.bin", 0) > 0 for m in result["memory"])
        assert all(m["by_program"].get("Xvfb", 0) > 0 for m in result["memory"])
        first, second = (set(m["pids"]) for m in result["memory"])
        assert first and second and not first & second
        assert len(result["step_ms"]) == len(result["step_cpu_ms"]) == 4
        assert len(result["reset_ms"]) == len(result["reset_cpu_ms"]) == 2
        assert all(v > 0 for v in [*result["step_ms"], *result["reset_ms"], *result["first_reset_ms"]])
        assert all(v >= 0 for v in [*result["step_cpu_ms"], *result["reset_cpu_ms"]])
        figures = summary(result)
        assert all(math.isfinite(v) and v > 0 for k, v in figures.items() if k != "step_cpu_ms")
        # After the resets onto fresh files: each env's processes, counted again, are its own.
        now = [env_memory(env) for env in envs]
        assert not set(now[0]["pids"]) & set(now[1]["pids"])
        for env, memory in zip(envs, now, strict=True):
            assert memory["pss_kib"] > 0
            _check_belongs(env, memory["pids"])


LAY_DOWN_S = 2.0
"""How long after its other files the profile's registry files may be written in the same lay-down
(0.25 s on a quiet machine; over 1 s seen at load 15). A rebuild by LibreOffice comes later: after
its process started and read its install, seconds after the lay-down on any machine."""


def test_calc_takes_the_laid_down_extension_registry_as_it_is() -> None:
    with open_envs(1) as (env,):
        env.reset(options={"task": task_for(APP, 0, 0)})
        home = Path(env.unwrapped.controller.state.home)
        user = home / ".config/libreoffice/4/user"
        # oosplash starts soffice.bin (again, when a first start rebuilt the registry)
        calc = [p for p in env_processes(env).processes() if p.name() in ("oosplash", "soffice.bin")]
        assert calc
        # When the profile was laid down: its files that LibreOffice never writes (a process's
        # create_time is no reference: psutil derives it from the boot time in whole seconds).
        others = [".config/vlc/vlcrc", ".config/GIMP/2.10/gimprc", ".config/mimeapps.list", ".config/user-dirs.dirs"]
        laid_at = max((home / name).stat().st_mtime for name in others)
        laid_down = [p for p in user.rglob("*") if p.is_file() and p.name != "registrymodifications.xcu"]
        rewritten = sorted(str(p.relative_to(user)) for p in laid_down if p.stat().st_mtime > laid_at + LAY_DOWN_S)
        assert {p.name for p in laid_down} >= {"buildid", "backenddb.xml", "lastsynchronized"}
        # LibreOffice stamps lastsynchronized at every start; the registry it does not build again.
        assert [r for r in rewritten if not r.endswith("/lastsynchronized")] == [], rewritten
