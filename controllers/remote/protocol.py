"""The controller protocol on the wire, version 1: what a hud-gym env and a controller server say
to each other over one WebSocket (``docs/controller-protocol.md`` has the same in prose).

Text messages are JSON objects; binary messages carry screenshots. Every message has ``"v": 1``.
(One module of ~400 lines on purpose: the whole wire format, and its codec, read in one place.)

Requests (client to server) have an ``id`` (an integer in ``0 .. 2**32-1`` chosen by the client,
unique among its requests in flight: the answers may come back in any order) and an ``op``;
those about one env name it with ``env`` (the handle ``open`` returned)::

    {"v": 1, "id": 0, "op": "hello", "token": "..."}                       -> {"server", "gym", "max_message_size"}
    {"v": 1, "id": 1, "op": "open", "gym": "browser", "screen_size": [1280, 720],
     "options": {...}, "frame_format": "raw", "capture_region": null}         -> {"env": "e1"}
    {"v": 1, "id": 2, "op": "start", "env": "e1"}                            -> {}
    {"v": 1, "id": 3, "op": "reset", "env": "e1", "task": {...} | null, "seed": 7} -> {}
    {"v": 1, "id": 4, "op": "setup", "env": "e1", "calls": [FunctionConfig, ...]} -> {"instruction": str | null, "info": {...}}
    {"v": 1, "id": 5, "op": "step", "env": "e1", "action": {"type": "click", ...}} -> {"response": str | null, "info": {}}
    {"v": 1, "id": 6, "op": "observe", "env": "e1"}                          -> {"text", "info", "region", "frame"} + a binary frame
    {"v": 1, "id": 7, "op": "evaluate", "env": "e1", "calls": [...], "final_response": "...",
     "combine": "mean"}                                                      -> {"grade": Grade}
    {"v": 1, "id": 8, "op": "health", "env": "e1"}                           -> {"healthy": bool}
    {"v": 1, "id": 9, "op": "close", "env": "e1"}                            -> {}
    {"v": 1, "id": 10, "op": "ping"}                                         -> {"gym": "browser"}

Answers (server to client)::

    {"v": 1, "id": 6, "ok": true, "result": {...}}
    {"v": 1, "id": 6 | null, "ok": false, "error": {"type": "ActionError", "message": "..."}}

``error.type`` is ``BadRequest`` (the message is malformed: not JSON, unknown op, a field of the
wrong type or too large; the message names the field), ``Unauthorized``, ``TooLarge``, ``Busy``,
``UnknownEnv``, or the name of the exception the operation raised (``ActionError``,
``ControllerError``, ``SetupError``, ``UnknownFunctionError``, ``FunctionArgumentError``, ...).
A protocol error never closes the connection, except before a successful ``hello``.

Authentication: the first message must be ``hello`` with the server's token (or the WebSocket
handshake carries ``Authorization: Bearer <token>``, and then ``hello`` may omit it). Anything
else gets an ``Unauthorized`` error and the connection is closed with code
:data:`CLOSE_UNAUTHORIZED` (4401); a wrong ``Authorization`` header is refused with HTTP 401.

Screenshots: the answer to ``observe`` is preceded by one binary message for the same request id:
a :data:`FRAME_HEADER` (16 bytes, big-endian: magic ``b"HG"``, version, format, request id,
width, height, payload size) then the payload: ``raw`` (``height * width * 3`` RGB bytes, the
default: no encode or decode anywhere), ``jpeg``, ``png``, or ``shm`` (the UTF-8 path of a file
in ``/dev/shm`` holding the raw pixels, for a server on the same machine: see
:mod:`~hud_gym.controllers.remote.shm`; a server that cannot use it sends ``raw``).

Sizes: a text message longer than the server's ``max_message_size`` gets a ``TooLarge`` error;
one longer than four times that closes the connection (code 1009, the WebSocket standard).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from hud_gym.errors import HudGymError

__all__ = [
    "CLOSE_UNAUTHORIZED",
    "FORMATS",
    "FRAME_HEADER",
    "MAX_SCREEN_SIDE",
    "OPS",
    "PROTOCOL_VERSION",
    "ClientRequest",
    "Evaluate",
    "FrameFormat",
    "FrameHeader",
    "Hello",
    "Open",
    "ProtocolError",
    "Reset",
    "Setup",
    "Step",
    "decode_frame",
    "dumps",
    "encode_frame",
    "error_message",
    "ok_message",
    "pack_frame",
    "parse_request",
    "unpack_frame",
]

PROTOCOL_VERSION = 1
"""The version every message carries as ``"v"``."""

CLOSE_UNAUTHORIZED = 4401
"""WebSocket close code for a connection without a valid token."""

MAX_SCREEN_SIDE = 8192
"""The largest screen width or height a client may ask for."""

MAX_REQUEST_ID = 2**32 - 1

FrameFormat = Literal["raw", "jpeg", "png", "shm"]
FORMATS: dict[str, int] = {"raw": 0, "jpeg": 1, "png": 2, "shm": 3}
"""Frame format names and their code in the binary header."""
_FORMAT_NAMES = {code: name for name, code in FORMATS.items()}

FRAME_HEADER = struct.Struct(">2sBBIHHI")
"""Binary frame header: magic ``b"HG"``, protocol version, format code, request id, width,
height, payload size (16 bytes, big-endian)."""
_MAGIC = b"HG"

EnvId = Annotated[str, Field(min_length=1, max_length=64)]
RequestId = Annotated[int, Field(ge=0, le=MAX_REQUEST_ID)]
Side = Annotated[int, Field(ge=1, le=MAX_SCREEN_SIDE)]


class ProtocolError(HudGymError, ValueError):
    """A message that does not follow the protocol; ``request_id`` when it could be read."""

    def __init__(self, message: str, request_id: int | None = None, error_type: str = "BadRequest") -> None:
        super().__init__(message)
        self.request_id = request_id
        self.error_type = error_type


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    v: Literal[1]
    id: RequestId


class _EnvRequest(_Request):
    env: EnvId


class Hello(_Request):
    """Authenticate (``token`` may be omitted when the handshake's header carried it)."""

    op: Literal["hello"]
    token: Annotated[str, Field(max_length=1024)] | None = None


class Ping(_Request):
    """Is the server there (and which gym does it serve)?"""

    op: Literal["ping"]


class Open(_Request):
    """Create a controller (not started) and get its env handle."""

    op: Literal["open"]
    gym: Annotated[str, Field(max_length=32)]
    screen_size: Annotated[list[Side], Field(min_length=2, max_length=2)] = Field(default_factory=lambda: [1280, 720])
    options: dict[str, Any] = Field(default_factory=dict)
    frame_format: FrameFormat = "raw"
    jpeg_quality: Annotated[int, Field(ge=1, le=100)] = 90
    capture_region: (
        Annotated[list[Annotated[int, Field(ge=0, le=MAX_SCREEN_SIDE)]], Field(min_length=4, max_length=4)] | None
    ) = None


class Start(_EnvRequest):
    """``Controller.start``."""

    op: Literal["start"]


class Reset(_EnvRequest):
    """``Controller.reset`` with a task (``Task`` JSON) and a seed."""

    op: Literal["reset"]
    task: dict[str, Any] | None = None
    seed: int | None = None


class Setup(_EnvRequest):
    """Run the task's setup calls (``FunctionConfig`` JSON) on the server."""

    op: Literal["setup"]
    calls: Annotated[list[dict[str, Any]], Field(max_length=1000)] = Field(default_factory=list)


class Step(_EnvRequest):
    """``Controller.step`` with one CLA action (JSON)."""

    op: Literal["step"]
    action: dict[str, Any]


class Observe(_EnvRequest):
    """``Controller.observe``: the answer comes with a binary frame."""

    op: Literal["observe"]


class Evaluate(_EnvRequest):
    """Run evaluate calls with the agent's final response; the answer holds the ``Grade``."""

    op: Literal["evaluate"]
    calls: Annotated[list[dict[str, Any]], Field(max_length=1000)] = Field(default_factory=list)
    final_response: str | None = None
    combine: Literal["mean", "min", "max", "product"] = "mean"


class Health(_EnvRequest):
    """``Controller.health``."""

    op: Literal["health"]


class Close(_EnvRequest):
    """``Controller.close``; the handle is gone afterwards."""

    op: Literal["close"]


ClientRequest = Annotated[
    Hello | Ping | Open | Start | Reset | Setup | Step | Observe | Evaluate | Health | Close,
    Field(discriminator="op"),
]
_REQUEST = TypeAdapter(ClientRequest)
OPS: tuple[str, ...] = (
    "hello",
    "ping",
    "open",
    "start",
    "reset",
    "setup",
    "step",
    "observe",
    "evaluate",
    "health",
    "close",
)
"""Every op a client may send."""


def _describe(error: ValidationError) -> str:
    parts = []
    for err in error.errors(include_url=False)[:3]:
        loc = ".".join(str(p) for p in err["loc"][1:]) or "request"  # [0] is the op tag
        parts.append(f"field '{loc}': {err['msg']}")
    return "; ".join(parts)


def parse_request(message: str | bytes) -> ClientRequest:
    """Validate one client message.

    Raises:
        ProtocolError: the message is not a request of this protocol; the text names the problem.
    """
    if isinstance(message, (bytes, bytearray, memoryview)):
        raise ProtocolError("binary messages are not accepted from clients; send JSON text")
    try:
        data = json.loads(message)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"malformed JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"a request must be a JSON object, got {type(data).__name__}")
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int) or not 0 <= request_id <= MAX_REQUEST_ID:
        raise ProtocolError(f"field 'id' must be an integer in 0..{MAX_REQUEST_ID}, got {_short(request_id)}")
    if data.get("v") != PROTOCOL_VERSION:
        raise ProtocolError(
            f"unsupported protocol version {_short(data.get('v'))}; this server speaks v{PROTOCOL_VERSION}", request_id
        )
    op = data.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise ProtocolError(f"unknown op {_short(op)}; known ops: {', '.join(OPS)}", request_id)
    try:
        return _REQUEST.validate_python(data)
    except ValidationError as exc:
        raise ProtocolError(f"invalid {op!r} request: {_describe(exc)}", request_id) from None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Path):
        return str(value)
    return repr(value)


