"""``hud-gym serve --protocol hud TASKSET``: a task set served on HUD 0.6's control channel.

HUD's own client (``hud.eval.runtime.Runtime("tcp://127.0.0.1:PORT")``, ``task.run(agent,
runtime=...)``) drives it unchanged: ``tasks.list`` lists the task set, ``tasks.start`` resets a
session's env on a task, the agent acts through the ``mcp`` capability (:mod:`.mcp_tools`, reached
through ``tunnel.open`` on the control port), and ``tasks.grade`` grades with the task's evaluator
(:mod:`.episodes`). Once it accepts connections the server prints ``HUD_SERVE_PORT=<port>``, the
line HUD's process runtimes read.

Trust: HUD's control channel has no credential, so the server binds loopback only and answers only
connections from its own user (:mod:`.peers`); each session's MCP tools need that session's bearer
token. Env options are the operator's (``--option KEY=VALUE``); a client chooses a task and its seed,
nothing else. Frames are bounded (16 MiB), sessions too (:mod:`.sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import signal
import socket
import sys
from typing import Any

import uvicorn

from hud_gym.protocols.hud_control.catalog import TaskCatalog
from hud_gym.protocols.hud_control.channel import ControlConnection
from hud_gym.protocols.hud_control.frames import FrameError, FrameTooLargeError, encode_frame, error, read_frame
from hud_gym.protocols.hud_control.mcp_tools import McpTools
from hud_gym.protocols.hud_control.peers import peer_uid
from hud_gym.protocols.hud_control.sessions import DEFAULT_MAX_SESSIONS, Session, SessionTable
from hud_gym.protocols.hud_control.tunnel import open_tunnel

__all__ = ["MAX_CONNECTIONS", "PORT_ANNOUNCEMENT", "HudControlServer", "check_loopback", "serve"]

PORT_ANNOUNCEMENT = "HUD_SERVE_PORT="
"""The line (then the port) a serving process prints once its control channel accepts connections."""
MAX_CONNECTIONS = 64
"""Open connections (control and tunnels) answered at once; more are closed at once."""

logger = logging.getLogger("hud_gym.protocols.hud_control")


class _Uvicorn(uvicorn.Server):
    """uvicorn without its signal handlers (the control server owns the process's signals)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


def check_loopback(host: str) -> None:
    """Refuse a non-loopback ``host``: HUD's control channel has no credential of its own.

    Raises:
        ValueError: ``host`` is not a loopback address.
    """
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(
            f"--host {host}: HUD's control channel carries no credential, so it is served on loopback only "
            "(reach it from another machine through an SSH tunnel)"
        )


class HudControlServer:
    """The control channel of one task set; see the module docstring."""

    def __init__(
        self,
        catalog: TaskCatalog,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        env_options: dict[str, Any] | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        check_loopback(host)
        self.catalog = catalog
        self.host, self.port = host, port
        self.env_options = dict(env_options or {})
        self.sessions = SessionTable(max_sessions)
        self.tools = McpTools(self.sessions)
        self._stack = contextlib.AsyncExitStack()
        self._control: asyncio.Server | None = None
        self._http: _Uvicorn | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._mcp_port = 0

    def manifest(self, session: Session) -> dict[str, Any]:
        """A session's ``hello`` result: its id, the env, the bindings (with its own token)."""
        from hud_gym import __version__

        tools = {
            "name": "tools",
            "protocol": "mcp/2025-11-25",
            "url": f"http://127.0.0.1:{self._mcp_port}/mcp",
            "params": {"transport": "streamable-http", "auth_token": session.token},
        }
        return {
            "session_id": session.id,
            "env": {"name": f"hud-gym/{self.catalog.name}", "version": __version__},
            "bindings": [tools],
        }

    async def start(self) -> int:
        """Start the MCP tools and the control channel; return the control port."""
        await self._stack.enter_async_context(self.tools.run())
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._mcp_port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.tools.asgi, interface="asgi3", lifespan="off", log_level="warning", access_log=False
        )
        self._http = _Uvicorn(config)
        self._spawn(self._http.serve(sockets=[sock]))
        while not self._http.started:
            await asyncio.sleep(0.02)
        self._control = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._control.sockets[0].getsockname()[1]
        self._spawn(self._reap())
        return self.port

    async def stop(self) -> None:
        """Close every connection and session, then stop listening."""
        if self._control is not None:
            self._control.close()
        if self._http is not None:
            self._http.should_exit = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.sessions.close_all()
        await self._stack.aclose()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(30)
            await self.sessions.expire()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        try:
            peer, local = writer.get_extra_info("peername"), writer.get_extra_info("sockname")
            if len(self._tasks) > MAX_CONNECTIONS + 2 or peer_uid(peer, local) != os.getuid():
                return
            await self._serve_connection(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            first = await self._first_frame(reader, writer)
            if first is None:
                return
            if first.get("method") == "tunnel.open":
                await open_tunnel(first, {"tools": ("127.0.0.1", self._mcp_port)}, reader, writer)
                return
            connection = ControlConnection(self.catalog, self.sessions, self.manifest, self.env_options, writer)
            await connection.run(first, reader)
        except FrameTooLargeError as exc:
            writer.write(encode_frame(error(None, -32000, str(exc))))
            await writer.drain()

    @staticmethod
    async def _first_frame(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> dict[str, Any] | None:
        """The first JSON frame (a line that is not one gets a parse error and the next is read)."""
        while True:
            try:
                return await read_frame(reader)
            except FrameError as exc:
                writer.write(encode_frame(error(None, -32700, str(exc))))
                await writer.drain()


def serve(taskset: str, host: str = "127.0.0.1", port: int = 0, env_options: dict[str, Any] | None = None) -> None:
    """Serve ``taskset`` until SIGINT or SIGTERM (blocking; from the main thread).

    Raises:
        ValueError: a non-loopback host, or a task set that cannot be loaded.
        OSError: the address cannot be bound.
    """
    check_loopback(host)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(message)s")
    catalog = TaskCatalog.load(taskset)
    asyncio.run(_serve(HudControlServer(catalog, host=host, port=port, env_options=env_options)))


async def _serve(server: HudControlServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        port = await server.start()
        print(
            f"hud-gym: task set {server.catalog.name!r} on HUD's control channel tcp://{server.host}:{port}", flush=True
        )
        print(f"{PORT_ANNOUNCEMENT}{port}", flush=True)
        await stop.wait()
    finally:
        await server.stop()
