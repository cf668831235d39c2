"""The evaluation worker process: runs isolated evaluate functions for
:mod:`hud_gym.evaluation.worker_pool`, one call at a time.

Started as ``python -m hud_gym.evaluation.worker FD`` where ``FD`` is its end of a socket pair.
Every message either way is a frame (:mod:`hud_gym.evaluation.frames`).

- The first frame from the parent is ``{"sys_path": [...]}``: the worker can then import the
  modules the parent imports functions from. Once it has imported :mod:`hud_gym.evaluation`, the
  worker sends one byte, ``READY``.
- Each request is ``(module, qualname, args, kwargs, context)``; the answer is ``("ok", result)``
  or ``("error", exception)`` (an exception that cannot be pickled comes back as a
  ``RuntimeError`` naming its type and message).

The worker's stdout is its stderr (a function that prints cannot break the channel), it exits at
the end of its socket (the parent closed it or died) and, on Linux, when its parent dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
import pickle
import signal
import socket
import sys
from typing import Any

from hud_gym.evaluation.frames import READY, frame, read_frame

__all__ = ["main", "serve"]


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (best effort elsewhere)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)


def _resolve(module: str, qualname: str) -> Any:
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _call(request: tuple[str, str, tuple[Any, ...], dict[str, Any], Any]) -> Any:
    module, qualname, args, kwargs, context = request
    result = _resolve(module, qualname)(context, *args, **kwargs)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _picklable_error(exc: BaseException) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001  (any exception a function raises must come back)
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def serve(sock: socket.socket) -> None:
    """Answer requests on ``sock`` until it ends."""
    init = read_frame(sock)
    for entry in reversed(init.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    importlib.import_module("hud_gym.evaluation")  # the response evaluators: warm before saying ready
    sock.sendall(READY)
    while True:
        try:
            request = read_frame(sock)
        except EOFError:
            return
        try:
            answer = ("ok", _call(request))
            data = frame(answer)
        except (Exception, SystemExit) as exc:  # noqa: BLE001  (the function's failure is the caller's to report)
            data = frame(("error", _picklable_error(exc)))
        sock.sendall(data)


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``python -m hud_gym.evaluation.worker FD``."""
    args = sys.argv[1:] if argv is None else argv
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when a worker ends
    os.dup2(2, 1)
    sock = socket.socket(fileno=int(args[0]))
    sock.setblocking(True)
    try:
        serve(sock)
    except (OSError, EOFError):  # the parent closed the socket (it shut the worker down, or died)
        pass
    finally:
        sock.close()


if __name__ == "__main__":
    main()