def dumps(data: dict[str, Any]) -> str:
    """JSON text of a message; values JSON cannot hold (numpy numbers, paths, ...) are converted."""
    return json.dumps(data, default=_jsonable, separators=(",", ":"))


def ok_message(request_id: int, result: dict[str, Any]) -> str:
    """A successful answer."""
    return dumps({"v": PROTOCOL_VERSION, "id": request_id, "ok": True, "result": result})


def error_message(request_id: int | None, error_type: str, message: str) -> str:
    """An error frame."""
    return dumps(
        {"v": PROTOCOL_VERSION, "id": request_id, "ok": False, "error": {"type": error_type, "message": message}}
    )


@dataclass(frozen=True)
class FrameHeader:
    """The header of a binary screenshot message."""

    request_id: int
    format: FrameFormat
    width: int
    height: int
    size: int


def pack_frame(
    request_id: int, frame_format: FrameFormat, width: int, height: int, payload: bytes | memoryview
) -> bytes:
    """One binary message: :data:`FRAME_HEADER` then ``payload``."""
    header = FRAME_HEADER.pack(_MAGIC, PROTOCOL_VERSION, FORMATS[frame_format], request_id, width, height, len(payload))
    return header + payload


def unpack_frame(message: bytes) -> tuple[FrameHeader, memoryview]:
    """Split a binary message into its header and payload (no copy).

    Raises:
        ProtocolError: not a frame of this protocol, or a payload of the wrong size.
    """
    if len(message) < FRAME_HEADER.size:
        raise ProtocolError(f"a binary frame needs a {FRAME_HEADER.size}-byte header, got {len(message)} bytes")
    magic, version, code, request_id, width, height, size = FRAME_HEADER.unpack_from(message)
    if magic != _MAGIC or version != PROTOCOL_VERSION or code not in _FORMAT_NAMES:
        raise ProtocolError(
            f"not a v{PROTOCOL_VERSION} hud-gym frame (magic {magic!r}, version {version}, format {code})"
        )
    payload = memoryview(message)[FRAME_HEADER.size :]
    if len(payload) != size:
        raise ProtocolError(f"frame {request_id}: header says {size} bytes, got {len(payload)}", request_id)
    return FrameHeader(request_id, _FORMAT_NAMES[code], width, height, size), payload  # type: ignore[arg-type]


