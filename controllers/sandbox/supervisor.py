"""The process supervisor inside a hud-gym sandbox: starts programs there on the host's request.

Run by the sandbox's own Python (``/usr/bin/python3 -I -S supervisor.py FD [RLIMITS]``; standard
library only, nothing of hud-gym is imported). ``RLIMITS``, JSON: the rlimits every program gets
(``{"as": bytes, "nproc": n, "cpu": seconds}``; see :mod:`.limits`). ``FD`` is a ``SOCK_SEQPACKET`` socket to the host; each
message is one JSON object, file descriptors travel with it (``SCM_RIGHTS``):

- here -> host, once: ``{"op": "ready", "pid": p}`` with a pidfd of this process;
- host -> here: ``{"op": "spawn", "id": n, "argv": [...], "env": {...}, "cwd": "..."}`` with three
  descriptors, the program's stdin, stdout and stderr;
- here -> host: ``{"op": "spawned", "id": n, "pid": p}`` with a pidfd of the program (the host
  reads its host pid from it), or ``{"op": "failed", "id": n, "errno": e, "error": "...",
  "filename": ...}``;
- here -> host: ``{"op": "exit", "pid": p, "returncode": rc}`` when a program started here ends
  (``-signal`` when killed by one).

Programs start in sessions of their own. The supervisor is the sandbox's pid 1 (``bwrap
--as-pid-1``): it reaps orphans too, the sandbox's programs cannot signal it (the kernel keeps
signals from inside a pid namespace away from its init) nor trace it (``PR_SET_DUMPABLE`` 0).
When the host closes the socket the supervisor exits, and the kernel ends every process of the
sandbox (its pid namespace) with it.
"""

import ctypes
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys

MAX_MESSAGE = 1 << 20


def send(sock, message, fds=()):
    socket.send_fds(sock, [json.dumps(message).encode()], list(fds))


def limit(rlimits):
    """The ``preexec_fn`` of a program: the episode's rlimits (none when a cgroup limits it)."""
    names = {"as": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC, "cpu": resource.RLIMIT_CPU}

    def apply():
        for name, value in rlimits.items():
            resource.setrlimit(names[name], (value, value))

    return apply if rlimits else None


def spawn(sock, children, request, fds, rlimits):
    try:
        if len(fds) != 3:
            raise OSError(22, "spawn needs three file descriptors (stdin, stdout, stderr)")
        process = subprocess.Popen(
            request["argv"],
            stdin=fds[0],
            stdout=fds[1],
            stderr=fds[2],
            cwd=request.get("cwd"),
            env=request.get("env"),
            close_fds=True,
            start_new_session=True,
            preexec_fn=limit(rlimits),
        )
    except OSError as exc:
        send(
            sock,
            {
                "op": "failed",
                "id": request.get("id"),
                "errno": exc.errno or 0,
                "error": exc.strerror or str(exc),
                "filename": exc.filename,
            },
        )
        return
    except Exception as exc:  # noqa: BLE001 - a malformed request (bad argv, env, cwd types): answered, not fatal
        send(sock, {"op": "failed", "id": request.get("id"), "errno": 22, "error": f"{type(exc).__name__}: {exc}"})
        return
    finally:
        for fd in fds:
            os.close(fd)
    children[process.pid] = process
    pidfd = os.pidfd_open(process.pid)
    try:
        send(sock, {"op": "spawned", "id": request.get("id"), "pid": process.pid}, [pidfd])
    finally:
        os.close(pidfd)


def reap(sock, children):
    """Reap every ended child (as the sandbox's pid 1 that includes orphans); report ours."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        process = children.pop(pid, None)
        if process is not None:
            process.returncode = os.waitstatus_to_exitcode(status)
            send(sock, {"op": "exit", "pid": pid, "returncode": process.returncode})


def main():
    sock = socket.socket(fileno=int(sys.argv[1]))
    rlimits = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    children = {}
    me = os.pidfd_open(os.getpid())
    send(sock, {"op": "ready", "pid": os.getpid()}, [me])
    os.close(me)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is sock:
                data, fds, _flags, _addr = socket.recv_fds(sock, MAX_MESSAGE, 3)
                if not data:
                    return
                try:
                    request = json.loads(data)
                except ValueError:
                    request = {}
                if request.get("op") == "spawn":
                    spawn(sock, children, request, fds, rlimits)
                else:
                    for fd in fds:
                        os.close(fd)
            else:
                while True:
                    try:
                        if not os.read(wake_read, 512):
                            break
                    except BlockingIOError:
                        break
        reap(sock, children)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, ConnectionResetError):
        pass
