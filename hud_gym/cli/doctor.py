"""``hud-gym doctor``: check that this machine can run the gyms, and say what to install.

:func:`run_checks` looks at the real machine (no network): Python and hud-gym versions, the
Chromium the browser gym would use (found as the controller finds it, its version, and a quick
headless launch), Xvfb/openbox/bubblewrap for the desktop gym, how the per-episode resource
limits are enforced (cgroup v2 or v1, else rlimits), the python-xlib version, the optional extras,
``HUD_GYM_HOME`` and ffmpeg. Each :class:`Check` says whether it passed, what was found, and the
exact command that fixes it.

Example:
    >>> checks = run_checks(launch_browser=False)  # doctest: +SKIP
    >>> print(render_checks(checks))  # doctest: +SKIP
    >>> exit_code(checks)  # doctest: +SKIP
    0
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from hud_gym.jobs.paths import HOME_ENV_VAR, resolve_home

__all__ = ["HOME_ENV", "MIN_PYTHON", "MIN_XLIB", "Check", "exit_code", "hud_gym_home", "render_checks", "run_checks"]

MIN_PYTHON = (3, 10)
"""The oldest Python hud-gym supports (``requires-python`` in pyproject)."""

MIN_XLIB = (0, 33)
"""The oldest python-xlib the desktop gym runs on (it needs ``Xlib.ext.damage``)."""

HOME_ENV = HOME_ENV_VAR
"""Environment variable naming hud-gym's data directory (jobs, recordings)."""

_VERSION_TIMEOUT = 10.0
_LAUNCH_MARKER = "hud-gym-doctor-ok"


class Check(BaseModel):
    """The result of one check.

    Attributes:
        name: what was checked (``"chromium"``, ``"xvfb"``...).
        ok: it passed.
        detail: what was found (a path and version, or what is wrong).
        fix: the command that fixes a failure (None when ok).
        required: a failure stops a gym from working (else it is an optional feature).
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    ok: bool
    detail: str
    fix: str | None = None
    required: bool = True


def hud_gym_home() -> Path:
    """hud-gym's data directory, as the jobs store resolves it: ``$HUD_GYM_HOME``, else the
    per-user data dir."""
    return resolve_home()


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _run_version(argv: list[str]) -> str:
    """The first line ``argv`` prints (stdout, else stderr)."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=_VERSION_TIMEOUT, check=False)
    return _first_line(done.stdout) or _first_line(done.stderr)


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


# ----------------------------------------------------------------------------- checks


def check_python() -> Check:
    """Python is at least :data:`MIN_PYTHON`."""
    version = ".".join(str(v) for v in sys.version_info[:3])
    ok = sys.version_info[:2] >= MIN_PYTHON
    return Check(
        name="python",
        ok=ok,
        detail=f"Python {version} at {sys.executable}",
        fix=None if ok else f"install Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer and reinstall hud-gym in it",
    )


def check_hud_gym() -> Check:
    """hud-gym imports, and the installed distribution's version matches the package's."""
    try:
        import hud_gym
    except Exception as exc:  # noqa: BLE001  (any import failure is the finding)
        return Check(
            name="hud-gym",
            ok=False,
            detail=f"import hud_gym failed: {type(exc).__name__}: {exc}",
            fix="pip install -e . (from the hud-gym checkout)",
        )
    installed = _distribution_version("hud-gym")
    package = getattr(hud_gym, "__version__", "unknown")
    where = Path(hud_gym.__file__).parent
    if installed is None:
        return Check(
            name="hud-gym",
            ok=False,
            detail=f"hud_gym {package} imports from {where} but is not installed",
            fix="pip install -e . (from the hud-gym checkout)",
        )
    ok = installed == package
    detail = f"hud-gym {package} at {where}" + ("" if ok else f"; the installed metadata says {installed}")
    return Check(
        name="hud-gym", ok=ok, detail=detail, fix=None if ok else "pip install -e . (reinstall to refresh the metadata)"
    )


def _chromium_fix() -> str:
    from hud_gym.controllers.browser.chromium import CHROMIUM_ENV

    if os.environ.get(CHROMIUM_ENV):
        return f"unset {CHROMIUM_ENV} (or point it at a Chromium executable), or apt-get install chromium"
    return "apt-get install chromium"


