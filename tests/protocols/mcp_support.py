"""Helpers of the MCP tests: a hud-gym MCP server started as ``hud-gym serve ... --mcp`` and
driven with the ``mcp`` SDK's own client, over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent


def server_env() -> dict[str, str]:
    """The server's environment: ours, with tests/ importable (``--import failing_functions``)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH", "")]))
    env.pop("HUD_GYM_SERVER_TOKEN", None)
    return env


def serve_args(*args: str) -> list[str]:
    """``python -m hud_gym.cli serve ARGS...``'s arguments after the interpreter."""
    return ["-m", "hud_gym.cli", "serve", *args]


@contextlib.asynccontextmanager
async def stdio_client(*args: str) -> AsyncIterator[Any]:
    """The SDK's client over stdio, on a server it starts with ``serve ARGS --mcp``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=serve_args(*args, "--mcp"), env=server_env())
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


@contextlib.contextmanager
def http_server(tmp_path: Path, *args: str, token: str = "s3cret-token") -> Iterator[str]:
    """A ``serve ARGS --mcp --transport http`` process on a free loopback port: its URL."""
    token_file = tmp_path / "token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    command = [sys.executable, *serve_args(*args, "--mcp", "--transport", "http", "--port", "0")]
    with served_process([*command, "--token-file", str(token_file)], "HUD_GYM_MCP_READY ") as url:
        yield url


@contextlib.contextmanager
def served_process(command: list[str], ready: str, log: Path | None = None) -> Iterator[str]:
    """``command`` (a ``hud-gym serve`` process), until its first stdout line starts with
    ``ready``: yields the rest of that line (the server's URL); terminated on the way out.

    Its stderr goes to the file ``log`` (else an anonymous temporary file), never to a pipe, and
    its stdout is drained after the ready line: a pipe nobody reads fills up (64 KiB) and the
    server then blocks on its next log line.
    """
    with open(log, "w+b") if log else tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=server_env())
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line.startswith(ready):
                process.kill()
                process.wait(timeout=30)
                stderr.seek(0)
                raise AssertionError(
                    f"the server did not start: {line!r} {stderr.read()[-4000:].decode(errors='replace')}"
                )
            threading.Thread(target=process.stdout.read, daemon=True).start()  # the rest, unread but drained
            yield line.split(" ", 1)[1].strip()
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


@contextlib.asynccontextmanager
async def http_client(url: str, token: str | None = "s3cret-token") -> AsyncIterator[Any]:
    """The SDK's client over streamable HTTP, with ``Authorization: Bearer TOKEN``."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client:
            yield client


def report(result: Any) -> dict[str, Any]:
    """The structured report of a tool result (asserting it is not an error and carries a PNG)."""
    assert not result.is_error, result.content
    kinds = [block.type for block in result.content]
    assert kinds == ["text", "image"], kinds
    assert result.content[1].mime_type == "image/png"
    assert json.loads(result.content[0].text) == result.structured_content
    data: dict[str, Any] = result.structured_content
    return data


def error_text(result: Any) -> str:
    """The text of a tool error (asserting it is one)."""
    assert result.is_error, result
    text: str = result.content[0].text
    return text


def taskset_file(tmp_path: Path) -> Path:
    """A QA task set whose tasks grade, fail to grade, and outlive the step's timeout."""
    tasks = [
        {"id": "ok", "prompt": "Capital of France?", "target": "Paris", "gym": "qa"},
        {"id": "raises", "prompt": "Capital of France?", "gym": "qa", "evaluate": [["failing_raises"]]},
        {"id": "sleeps", "prompt": "Capital of France?", "gym": "qa", "evaluate": [["failing_sleeps", 60]]},
    ]
    path = tmp_path / "protocol-tasks.json"
    path.write_text(json.dumps({"id": "protocol-tasks", "tasks": tasks}))
    return path
