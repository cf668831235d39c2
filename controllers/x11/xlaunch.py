"""Starting an X server process and waiting until it is ready: what it writes to ``-displayfd``.

:func:`launch_xvfb` runs the command in a session of its own that dies with the hud-gym loop
thread that started it (``PR_SET_PDEATHSIG``), and reads the display number the server writes to
its ``-displayfd`` pipe once it accepts connections: readiness as an event, not a sleep.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

from hud_gym.controllers.process_utils import die_with_parent

__all__ = ["launch_xvfb"]


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _read_display_number(fd: int, timeout: float) -> str:
    """Read what Xvfb writes to its ``-displayfd`` (the number and a newline; '' on EOF)."""
    loop = asyncio.get_running_loop()
    buffer = b""
    deadline = time.monotonic() + timeout
    while not buffer.endswith(b"\n"):
        ready = loop.create_future()
        loop.add_reader(fd, _resolve, ready)
        try:
            await asyncio.wait_for(ready, max(0.0, deadline - time.monotonic()))
        finally:
            loop.remove_reader(fd)
        chunk = os.read(fd, 64)
        if not chunk:
            break
        buffer += chunk
    return buffer.decode().strip()


async def launch_xvfb(
    argv: list[str], log_path: Path, timeout: float, env: dict[str, str] | None
) -> tuple[asyncio.subprocess.Process, str]:
    """Start ``argv`` (``{fd}`` in it: the ``-displayfd`` pipe); returns the process and what Xvfb
    wrote to ``-displayfd`` ('' if it failed)."""
    read_fd, write_fd = os.pipe()
    try:
        argv = [a.replace("{fd}", str(write_fd)) for a in argv]
        with open(log_path, "ab") as log:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                pass_fds=(write_fd,),
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        os.close(write_fd)
        write_fd = -1
        try:
            reported = await _read_display_number(read_fd, timeout)
        except asyncio.TimeoutError:
            reported = ""
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
    return process, reported
