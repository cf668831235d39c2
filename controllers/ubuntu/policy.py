"""The desktop's task policy, as pure functions: what ``launch`` starts, which paths a task reaches.

A task or an agent reaches only the env's home and the apps of :data:`LAUNCHABLE` unless the env
was made to allow more (``allow_shell``, ``allow_absolute_paths``), or runs inside the gym's own
container (:func:`detect_container`). These functions decide; the controller
(:class:`~hud_gym.controllers.ubuntu.controller.UbuntuController`) calls them with its options and
its session, so they are unit-tested without a display.

Example:
    >>> from pathlib import Path
    >>> launch_argv("xterm", ["-title", "notes"], home=Path("/tmp/home"))
    ['xterm', '-title', 'notes']
    >>> launch_argv("xterm", ["-e", "sh"], home=Path("/tmp/home"))
    Traceback (most recent call last):
    PermissionError: launch 'xterm': argument '-e' is not allowed without shell permission ...
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.ubuntu.apps import KNOWN_APPS, REAL_APPS

__all__ = ["LAUNCHABLE", "check_options", "detect_container", "launch_argv", "resolve_path"]

LAUNCHABLE: dict[str, str] = {
    "xterm": "a terminal (args: -title/-T TITLE, -geometry/-g GEOM, -fa FONT, -fs SIZE, -bg/-fg COLOUR, -name NAME)",
    "editor": "the hud-gym text editor (args: [FILE], a path inside the home)",
    "eventlog": "the hud-gym event-log test window (args: --log FILE --title TITLE --geometry +X+Y)",
    "xcalc": "a calculator (no args)",
    "xclock": "a clock (no args)",
    "xeyes": "eyes following the pointer (no args)",
    "xlogo": "the X logo (no args)",
    "xedit": "a text editor (args: [FILE], a path inside the home)",
    "libreoffice": "LibreOffice (args: [--calc|--writer|--impress] [FILE], a path inside the home)",
    "libreoffice-calc": "LibreOffice Calc (args: [FILE], a path inside the home)",
    "libreoffice-writer": "LibreOffice Writer (args: [FILE], a path inside the home)",
    "libreoffice-impress": "LibreOffice Impress (args: [FILE], a path inside the home)",
    "gimp": "GIMP, the image editor (args: [FILE], a path inside the home)",
    "vlc": "VLC, the media player (args: [FILE], a path inside the home)",
    "thunderbird": "Thunderbird, the mail client (no args)",
    "gedit": "gedit, the text editor (args: [FILE], a path inside the home)",
    "pcmanfm": "PCManFM, the file manager (args: [FOLDER], a path inside the home)",
    "chromium": "Chromium, the web browser, DevTools on the sandbox's port 1337 (args: [URL], http(s) or a file inside the home)",
}
"""Apps ``launch`` may start by name without shell permission, with what their args may be."""

_XTERM_OPTIONS = frozenset({"-title", "-T", "-geometry", "-g", "-fa", "-fs", "-bg", "-fg", "-name"})
_EVENTLOG_OPTIONS = frozenset({"--log", "--title", "--geometry"})
_WEB_ADDRESS = re.compile(r"https?://[^\s]{1,2000}\Z")


def detect_container() -> bool:
    """True inside the gym's own container image, where shell commands are allowed."""
    # Only the gym's own image says so (docker/ubuntu sets it): a generic container marker such as
    # /.dockerenv is also present on many hosts and CI runners, where the shell must stay refused.
    return os.environ.get("HUD_GYM_IN_CONTAINER") == "1"


def resolve_path(path: str, home: Path, *, allow_absolute_paths: bool = False, check_links: bool = True) -> Path:
    """A task's path as a real path: relative paths and ``~/...`` resolve inside ``home``.

    ``check_links=False`` checks the path as written only (no ``..`` above the home, not
    absolute), for a caller that opens it through :class:`~.homefs.HomeFiles`, where the kernel
    refuses a link out at the moment of the open (an evaluator grades such a link 0: the agent
    may have planted it).

    Raises:
        PermissionError: an absolute path, or one leaving the home (``..``, a symlink), unless
            ``allow_absolute_paths``.
    """
    text = os.fspath(path)
    if text == "~" or text.startswith("~/"):
        text = text[2:]
    elif text.startswith("~"):
        if not allow_absolute_paths:
            raise PermissionError(
                f"path {path!r} is outside the env's home: create the env with allow_absolute_paths=True to use it"
            )
        return Path(os.path.expanduser(text))
    if os.path.isabs(text):
        if not allow_absolute_paths:
            raise PermissionError(
                f"absolute path {path!r} is outside the env's home ({home}): create the env with "
                "allow_absolute_paths=True to use it"
            )
        return Path(os.path.normpath(text))
    candidate = Path(os.path.normpath(home / text))
    real_home = home.resolve()
    inside = candidate == home or home in candidate.parents
    if inside and check_links:
        real = candidate.resolve()
        inside = real == real_home or real_home in real.parents
    if not inside and not allow_absolute_paths:
        raise PermissionError(
            f"path {path!r} leaves the env's home ({home}): create the env with allow_absolute_paths=True to use it"
        )
    return candidate


