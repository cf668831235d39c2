"""Controller servers started by tests: ``python -m hud_gym.controllers.remote.server GYM`` in
its own process group, with a known token."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import psutil

from hud_gym.controllers.remote.server import READY_PREFIX, TOKEN_ENV_VAR

TOKEN = "remote-env-test-token"
SERVER_MODULE = "hud_gym.controllers.remote.server"


def running_servers() -> list[psutil.Process]:
    """The live controller server processes this process started (directly or through a launcher)."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if SERVER_MODULE in " ".join(proc.cmdline()) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            pass
    return found


class ServerProcess:
    """``python -m hud_gym.controllers.remote.server GYM`` started by a test, with a known token."""

    def __init__(self, gym: str, port: int = 0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE, gym, "--port", str(port)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, TOKEN_ENV_VAR: TOKEN},
            start_new_session=True,
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(READY_PREFIX):
                self.url = line[len(READY_PREFIX) :].strip()
                break
        else:
            raise AssertionError(f"the {gym} server exited with {self.process.wait()}")
        self.port = int(self.url.rsplit(":", 1)[1])

    def kill(self) -> None:
        """SIGKILL the whole process group (the server and what it started)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
