"""The processes a desktop task starts: one process group per env and episode, killed as a whole.

The group is anchored by a tiny process (``sleep``, ignoring SIGTERM/SIGHUP/SIGINT) that leads a
new process group; every task process joins that group (``setpgid``). The anchor keeps the group
id alive (and so never reused by an unrelated process) until the group is killed:

1. SIGTERM to the group (the anchor ignores it), and to every process that escaped the group but
   carries the env's marker variable (``HUD_GYM_ENV_TOKEN`` in its environment: a daemon that
   called ``setsid``) or descends from a group member;
2. up to ``grace`` seconds for them to exit (polled every 10 ms);
3. SIGKILL to the group and the stragglers, and a wait until every one is gone.

A zombie counts as gone. The anchor is started again by the next :meth:`TaskProcesses.spawn`.
The anchor and the processes started directly get SIGKILL if the hud-gym loop thread that started
them ends without closing the env (``PR_SET_PDEATHSIG``: a crashed Python process).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from hud_gym.controllers.process_utils import alive, await_gone, die_with_parent

__all__ = ["ENV_TOKEN_VAR", "TaskProcesses"]

ENV_TOKEN_VAR = "HUD_GYM_ENV_TOKEN"
"""Environment variable marking the processes of one env (value: the env's token)."""

_ANCHOR = ["sh", "-c", "trap '' TERM HUP INT; exec sleep 2147483647"]


def _group_kwargs(pgid: int) -> dict[str, Any]:
    """Popen arguments: join process group ``pgid`` (0: a new one), die with the hud-gym loop thread."""
    if sys.version_info >= (3, 11):
        return {"process_group": pgid, "preexec_fn": die_with_parent}

    def join() -> None:  # pragma: no cover  (Python 3.10)
        os.setpgid(0, pgid)
        die_with_parent()

    return {"preexec_fn": join}


class TaskProcesses:
    """Starts and kills the processes of one env's tasks; see the module docstring.

    Args:
        env: the environment of task processes (must contain :data:`ENV_TOKEN_VAR`).
        log_dir: where each process's stdout/stderr go (``<name>.<n>.log``), or ``None`` for
            ``/dev/null``.
    """

    def __init__(self, env: dict[str, str], log_dir: Path | None) -> None:
        self.env = env
        self.log_dir = log_dir
        self.token = env[ENV_TOKEN_VAR]
        self._anchor: asyncio.subprocess.Process | None = None
        self._children: list[asyncio.subprocess.Process] = []
        self._counter = itertools.count(1)
        self._lock: asyncio.Lock | None = None

    @property
    def pgid(self) -> int | None:
        """The process group of this episode's task processes (``None`` before the first spawn)."""
        anchor = self._anchor
        return anchor.pid if anchor is not None and anchor.returncode is None else None

    async def _group(self) -> int:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.pgid is None:
                self._anchor = await asyncio.create_subprocess_exec(
                    *_ANCHOR,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=self.env,
                    **_group_kwargs(0),
                )
            assert self._anchor is not None
            return self._anchor.pid

    def _log_file(self, argv: list[str]) -> Any:
        if self.log_dir is None:
            return subprocess.DEVNULL
        self.log_dir.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(argv[0]).name)[:40] or "process"
        return open(self.log_dir / f"{name}.{next(self._counter)}.log", "ab")

    async def spawn(
        self, argv: list[str], *, cwd: Path | None = None, stdin: Any = subprocess.DEVNULL, capture: bool = False
    ) -> asyncio.subprocess.Process:
        """Start ``argv`` in the episode's process group with the task environment.

        Args:
            cwd: working directory.
            stdin: ``subprocess.DEVNULL`` (default) or ``subprocess.PIPE``.
            capture: pipe stdout/stderr back (for :meth:`run`) instead of the log file.

        Raises:
            FileNotFoundError: the program does not exist.
        """
        if not argv:
            raise ValueError("argv is empty")
        pgid = await self._group()
        out = subprocess.PIPE if capture else self._log_file(argv)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd) if cwd is not None else None,
                env=self.env,
                stdin=stdin,
                stdout=out,
                stderr=subprocess.PIPE if capture else out,
                **_group_kwargs(pgid),
            )
        finally:
            if hasattr(out, "close"):
                out.close()
        self._children = [c for c in self._children if c.returncode is None] + [process]
        return process

    async def run(
        self, argv: list[str], *, timeout: float, input: bytes | None = None, cwd: Path | None = None
    ) -> tuple[int, str, str]:
        """Run ``argv`` to completion; returns ``(returncode, stdout, stderr)``.

        Raises:
            TimeoutError: it ran longer than ``timeout`` seconds; it and its descendants were
                killed (the env's other task processes keep running).
        """
        process = await self.spawn(
            argv, cwd=cwd, capture=True, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(input), timeout)
        except asyncio.TimeoutError:
            await self._kill_tree(process.pid)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), 5)
            raise TimeoutError(f"{' '.join(argv)[:200]!r} did not finish within {timeout} s") from None
        assert process.returncode is not None
        return process.returncode, out.decode(errors="replace"), err.decode(errors="replace")

    async def read_output(self, argv: list[str], *, timeout: float, limit: int) -> tuple[int, bytes]:
        """Run ``argv``; returns its exit code and at most ``limit + 1`` bytes of its stdout (past
        them it and its descendants are killed: what a task process prints is never read whole).

        Raises:
            TimeoutError: it ran longer than ``timeout`` seconds (it and its descendants were killed).
        """
        process = await self.spawn(argv, capture=True)
        assert process.stdout is not None
        try:
            out = await asyncio.wait_for(_read_at_most(process.stdout, limit + 1), timeout)
            if len(out) > limit:
                await self._kill_tree(process.pid)
            await asyncio.wait_for(process.wait(), timeout)
        except asyncio.TimeoutError:
            await self._kill_tree(process.pid)
            raise TimeoutError(f"{' '.join(argv)[:200]!r} did not finish within {timeout} s") from None
        assert process.returncode is not None
        return process.returncode, out

    async def _kill_tree(self, pid: int) -> None:
        try:
            root = psutil.Process(pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        await await_gone({p.pid for p in tree}, 5.0)

    # ----------------------------------------------------------------- teardown

    def _group_members(self, pgid: int) -> set[int]:
        members = set()
        for pid in psutil.pids():
            try:
                if os.getpgid(pid) == pgid:
                    members.add(pid)
            except OSError:
                continue
        return members

    def _marked(self) -> set[int]:
        """Processes of ours that carry this env's token (they may have left the group)."""
        marked = set()
        uid = os.getuid()
        for proc in psutil.process_iter(["uids"]):
            try:
                if proc.info["uids"] is None or proc.info["uids"].real != uid or proc.pid == os.getpid():
                    continue
                if proc.environ().get(ENV_TOKEN_VAR) == self.token:
                    marked.add(proc.pid)
            except psutil.Error:
                continue
        return marked

    def pids(self) -> set[int]:
        """Every live process of this env's tasks (group members, descendants, marked ones)."""
        pgid = self.pgid
        found = self._group_members(pgid) if pgid is not None else set()
        found |= {c.pid for c in self._children if c.returncode is None}
        for pid in list(found):
            with contextlib.suppress(psutil.Error):
                found |= {p.pid for p in psutil.Process(pid).children(recursive=True)}
        found |= self._marked()
        return {pid for pid in found if alive(pid)}

    async def kill_all(self, grace: float = 0.5) -> None:
        """Kill every task process of the episode; see the module docstring."""
        anchor = self._anchor
        pgid = self.pgid
        targets = self.pids()
        anchor_pid = anchor.pid if anchor is not None else None
        if targets or pgid is not None:
            _signal(pgid, targets, signal.SIGTERM)
            left = await await_gone(targets - {anchor_pid}, grace)
            # New processes may have been forked meanwhile: take a fresh census under SIGKILL.
            left |= self.pids()
            _signal(pgid, left, signal.SIGKILL)
            await await_gone(left | ({anchor_pid} if anchor_pid else set()), 5.0)
        for process in [*self._children, *([anchor] if anchor is not None else [])]:
            if process.returncode is None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), 1.0)
        self._children = []
        self._anchor = None


def _signal(pgid: int | None, pids: set[int], sig: signal.Signals) -> None:
    """Send ``sig`` to the process group and to each pid (some may have left the group)."""
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def _read_at_most(stream: asyncio.StreamReader, size: int) -> bytes:
    try:
        return await stream.readexactly(size)
    except asyncio.IncompleteReadError as short:
        return short.partial