def launch_argv(
    app: str,
    args: Sequence[str] = (),
    *,
    home: Path | None,
    apps: Mapping[str, Sequence[str]] = KNOWN_APPS,
    shell_allowed: bool = False,
    allow_absolute_paths: bool = False,
    search_path: str | None = None,
) -> list[str]:
    """The checked command line that launches ``app`` with ``args`` (see :data:`LAUNCHABLE`).

    Without shell permission only the known apps start, and only with the arguments
    :data:`LAUNCHABLE` lists (no ``xterm -e``); file arguments go through :func:`resolve_path`.

    Args:
        app: a name of ``apps``, or (with shell permission) a program on ``search_path``.
        args: its arguments.
        home: the env's home (``None``: the desktop is not started, so no path can be resolved).
        apps: the known apps: name -> the command line that starts it.
        shell_allowed: arbitrary commands may run (``allow_shell``, or the gym's container).
        allow_absolute_paths: file arguments may leave the home.
        search_path: the ``PATH`` of task processes.

    Raises:
        PermissionError: not allowed without shell permission (or a path outside the home).
        ValueError: bad arguments, or no such program.
        ControllerError: a file argument, and no home to resolve it in.
    """
    args = list(args)

    def home_dir() -> Path:
        if home is None:
            raise ControllerError("the desktop controller is not started (reset the env first)")
        return home

    def resolve(path: str) -> str:
        return str(resolve_path(path, home_dir(), allow_absolute_paths=allow_absolute_paths))

    if app in apps:
        base = list(apps[app])
        if app == "xterm":
            if not shell_allowed:
                check_options(app, args, _XTERM_OPTIONS)
            return [*base, *args]
        if app in REAL_APPS and not shell_allowed:
            return [*base, *_real_app_args(app, args, resolve)]
        if app in ("editor", "xedit"):
            if len(args) > 1 or any(a.startswith("-") for a in args):
                raise ValueError(f"launch {app!r} takes at most one argument: the file to open")
            return [*base, *(resolve(a) for a in args)]
        if app != "eventlog":
            if args and not shell_allowed:
                raise PermissionError(f"launch {app!r} takes no arguments without shell permission")
            return [*base, *args]
        check_options(app, args, _EVENTLOG_OPTIONS)
        if "--log" in args:
            index = args.index("--log") + 1
            args[index] = resolve(args[index])
        else:
            args += ["--log", str(home_dir() / "eventlog.jsonl")]
        return [*base, *args]
    if not shell_allowed:
        raise PermissionError(
            f"launch {app!r}: only {', '.join(apps)} can be launched by name; launching other programs "
            "runs arbitrary commands: create the env with allow_shell=True or run it inside its container (docker/ubuntu)"
        )
    if shutil.which(app, path=search_path) is None:
        raise ValueError(f"launch: no program {app!r} on the PATH")
    return [app, *args]


def _real_app_args(app: str, args: Sequence[str], resolve: Callable[[str], str]) -> list[str]:
    """The checked arguments of a real app (:data:`~.apps.REAL_APPS`): at most one file, as a path
    resolved inside the home (an absolute path: never read as an option, a macro or a script);
    ``libreoffice`` also takes which module to open, ``chromium`` an http(s) address. Nothing else:
    these apps have options that run code (LibreOffice macros, GIMP's ``-b`` batch scripts)."""
    rest = list(args)
    if app == "libreoffice" and rest and rest[0] in ("--calc", "--writer", "--impress"):
        module = [rest.pop(0)]
    else:
        module = []
    if app == "thunderbird" and rest:
        raise PermissionError("launch 'thunderbird' takes no arguments without shell permission")
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        raise PermissionError(
            f"launch {app!r} takes at most one argument without shell permission: the file to open ({LAUNCHABLE[app]})"
        )
    if app == "chromium" and rest and _WEB_ADDRESS.match(rest[0]):
        return rest
    return [*module, *(resolve(a) for a in rest)]


def check_options(app: str, args: Sequence[str], options: Collection[str]) -> None:
    """Check that ``args`` are ``option value`` pairs of ``options``.

    Raises:
        PermissionError: naming the first argument that is not.
    """
    i = 0
    while i < len(args):
        if args[i] in options and i + 1 < len(args):
            i += 2
            continue
        raise PermissionError(
            f"launch {app!r}: argument {args[i]!r} is not allowed without shell permission "
            f"(allowed: {', '.join(sorted(options))}, each with a value; or create the env with allow_shell=True)"
        )