def encode_frame(
    screenshot: np.ndarray, frame_format: FrameFormat, jpeg_quality: int = 90
) -> tuple[int, int, bytes | memoryview]:
    """``(width, height, payload)`` of an ``(H, W, 3)`` uint8 screenshot in ``frame_format``."""
    pixels = np.asarray(screenshot)
    if pixels.ndim != 3 or pixels.shape[2] < 3:
        raise ValueError(f"a screenshot must be (H, W, 3), got shape {pixels.shape}")
    height, width = pixels.shape[:2]
    pixels = np.ascontiguousarray(pixels[..., :3], dtype=np.uint8)
    if frame_format == "raw":
        return width, height, pixels.data.cast("B")
    if frame_format == "jpeg":
        import simplejpeg

        return width, height, simplejpeg.encode_jpeg(pixels, quality=jpeg_quality, colorspace="RGB")
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", compress_level=1)
    return width, height, buffer.getvalue()


def decode_frame(header: FrameHeader, payload: memoryview | bytes) -> np.ndarray:
    """The ``(height, width, 3)`` uint8 pixels of a frame (``raw``: a read-only view, no copy).

    Raises:
        ProtocolError: the payload does not match the header.
    """
    if header.format == "shm":
        raise ProtocolError("a shm frame is read with hud_gym.controllers.remote.shm.SharedFrameReader")
    if header.format == "raw":
        expected = header.width * header.height * 3
        if len(payload) != expected:
            raise ProtocolError(
                f"raw frame of {header.width}x{header.height} needs {expected} bytes, got {len(payload)}"
            )
        return np.frombuffer(payload, dtype=np.uint8).reshape(header.height, header.width, 3)
    if header.format == "jpeg":
        import simplejpeg

        pixels = simplejpeg.decode_jpeg(bytes(payload), colorspace="RGB")
    else:
        import io

        from PIL import Image

        with Image.open(io.BytesIO(bytes(payload))) as image:
            pixels = np.asarray(image.convert("RGB"))
    if pixels.shape[:2] != (header.height, header.width):
        raise ProtocolError(
            f"frame decodes to {pixels.shape[1]}x{pixels.shape[0]}, header says {header.width}x{header.height}"
        )
    return pixels
