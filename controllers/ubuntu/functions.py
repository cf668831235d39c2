"""Setup and evaluate functions of the desktop gym (``hud/Ubuntu-v0``).

HUD's ``hud-ubuntu`` had none; these give desktop tasks a state to start from and a way to be
graded from the desktop's state rather than from the final response alone. They work against
``ctx.controller.desktop`` (the :class:`~hud_gym.controllers.ubuntu.desktop.DesktopAPI` of an
:class:`~hud_gym.controllers.ubuntu.controller.UbuntuController`): the
``async`` ones on the env's event loop, the sync ones (file checks) on a thread, never blocking
the loop (:mod:`hud_gym.evaluation.calls`). Task regexes go through
:mod:`hud_gym.evaluation.patterns`.

Safety: every path resolves through ``desktop.resolve_path`` (inside the env's home; absolute
paths only with ``allow_absolute_paths=True``; ``..`` may not escape), and is then opened through
:class:`~hud_gym.controllers.ubuntu.homefs.HomeFiles`, which refuses, atomically, a link the
task's or the agent's programs planted to lead out of the home (these functions run on the host,
often as root), and writes a fresh file given to the sandbox's uid (a planted link is replaced,
never followed). An evaluator that meets such a link grades 0, never an evaluator error: the
agent may have planted it to escape its grade. Running a command is arbitrary code, so :func:`run`, :func:`command_output_contains`
and :func:`launch` of a program that is not one of the controller's known desktop apps need
``allow_shell=True`` (the default inside the container image, off on the host); on the host they
run inside the env's sandbox. Task text is never evaluated as code: commands are given to the
controller as argument lists, or as one string that runs through ``bash -lc`` when the shell is
allowed.

Setup functions raise on failure (the env's ``reset`` then raises a ``SetupError`` naming the
call); evaluate functions return a :class:`~hud_gym.evaluation.Grade` whose ``content`` says what
was found. A checked file or folder that is missing, of the wrong kind, or unreadable (a link out
of the home, a FIFO, a file the agent made unreadable: states an agent can make) is
:class:`~hud_gym.evaluation.TargetAbsent`, graded as the task's failure (reward 0), never as a
grading error.

(One module of ~420 lines on purpose: the gym's whole task vocabulary, under one safety contract, in
the order a task author reads it.)
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import psutil

from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.evaluation import FunctionContext, Grade, TargetAbsent, evaluate_function, setup_function
from hud_gym.evaluation.patterns import PatternError, TaskPattern, compile_task_pattern

__all__: list[str] = []

MAX_READ_BYTES = 10 * 1024 * 1024
"""Largest file an evaluator reads (the rest is ignored)."""

_SHOWN = 200
"""Characters of a file, clipboard or output shown in a grade's ``content``."""


def _desktop(ctx: FunctionContext) -> Any:
    """The desktop API of the env's controller (:class:`~hud_gym.controllers.ubuntu.desktop.DesktopAPI`)."""
    return ctx.controller.desktop


def _known_apps(ctx: FunctionContext) -> Mapping[str, Any]:
    """The controller's allow-list of desktop apps launchable by name without the shell."""
    apps = getattr(_desktop(ctx), "known_apps", None)
    return apps if isinstance(apps, Mapping) else {}


