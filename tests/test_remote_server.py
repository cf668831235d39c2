"""The controller server on real sockets: token auth, size caps, protocol errors, a hypothesis fuzz,
multiplexed envs, frame formats, the option policy and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from hud_gym.controllers.qa.controller import render_page
from hud_gym.controllers.remote.protocol import OPS, FrameHeader, decode_frame, unpack_frame
from hud_gym.controllers.remote.server import READY_PREFIX, TOKEN_ENV_VAR, ControllerServer
from hud_gym.controllers.remote.shm import SharedFrameReader
from hud_gym.core.env import format_prompt
from hud_gym.core.loop import get_loop_thread
from hud_gym.task import Task

TOKEN = "test-token-0123456789"
SOFT_CAP = 64 * 1024


def _connect(url: str, **kwargs: Any) -> ClientConnection:
    return connect(url, compression=None, proxy=None, open_timeout=10, max_size=2**26, legacy=True, **kwargs)


class Client:
    """A bare protocol client: numbered requests, answers read back in order (frames kept)."""

    def __init__(self, url: str, token: str | None = TOKEN, **kwargs: Any) -> None:
        self.ws = _connect(url, **kwargs)
        self.next_id = 1
        self.frames: dict[int, tuple[FrameHeader, memoryview]] = {}
        if token is not None:
            reply = self.request("hello", token=token)
            assert reply["ok"], reply

    def send(self, op: str, **fields: Any) -> int:
        request_id = self.next_id
        self.next_id += 1
        self.ws.send(json.dumps({"v": 1, "id": request_id, "op": op, **fields}))
        return request_id

    def reply(self, timeout: float = 10) -> dict[str, Any]:
        """The next text answer (binary frames before it are kept in :attr:`frames`)."""
        while True:
            message = self.ws.recv(timeout=timeout)
            if isinstance(message, bytes):
                header, payload = unpack_frame(message)
                self.frames[header.request_id] = (header, payload)
                continue
            data = json.loads(message)
            assert data["v"] == 1 and isinstance(data["ok"], bool), data
            return data

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        request_id = self.send(op, **fields)
        reply = self.reply()
        assert reply["id"] == request_id, reply
        return reply

    def ok(self, op: str, **fields: Any) -> dict[str, Any]:
        reply = self.request(op, **fields)
        assert reply["ok"], reply
        return reply["result"]

    def close(self) -> None:
        self.ws.close()


def _start(gym: str = "qa", **kwargs: Any) -> ControllerServer:
    server = ControllerServer(gym, port=0, token=TOKEN, max_message_size=SOFT_CAP, **kwargs)
    get_loop_thread().run(server.start())
    return server


@pytest.fixture
def qa_server() -> Iterator[ControllerServer]:
    """A QA controller server on the hud-gym loop thread, on a free loopback port."""
    server = _start("qa", hello_timeout=3.0)
    yield server
    get_loop_thread().run(server.stop(), timeout=30)


def _closed_code(ws: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed) as caught:
        while True:
            ws.recv(timeout=10)
    return caught.value.rcvd.code if caught.value.rcvd else None


# ----------------------------------------------------------------------------- auth


def test_binds_loopback_by_default(qa_server: ControllerServer) -> None:
    assert qa_server.url.startswith("ws://127.0.0.1:")


def test_the_right_token_is_accepted(qa_server: ControllerServer) -> None:
    client = Client(qa_server.url, token=None)
    reply = client.request("hello", token=TOKEN)
    assert reply["ok"] and reply["result"]["gym"] == "qa" and reply["result"]["v"] == 1
    assert client.ok("ping")["gym"] == "qa"
    client.close()


@pytest.mark.parametrize("token", [None, "wrong-token", ""])
def test_a_missing_or_wrong_token_is_rejected(qa_server: ControllerServer, token: str | None) -> None:
    client = Client(qa_server.url, token=None)
    fields = {} if token is None else {"token": token}
    reply = client.request("hello", **fields)
    assert not reply["ok"] and reply["error"]["type"] == "Unauthorized"
    assert ("missing" if token is None else "invalid") in reply["error"]["message"]
    assert _closed_code(client.ws) == 4401


def test_anything_before_hello_is_rejected(qa_server: ControllerServer) -> None:
    for message in ('{"v": 1, "id": 1, "op": "ping"}', "not json", b"\x00binary"):
        ws = _connect(qa_server.url)
        ws.send(message)
        reply = json.loads(ws.recv(timeout=10))
        assert reply["ok"] is False and reply["error"]["type"] == "Unauthorized"
        assert _closed_code(ws) == 4401


def test_a_silent_client_is_dropped(qa_server: ControllerServer) -> None:
    ws = _connect(qa_server.url)
    reply = json.loads(ws.recv(timeout=10))  # after the server's 3 s hello timeout
    assert reply["error"]["type"] == "Unauthorized" and "no hello" in reply["error"]["message"]
    assert _closed_code(ws) == 4401


def test_authorization_header(qa_server: ControllerServer) -> None:
    with pytest.raises(InvalidStatus) as caught:
        _connect(qa_server.url, additional_headers={"Authorization": "Bearer wrong"})
    assert caught.value.response.status_code == 401
    client = Client(qa_server.url, token=None, additional_headers={"Authorization": f"Bearer {TOKEN}"})
    assert client.request("hello")["ok"]  # the header authenticated: hello needs no token
    assert client.ok("ping")["envs"] == 0
    client.close()


# ----------------------------------------------------------------------------- sizes and errors


def test_size_cap(qa_server: ControllerServer) -> None:
    client = Client(qa_server.url)
    big = json.dumps({"v": 1, "id": 5, "op": "ping", "pad": "x" * (SOFT_CAP + 10)})
    client.ws.send(big)
    reply = client.reply()
    assert reply["error"]["type"] == "TooLarge" and str(SOFT_CAP) in reply["error"]["message"]
    assert client.ok("ping")["gym"] == "qa"  # the connection keeps serving
    client.ws.send("x" * (4 * SOFT_CAP + 1))  # past the hard cap: the WebSocket standard's close
    assert _closed_code(client.ws) == 1009
    other = Client(qa_server.url)  # the server keeps serving
    assert other.ok("ping")["gym"] == "qa"
    other.close()


@pytest.mark.parametrize(
    ("message", "error_type", "names"),
    [
        ("{not json", "BadRequest", "malformed JSON"),
        ("[1, 2]", "BadRequest", "JSON object"),
        ('{"v": 1, "op": "ping"}', "BadRequest", "'id'"),
        ('{"v": 1, "id": -1, "op": "ping"}', "BadRequest", "'id'"),
        ('{"v": 2, "id": 1, "op": "ping"}', "BadRequest", "version 2"),
        ('{"v": 1, "id": 1, "op": "explode"}', "BadRequest", "unknown op 'explode'"),
        ('{"v": 1, "id": 1, "op": "reset", "env": "e1", "seed": "seven"}', "BadRequest", "field 'seed'"),
        ('{"v": 1, "id": 1, "op": "open", "gym": "qa", "screen_size": [100000, 5]}', "BadRequest", "screen_size"),
        ('{"v": 1, "id": 1, "op": "open", "gym": "qa", "surprise": 1}', "BadRequest", "surprise"),
        ('{"v": 1, "id": 1, "op": "open", "gym": "browser"}', "BadRequest", "serves the 'qa' gym"),
        ('{"v": 1, "id": 1, "op": "open", "gym": "qa", "options": {"headless": true}}', "BadRequest", "headless"),
        ('{"v": 1, "id": 1, "op": "step", "env": "e999", "action": {}}', "UnknownEnv", "e999"),
        ('{"v": 1, "id": 1, "op": "hello", "token": "x"}', "BadRequest", "already"),
    ],
)
def test_protocol_errors_name_the_problem(
    qa_server: ControllerServer, message: str, error_type: str, names: str
) -> None:
    client = Client(qa_server.url)
    client.ws.send(message)
    reply = client.reply()
    assert reply["ok"] is False and reply["error"]["type"] == error_type, reply
    assert names in reply["error"]["message"], reply
    assert client.ok("ping")["gym"] == "qa"
    client.close()


def test_binary_messages_from_clients_are_refused(qa_server: ControllerServer) -> None:
    client = Client(qa_server.url)
    client.ws.send(b"HG\x01\x00")
    reply = client.reply()
    assert reply["error"]["type"] == "BadRequest" and "binary" in reply["error"]["message"]
    client.close()


_ENV_IDS = st.text(max_size=8).filter(lambda s: not (s.startswith("e") and s[1:].isdigit()))
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
_REQUESTS = st.fixed_dictionaries(
    {
        "v": st.sampled_from([1, 1, 1, 0, "1", None]),
        "id": st.integers(-5, 2**33) | _JSON,
        "op": st.sampled_from([*OPS, "", "nope"]) | st.text(max_size=6),
    },
    optional={
        "env": _ENV_IDS | _JSON,
        "gym": st.sampled_from(["qa", "browser", "x"]) | _JSON,
        "screen_size": st.lists(st.integers(-10, 10**6), max_size=3) | _JSON,
        "options": _JSON,
        "task": _JSON,
        "seed": _JSON,
        "action": _JSON,
        "calls": _JSON,
        "token": _JSON,
        "frame_format": _JSON,
        "combine": _JSON,
        "extra": _JSON,
    },
)
_MESSAGES = st.text(max_size=300) | st.binary(max_size=300) | _JSON.map(json.dumps) | _REQUESTS.map(json.dumps)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_fuzz_the_server_keeps_serving(qa_server: ControllerServer) -> None:
    client = Client(qa_server.url)

    @settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(message=_MESSAGES)
    def one(message: str | bytes) -> None:
        client.ws.send(message)
        reply = client.reply()
        if not reply["ok"]:
            assert isinstance(reply["error"]["type"], str) and isinstance(reply["error"]["message"], str)
            assert reply["error"]["type"] != "Unauthorized"

    one()
    # A valid episode still works on the same connection, and on a new one.
    for c in (client, Client(qa_server.url)):
        env = c.ok("open", gym="qa", screen_size=[320, 200])["env"]
        c.ok("start", env=env)
        c.ok("reset", env=env, task=Task(prompt="2+2?", target="4").to_dict(), seed=1)
        request_id = c.send("observe", env=env)
        assert c.reply()["ok"] and c.frames[request_id][0].width == 320
        c.ok("close", env=env)
        c.close()


# ----------------------------------------------------------------------------- operations


def test_a_qa_episode_over_the_protocol(qa_server: ControllerServer) -> None:
    client = Client(qa_server.url)
    task = Task(
        prompt="Capital of France?",
        setup=[("show_passage", "Paris is in France.")],
        evaluate=("response_includes", "Paris"),
        gym="qa",
    )
    env = client.ok("open", gym="qa", screen_size=[400, 300])["env"]
    client.ok("start", env=env)
    client.ok("reset", env=env, task=task.to_dict(), seed=3)
    assert client.ok("setup", env=env, calls=[c.model_dump(mode="json") for c in task.setup or []]) == {
        "instruction": None,
        "info": {},
    }
    step = client.ok("step", env=env, action={"type": "type", "text": "Par"})
    assert step == {"response": None, "info": {}}
    request_id = client.send("observe", env=env)
    reply = client.reply()
    assert reply["id"] == request_id and reply["ok"]
    header, payload = client.frames[request_id]
    assert (header.format, header.width, header.height, header.size) == ("raw", 400, 300, 400 * 300 * 3)
    pixels = decode_frame(header, payload)
    expected = render_page(400, 300, format_prompt(task), "Paris is in France.", "Par")
    np.testing.assert_array_equal(pixels, expected)
    assert "Answer so far: Par" in reply["result"]["text"]
    grade = client.ok(
        "evaluate",
        env=env,
        calls=[c.model_dump(mode="json") for c in task.evaluate or []],
        final_response="Paris",
        combine="mean",
    )["grade"]
    assert grade["reward"] == 1.0 and grade["is_error"] is False
    assert client.ok("health", env=env) == {"healthy": True}
    bad = client.request("step", env=env, action={"type": "custom", "action": "explode"})
    assert bad["error"]["type"] == "ActionError" and "explode" in bad["error"]["message"]
    unknown = client.request("setup", env=env, calls=[{"function": "no_such_function"}])
    assert unknown["error"]["type"] == "UnknownFunctionError"
    client.ok("close", env=env)
    assert client.request("health", env=env)["error"]["type"] == "UnknownEnv"
    client.close()


def test_envs_are_multiplexed_over_one_connection(qa_server: ControllerServer) -> None:
    client = Client(qa_server.url)
    envs = [client.ok("open", gym="qa", screen_size=[200, 100])["env"] for _ in range(3)]
    assert len(set(envs)) == 3
    for env in envs:
        client.ok("start", env=env)
        client.ok("reset", env=env, task=None, seed=0)
    # Requests of every env in flight at once, answered by id.
    sent = {client.send("step", env=env, action={"type": "type", "text": env}): env for env in envs}
    sent.update({client.send("observe", env=env): env for env in envs})
    replies = {r["id"]: r for r in (client.reply() for _ in sent)}
    assert set(replies) == set(sent)
    for request_id, env in sent.items():
        assert replies[request_id]["ok"]
        if "text" in replies[request_id]["result"]:
            assert replies[request_id]["result"]["text"] == f"Answer so far: {env}"
            assert client.frames[request_id][0].width == 200
    assert client.ok("ping")["envs"] == 3
    client.close()


@pytest.mark.parametrize("frame_format", ["jpeg", "png"])
def test_encoded_frames(qa_server: ControllerServer, frame_format: str) -> None:
    client = Client(qa_server.url)
    env = client.ok("open", gym="qa", screen_size=[320, 240], frame_format=frame_format)["env"]
    client.ok("start", env=env)
    client.ok("reset", env=env, task=Task(prompt="Q").to_dict(), seed=0)
    request_id = client.send("observe", env=env)
    assert client.reply()["ok"]
    header, payload = client.frames[request_id]
    assert header.format == frame_format and header.size < 320 * 240 * 3
    pixels = decode_frame(header, payload)
    expected = render_page(320, 240, "Q", "", "").astype(int)
    assert pixels.shape == (240, 320, 3)
    assert np.abs(pixels.astype(int) - expected).mean() < (0.5 if frame_format == "png" else 8)
    client.close()


def test_host_options_need_a_trusting_server() -> None:
    server = _start("browser")  # nothing launches: open is refused before a controller exists
    try:
        client = Client(server.url)
        reply = client.request("open", gym="browser", options={"executable_path": "/bin/sh", "launch_args": ["--x"]})
        assert reply["error"]["type"] == "Forbidden"
        assert "executable_path" in reply["error"]["message"] and "--trust-client-options" in reply["error"]["message"]
        reply = client.request("open", gym="browser", options={"jpeg_quality": "high"})
        assert reply["error"]["type"] == "BadRequest" and "jpeg_quality" in reply["error"]["message"]
        reply = client.request("open", gym="browser", options={"colour": "blue"})
        assert "colour" in reply["error"]["message"] and "known options" in reply["error"]["message"]
        assert client.ok("open", gym="browser", options={"jpeg_quality": 70, "headless": True})["env"]
        client.close()
    finally:
        get_loop_thread().run(server.stop(), timeout=30)


def test_a_headed_window_on_the_servers_display_needs_a_trusting_server() -> None:
    """``headless=False`` opens Chromium's windows on the server's own display (issue 23): refused
    unless the server trusts its clients; a trusting server takes it."""
    for trusted in (False, True):
        server = _start("browser", trust_client_options=trusted)  # nothing launches before `start`
        try:
            client = Client(server.url)
            reply = client.request("open", gym="browser", options={"headless": False})
            if trusted:
                assert reply["ok"], reply
            else:
                assert reply["error"]["type"] == "Forbidden"
                assert "headless" in reply["error"]["message"] and "--trust-client-options" in reply["error"]["message"]
            client.close()
        finally:
            get_loop_thread().run(server.stop(), timeout=30)


def test_command_line_generates_and_prints_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV_VAR}
    process = subprocess.Popen(
        [sys.executable, "-m", "hud_gym.controllers.remote.server", "qa", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        token = url = None
        for line in process.stdout:
            if line.startswith("token: "):
                token = line.split(": ", 1)[1].strip()
            if line.startswith(READY_PREFIX):
                url = line[len(READY_PREFIX) :].strip()
                break
        assert token and url and url.startswith("ws://127.0.0.1:")
        client = Client(url, token=None)
        assert client.request("hello", token="guess")["error"]["type"] == "Unauthorized"
        client = Client(url, token=token)
        assert client.ok("ping")["gym"] == "qa"
        client.close()
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_shared_memory_frames_only_for_trusted_clients() -> None:
    for trusted, expected in ((False, "raw"), (True, "shm")):
        server = _start("qa", trust_client_options=trusted)
        try:
            client = Client(server.url)
            env = client.ok("open", gym="qa", screen_size=[160, 120], frame_format="shm")["env"]
            client.ok("start", env=env)
            client.ok("reset", env=env, task=Task(prompt="Q").to_dict(), seed=0)
            request_id = client.send("observe", env=env)
            assert client.reply()["ok"]
            header, payload = client.frames[request_id]
            assert header.format == expected
            if expected == "shm":
                reader = SharedFrameReader()
                pixels = reader.read(bytes(payload).decode(), header.width, header.height)
                np.testing.assert_array_equal(pixels, render_page(160, 120, "Q", "", ""))
                reader.close()
                with pytest.raises(ValueError, match="not a hud-gym shared frame file"):
                    SharedFrameReader().read("/etc/passwd", 1, 1)
            client.ok("close", env=env)
            client.close()
        finally:
            get_loop_thread().run(server.stop(), timeout=30)