def check_chromium() -> tuple[Check, Path | None]:
    """The Chromium the browser gym would launch (the controller's finder) and its version."""
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium

    try:
        path = find_chromium()
    except ChromiumNotFoundError as exc:
        return Check(name="chromium", ok=False, detail=str(exc), fix=_chromium_fix()), None
    try:
        version = _run_version([str(path), "--version"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(name="chromium", ok=False, detail=f"{path} does not run: {exc}", fix=_chromium_fix()), None
    if not version:
        return Check(name="chromium", ok=False, detail=f"{path} --version printed nothing", fix=_chromium_fix()), None
    return Check(name="chromium", ok=True, detail=f"{version} at {path}"), path


def check_chromium_launch(path: Path, timeout: float = 30.0) -> Check:
    """Chromium starts headless and renders a page (``--dump-dom`` of a data URL)."""
    from hud_gym.controllers.browser.launch_folder import LaunchFolder
    from hud_gym.controllers.process_utils import kill_process_tree

    page = f"data:text/html,<p>{_LAUNCH_MARKER}</p>"
    folder = LaunchFolder()  # its home, temp files and crash dumps: not the user's
    with tempfile.TemporaryDirectory(prefix="hud-gym-doctor-") as profile:
        argv = [
            str(path),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page,
        ]
        process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            env=folder.env(os.environ),
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stdout, stderr = "", f"no page within {timeout:g} s"
        finally:
            # The browser's helpers (zygote, utility processes) share its new session's group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            kill_process_tree(folder.pids())  # Crashpad's handlers: sessions of their own
            folder.remove()
    ok = _LAUNCH_MARKER in stdout
    detail = "renders a page headless" if ok else f"headless launch failed: {_first_line(stderr) or 'no output'}"
    return Check(
        name="chromium-launch",
        ok=ok,
        detail=detail,
        fix=None if ok else "apt-get install chromium (a complete install, with its libraries and fonts)",
    )


def _program(name: str, executable: str, package: str, why: str, required: bool = True) -> Check:
    found = shutil.which(executable)
    if found:
        return Check(name=name, ok=True, detail=f"{executable} at {found}", required=required)
    return Check(
        name=name,
        ok=False,
        detail=f"{executable} not found on PATH ({why})",
        fix=f"apt-get install {package}",
        required=required,
    )


def check_xlib() -> Check:
    """python-xlib is at least :data:`MIN_XLIB` and has ``Xlib.ext.damage`` (the old python3-xlib,
    a pyautogui dependency, can overwrite it)."""
    fix = f"pip install --force-reinstall --no-deps 'python-xlib>={MIN_XLIB[0]}.{MIN_XLIB[1]}'"
    try:
        import Xlib
    except ImportError:
        return Check(
            name="python-xlib",
            ok=False,
            detail="python-xlib is not installed (desktop gym)",
            fix="pip install 'hud-gym[ubuntu]'",
        )
    version = tuple(getattr(Xlib, "__version__", (0, 0)))
    shown = ".".join(str(v) for v in version)
    if version < MIN_XLIB:
        return Check(name="python-xlib", ok=False, detail=f"python-xlib {shown} is older than 0.33", fix=fix)
    try:
        importlib.import_module("Xlib.ext.damage")
    except ImportError:
        return Check(
            name="python-xlib", ok=False, detail=f"python-xlib {shown} lacks Xlib.ext.damage (overwritten?)", fix=fix
        )
    return Check(name="python-xlib", ok=True, detail=f"python-xlib {shown} with Xlib.ext.damage")


def _extra(name: str, modules: tuple[str, ...], extra: str, what: str) -> Check:
    versions = []
    for module in modules:
        try:
            imported = importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001  (a broken install fails to import in many ways)
            return Check(
                name=name,
                ok=False,
                detail=f"{module} does not import ({type(exc).__name__}: {exc}); needed for {what}",
                fix=f"pip install 'hud-gym[{extra}]'",
                required=False,
            )
        versions.append(f"{module} {getattr(imported, '__version__', '?')}")
    return Check(name=name, ok=True, detail=", ".join(versions), required=False)


def check_home() -> Check:
    """``HUD_GYM_HOME`` (or the default data dir) exists or can be created, and is writable."""
    home = hud_gym_home()
    fix = f"export {HOME_ENV}=<a writable directory>  (or: mkdir -p {home} && chmod u+w {home})"
    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=home, prefix=".doctor-", delete=True) as handle:
            handle.write(b"ok")
    except OSError as exc:
        return Check(name="hud-gym-home", ok=False, detail=f"{home} is not writable ({exc.strerror or exc})", fix=fix)
    source = HOME_ENV if os.environ.get(HOME_ENV) else "default"
    return Check(name="hud-gym-home", ok=True, detail=f"{home} is writable ({source})")


def check_ffmpeg() -> Check:
    """The ffmpeg imageio-ffmpeg provides (used to write episode videos)."""
    fix = "pip install imageio-ffmpeg"
    try:
        import imageio_ffmpeg

        exe = imageio_ffmpeg.get_ffmpeg_exe()
    except Exception as exc:  # noqa: BLE001  (missing package or binary)
        return Check(name="ffmpeg", ok=False, detail=f"no ffmpeg: {type(exc).__name__}: {exc}", fix=fix, required=False)
    try:
        version = _run_version([exe, "-version"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(name="ffmpeg", ok=False, detail=f"{exe} does not run: {exc}", fix=fix, required=False)
    version = version.split(" Copyright")[0]
    return Check(
        name="ffmpeg",
        ok=bool(version),
        detail=f"{version or 'no version output'} at {exe}",
        fix=None if version else fix,
        required=False,
    )


def check_limits() -> Check:
    """How the per-episode limits (memory, pids, CPU) are enforced here: cgroups, else rlimits."""
    from hud_gym.controllers.sandbox.limits import enforcement

    mode, detail = enforcement()
    if mode != "rlimit":
        return Check(name="limits", ok=True, required=False, detail=f"{mode}: a cgroup per episode ({detail})")
    return Check(
        name="limits",
        ok=False,
        required=False,
        detail=f"rlimits only: {detail}",
        fix=(
            "run as root, or give hud-gym a delegated cgroup v2 (`systemd-run --user --scope -p Delegate=yes "
            "hud-gym ...`, or HUD_GYM_CGROUP=/sys/fs/cgroup/<a writable cgroup with memory, pids and cpu>)"
        ),
    )


def run_checks(*, launch_browser: bool = True, launch_timeout: float = 30.0) -> list[Check]:
    """Run every check on this machine, in a fixed order.

    Args:
        launch_browser: also start Chromium headless once (a second or two).
        launch_timeout: seconds the headless launch may take.
    """
    checks = [check_python(), check_hud_gym()]
    chromium, path = check_chromium()
    checks.append(chromium)
    if launch_browser:
        checks.append(
            check_chromium_launch(path, launch_timeout)
            if path is not None
            else Check(name="chromium-launch", ok=False, detail="skipped: no Chromium", fix=_chromium_fix())
        )
    checks += [
        _program("xvfb", "Xvfb", "xvfb", "the desktop gym's X server"),
        _program("openbox", "openbox", "openbox", "the desktop gym's window manager"),
        _program("bwrap", "bwrap", "bubblewrap", "the desktop gym's sandbox (else only sandbox=False runs)"),
        _program(
            "xdotool",
            "xdotool",
            "xdotool",
            "handy to inspect a desktop by hand; the gym itself uses XTEST",
            required=False,
        ),
        _program("xclip", "xclip", "xclip", "the desktop gym's clipboard functions", required=False),
        check_xlib(),
        check_limits(),
    ]
    extras: tuple[Callable[[], Check], ...] = (
        lambda: _extra("sb3", ("stable_baselines3", "torch"), "sb3", "Stable-Baselines3 training"),
        lambda: _extra("ray", ("ray",), "ray", "Ray rollouts"),
        lambda: _extra("miniwob", ("miniwob",), "miniwob", "the MiniWoB++ task set"),
    )
    checks += [make() for make in extras]
    checks += [check_home(), check_ffmpeg()]
    return checks


def render_checks(checks: list[Check]) -> str:
    """The checks as plain text: one line each (``ok``, ``FAIL`` or ``missing`` for optional
    ones), then the fix under each failure."""
    lines = []
    width = max((len(c.name) for c in checks), default=0)
    for check in checks:
        status = "ok" if check.ok else "FAIL" if check.required else "missing"
        lines.append(f"{status:<7} {check.name:<{width}}  {check.detail}")
        if not check.ok and check.fix:
            lines.append(f"{'':<7} {'':<{width}}  fix: {check.fix}")
    return "\n".join(lines)


def exit_code(checks: list[Check]) -> int:
    """0 when every required check passed, else 1."""
    return 0 if all(c.ok for c in checks if c.required) else 1