def _short(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _as_list(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _describe(command: str | Sequence[str]) -> str:
    return command if isinstance(command, str) else " ".join(command)


def _files(ctx: FunctionContext) -> HomeFiles:
    """The env's home, opened safely (see the module docstring)."""
    desktop = _desktop(ctx)
    return HomeFiles(Path(desktop.state.home), desktop.state.file_owner)


def _resolve(ctx: FunctionContext, path: str, graded: bool = False) -> tuple[Path, HomeFiles]:
    """``path`` resolved in the env's home, and the home's files.

    Raises:
        PermissionError: the task's path leaves the home (``..``, absolute): the task is wrong;
            for a setup (not ``graded``), also a link out of the home on the way.
        TargetAbsent: for an evaluator (``graded``), the path stays in the home as written, but a
            link the episode planted leads out of it.
    """
    try:
        return _desktop(ctx).resolve_path(path), _files(ctx)
    except PermissionError:
        text = path[2:] if path.startswith("~/") else path
        written_inside = not text.startswith(("~", "/")) and os.path.normpath(text).split(os.sep)[0] != ".."
        if graded and written_inside:
            raise TargetAbsent(f"{path!r} leads out of the env's home (a link the episode made)") from None
        raise


_ABSENT_ERRNOS = frozenset(
    {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.ELOOP, errno.EXDEV, errno.ENXIO}
)
"""Why a checked path cannot be read when the episode made it so (gone, swapped for a folder, a
link out of the home, a FIFO or device, made unreadable)."""


@contextlib.contextmanager
def _checked(path: str) -> Iterator[None]:
    """Reading the checked ``path``: an error an agent can cause is :class:`TargetAbsent`."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _ABSENT_ERRNOS:
            raise TargetAbsent(f"{path!r} cannot be read: {exc.strerror or exc}") from exc
        raise


def _require_file(path: str, resolved: Path, files: HomeFiles) -> None:
    """Raise :class:`TargetAbsent` unless ``resolved`` is a regular file."""
    kind = files.kind(resolved)
    if kind is None:
        raise TargetAbsent(f"{path!r} does not exist")
    if kind != "file":
        raise TargetAbsent(f"{path!r} is {'a directory' if kind == 'dir' else 'not a regular file'}, not a file")


def read_task_file(files: HomeFiles, path: str, resolved: Path, limit: int) -> str:
    """The text (UTF-8, errors replaced) of the first ``limit`` bytes of the task's file ``path``
    (``resolved``).

    Raises:
        TargetAbsent: it does not exist, is not a regular file, is a link out of the home or is
            unreadable: the episode's doing, graded as the task's failure, never an evaluator error.
    """
    with _checked(path):
        _require_file(path, resolved, files)
        return files.read_bytes(resolved, limit).decode("utf-8", errors="replace")


def _compile(pattern: str, *, ignore_case: bool = False, multiline: bool = False) -> TaskPattern | Grade:
    try:
        return compile_task_pattern(pattern, ignore_case=ignore_case, multiline=multiline)
    except PatternError as exc:
        return Grade.error(str(exc))


# ------------------------------------------------------------------------------- setup


async def _wait_for_new_window(
    ctx: FunctionContext, process: asyncio.subprocess.Process, before: set[int], what: str, timeout: float
) -> dict[str, Any]:
    """The first window that was not in ``before`` and belongs to ``process`` or its descendants
    (by ``_NET_WM_PID``; a window without a pid counts too)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        pids = {process.pid}
        try:
            pids.update(child.pid for child in psutil.Process(process.pid).children(recursive=True))
        except psutil.Error:
            pass
        new = [w for w in await _desktop(ctx).windows() if w["id"] not in before]
        mine = [w for w in new if w.get("pid") in pids] or [w for w in new if w.get("pid") is None]
        if mine:
            return mine[0]
        if process.returncode is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode} before showing a window")
        if loop.time() >= deadline:
            raise TimeoutError(f"{what} showed no window within {timeout:g} s")
        await asyncio.sleep(0.02)


async def _launch(
    ctx: FunctionContext, app: str, args: Sequence[str], wait: bool | str, timeout: float
) -> dict[str, Any]:
    """Start ``app`` through the controller's checked command line (see ``launch``)."""
    desktop = _desktop(ctx)
    if app not in _known_apps(ctx):
        desktop.require_shell(f"launch of {app!r}")
    argv = desktop.launch_argv(app, list(args))
    before = {w["id"] for w in await desktop.windows()} if wait is True else set()
    process = await desktop.spawn(argv, cwd=desktop.state.home)
    result: dict[str, Any] = {"pid": process.pid, "argv": argv}
    if wait is True:
        result["window"] = await _wait_for_new_window(ctx, process, before, f"launch of {app!r}", timeout)
    elif isinstance(wait, str) and wait:
        result["window"] = await desktop.wait_for_window(wait, timeout)
    return result


@setup_function("ubuntu", aliases=("launch_app",))
async def launch(
    ctx: FunctionContext, app: str, args: list[str] | None = None, wait: bool | str = True, timeout: float = 10.0
) -> dict[str, Any]:
    """Start ``app`` with ``args`` in the env's home and wait for its window.

    ``app`` is one of the controller's known desktop apps (``"xterm"``, ``"editor"``, ``"xcalc"``,
    ...: no shell needed, and only the arguments the controller allows for it, e.g. no
    ``xterm -e``), or any program on ``PATH``, which needs ``allow_shell=True``. ``wait``: ``True``
    waits for a new window of the process (or its children), a string waits for a window whose
    title matches that regex, ``False`` does not wait. Returns ``{"pid", "argv", "window"}``.
    """
    return await _launch(ctx, app, args or [], wait, timeout)


@setup_function("ubuntu")
async def open_file(
    ctx: FunctionContext, path: str, app: str = "editor", wait: bool | str = True, timeout: float = 10.0
) -> dict[str, Any]:
    """Open ``path`` (inside the env's home) in ``app`` and wait for its window.

    ``app`` defaults to the hud-gym Tk text editor (``"xedit"`` is the other known app that opens
    files; a missing file opens as a new, empty document of that name). Any other program needs
    ``allow_shell=True`` and gets the file's absolute path as its argument.
    """
    resolved = _desktop(ctx).resolve_path(path)
    argument = path if app in _known_apps(ctx) else str(resolved)
    return await _launch(ctx, app, [argument], wait, timeout)


@setup_function("ubuntu", aliases=("create_file",))
def write_file(ctx: FunctionContext, path: str, content: str = "") -> str:
    """Write ``content`` (UTF-8) to ``path``, creating its parent directories; returns the path."""
    resolved, files = _resolve(ctx, path)
    files.write_bytes(resolved, content.encode("utf-8"))
    return str(resolved)


@setup_function("ubuntu", aliases=("mkdir",))
def make_dir(ctx: FunctionContext, path: str) -> str:
    """Create the directory ``path`` and its parents (no error when it exists); returns the path."""
    resolved, files = _resolve(ctx, path)
    files.mkdir(resolved)
    return str(resolved)


@setup_function("ubuntu")
def copy_file(ctx: FunctionContext, src: str, dst: str) -> str:
    """Copy the file (or directory tree) ``src`` to ``dst``; a ``dst`` directory receives it under
    its own name. Returns the destination path."""
    desktop = _desktop(ctx)
    source, target = desktop.resolve_path(src), desktop.resolve_path(dst)
    files = _files(ctx)
    if files.kind(source) is None:
        raise FileNotFoundError(f"copy_file: {src!r} does not exist")
    if files.kind(target) == "dir":
        target = target / source.name
    files.copy(source, target)
    return str(target)


@setup_function("ubuntu", aliases=("bash", "execute"))
async def run(ctx: FunctionContext, command: str | list[str], timeout: float = 30.0) -> str:
    """Run ``command`` on the desktop (a string runs through ``bash -lc``, a list is the argv) in
    the env's home and return its stdout. Needs ``allow_shell=True``.

    Raises:
        PermissionError: the shell is not allowed.
        RuntimeError: the command exited with a non-zero code (the message names the command, the
            code and its stderr).
    """
    desktop = _desktop(ctx)
    desktop.require_shell("run")
    code, stdout, stderr = await desktop.run(command, timeout=timeout)
    if code != 0:
        detail = _short(stderr.strip()) or "(no stderr)"
        raise RuntimeError(f"command {_describe(command)!r} exited with code {code}: {detail}")
    return stdout


@setup_function("ubuntu")
async def wait_for_window(ctx: FunctionContext, title: str, timeout: float = 10.0) -> dict[str, Any]:
    """Wait until a window whose title matches the regex ``title`` exists; returns the window."""
    return await _desktop(ctx).wait_for_window(title, timeout)


@setup_function("ubuntu")
async def set_clipboard(ctx: FunctionContext, text: str) -> None:
    """Put ``text`` on the desktop's clipboard (the CLIPBOARD selection)."""
    await _desktop(ctx).clipboard_set(text)


# ------------------------------------------------------------------------------- evaluate


@evaluate_function("ubuntu")
def file_exists(
    ctx: FunctionContext, path: str, exists: bool = True, kind: Literal["any", "file", "dir"] = "any"
) -> Grade:
    """Reward 1 when ``path`` exists (as a ``kind``: ``"file"``, ``"dir"`` or ``"any"``); with
    ``exists=False``, when it does not."""
    resolved, files = _resolve(ctx, path, graded=True)
    with _checked(path):
        actual = files.kind(resolved)
    found = actual == kind if kind in ("file", "dir") else actual is not None
    what = "" if kind == "any" else f" as a {kind}"
    ok = found == exists
    return Grade(
        reward=float(ok),
        content=f"{path!r} {'exists' if found else 'does not exist'}{what}",
        info={"path": str(resolved), "exists": found},
    )


@evaluate_function("ubuntu")
def file_contains(ctx: FunctionContext, path: str, texts: str | list[str], case_sensitive: bool = True) -> Grade:
    """Reward 1 when the file ``path`` contains every one of ``texts``."""
    resolved, files = _resolve(ctx, path, graded=True)
    content = read_task_file(files, path, resolved, MAX_READ_BYTES)
    fold = (lambda s: s) if case_sensitive else str.casefold
    missing = [t for t in _as_list(texts) if fold(t) not in fold(content)]
    summary = "all found" if not missing else f"missing {missing!r}; the file holds {_short(content)!r}"
    return Grade(reward=float(not missing), content=f"{path!r}: {summary}", info={"missing": missing})


@evaluate_function("ubuntu")
def file_matches(ctx: FunctionContext, path: str, pattern: str, ignore_case: bool = False) -> Grade:
    """Reward 1 when the regex ``pattern`` matches somewhere in the file ``path`` (``re.search``,
    multi-line: ``^``/``$`` match at each line). An invalid pattern, or one that runs out of
    time (:mod:`hud_gym.evaluation.patterns`), is a grading error."""
    regex = _compile(pattern, ignore_case=ignore_case, multiline=True)
    if isinstance(regex, Grade):
        return regex
    resolved, files = _resolve(ctx, path, graded=True)
    content = read_task_file(files, path, resolved, MAX_READ_BYTES)
    try:
        found = regex.search(content)
    except PatternError as exc:
        return Grade.error(f"{path!r}: {exc}")
    verdict = f"matched {found.group(0)!r}" if found else f"did not match {_short(content)!r}"
    return Grade(
        reward=float(found is not None),
        content=f"{path!r}: pattern {pattern!r} {verdict}",
        info={"match": found.group(0) if found else None},
    )


@evaluate_function("ubuntu")
def dir_contains(ctx: FunctionContext, path: str, names: str | list[str], exact: bool = False) -> Grade:
    """Reward 1 when the directory ``path`` has an entry for every one of ``names`` (with
    ``exact``: those entries and no other, hidden ones excepted)."""
    resolved, files = _resolve(ctx, path, graded=True)
    with _checked(path):
        kind = files.kind(resolved)
        if kind != "dir":
            raise TargetAbsent(f"{path!r} {'is not a directory' if kind is not None else 'does not exist'}")
        entries = sorted(files.listdir(resolved))
    wanted = _as_list(names)
    missing = [n for n in wanted if n not in entries]
    extra = [e for e in entries if e not in wanted and not e.startswith(".")] if exact else []
    ok = not missing and not extra
    problems = ([f"missing {missing!r}"] if missing else []) + ([f"unexpected {extra!r}"] if extra else [])
    summary = "; ".join(problems) if problems else "all found"
    content = f"{path!r}: {summary} (entries: {_short(repr(entries))})"
    return Grade(reward=float(ok), content=content, info={"entries": entries, "missing": missing, "unexpected": extra})


@evaluate_function("ubuntu")
async def command_output_contains(
    ctx: FunctionContext, command: str | list[str], texts: str | list[str], timeout: float = 30.0
) -> Grade:
    """Reward 1 when the stdout of ``command`` (run as :func:`run` does) contains every one of
    ``texts``. Needs ``allow_shell=True``; without it the grade is an error that says so. The exit
    code is reported in ``info`` but not graded."""
    desktop = _desktop(ctx)
    try:
        desktop.require_shell("command_output_contains")
    except PermissionError as exc:
        return Grade.error(str(exc))
    code, stdout, stderr = await desktop.run(command, timeout=timeout)
    missing = [t for t in _as_list(texts) if t not in stdout]
    summary = "all found" if not missing else f"missing {missing!r} in {_short(stdout)!r}"
    return Grade(
        reward=float(not missing),
        content=f"{_describe(command)!r} (exit {code}): {summary}",
        info={"returncode": code, "stdout": _short(stdout, 2000), "stderr": _short(stderr, 2000), "missing": missing},
    )


@evaluate_function("ubuntu", aliases=("window_title_matches",))
async def window_exists(ctx: FunctionContext, title: str, window_class: str | None = None) -> Grade:
    """Reward 1 when a window's title matches the regex ``title`` (``re.search``) and, when
    ``window_class`` is given, its ``WM_CLASS`` class is that one (case-insensitive: ``"XCalc"``),
    so a terminal the agent retitled ``Calculator`` is not the calculator."""
    regex = _compile(title)
    if isinstance(regex, Grade):
        return regex
    windows = await _desktop(ctx).windows()
    wanted = window_class.casefold() if window_class is not None else None
    titles = [str(w.get("title") or "") for w in windows]
    candidates = [
        str(w.get("title") or "") for w in windows if wanted is None or str(w.get("class") or "").casefold() == wanted
    ]
    try:
        matching = await asyncio.to_thread(lambda: [t for t in candidates if regex.search(t)])
    except PatternError as exc:
        return Grade.error(str(exc))
    of_class = "" if window_class is None else f" of class {window_class!r}"
    content = (
        f"window(s) {matching!r}{of_class} match {title!r}"
        if matching
        else f"no window{of_class} has a title matching {title!r} (titles: {titles!r})"
    )
    return Grade(reward=float(bool(matching)), content=content, info={"titles": titles, "matching": matching})


@evaluate_function("ubuntu")
async def clipboard_contains(ctx: FunctionContext, text: str, case_sensitive: bool = True) -> Grade:
    """Reward 1 when the clipboard (the CLIPBOARD selection) contains ``text`` in its first
    :data:`~hud_gym.bounds.CLIPBOARD_BYTES` bytes (``info["clipboard_truncated"]``: it held more)."""
    read = await _desktop(ctx).clipboard_read()  # at most CLIPBOARD_BYTES of it
    clipboard = read.text
    fold = (lambda s: s) if case_sensitive else str.casefold
    ok = fold(text) in fold(clipboard)
    return Grade(
        reward=float(ok),
        content=f"the clipboard holds {_short(clipboard)!r}",
        info={"clipboard": _short(clipboard, 2000), "clipboard_truncated": read.truncated},
    )


def _env_processes(ctx: FunctionContext) -> list[psutil.Process]:
    """The live processes of this env's tasks: its process group, their descendants, and those
    carrying its token (e.g. a daemon started from its xterm)."""
    desktop = _desktop(ctx)
    pids: set[int] = set(desktop.pids().get("tasks", ())) if hasattr(desktop, "pids") else set()
    found = []
    for pid in sorted(pids):
        try:
            process = psutil.Process(pid)
            if process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


def _process_names(process: psutil.Process) -> set[str]:
    """The names a process answers to: its ``comm``, and the base names of its executable and
    of ``argv[0]``."""
    names = {process.name()}
    with contextlib.suppress(psutil.Error):
        cmdline = process.cmdline()
        if cmdline:
            names.add(os.path.basename(cmdline[0]))
    with contextlib.suppress(psutil.Error):
        names.add(os.path.basename(process.exe()))
    return {n for n in names if n}


@evaluate_function("ubuntu")
def process_running(ctx: FunctionContext, name: str) -> Grade:
    """Reward 1 when a live process of this env's tasks (its process group, their descendants, or
    one carrying the env's token) has the command name ``name`` (its ``comm``, or the base name of
    its executable or of ``argv[0]``)."""
    matching: list[dict[str, Any]] = []
    seen: set[str] = set()
    for process in _env_processes(ctx):
        try:
            names = _process_names(process)
        except psutil.Error:
            continue
        seen.update(names)
        if name in names:
            matching.append({"pid": process.pid, "name": process.name()})
    content = (
        f"{len(matching)} process(es) named {name!r} running"
        if matching
        else f"no process named {name!r} (running: {_short(repr(sorted(seen)))})"
    )
    return Grade(reward=float(bool(matching)), content=content, info={"processes": matching})
