"""Screenshots for the model: any screenshot form to an array, resized to the agent's frame, and
encoded for a provider's request.

An observation's screenshot is an ``(H, W, 3)`` uint8 array; HUD's was a base64 PNG string. Both
are accepted everywhere, as are PIL images and observation dicts or objects with a ``screenshot``.
Encoding uses libjpeg-turbo (``simplejpeg``) for JPEG, the default (a few ms at 1280x720), and
Pillow for PNG (lossless, several times slower); resizing uses OpenCV when installed (see
:func:`resize`).

Example:
    >>> image = encode_image(np.zeros((768, 1024, 3), np.uint8))
    >>> image.media_type, image.width, image.height
    ('image/jpeg', 1024, 768)
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import simplejpeg
from PIL import Image

__all__ = ["EncodedImage", "ImageFormat", "encode_image", "fit", "resize", "to_array", "zoom"]

ImageFormat = Literal["jpeg", "png"]


@dataclass(frozen=True)
class EncodedImage:
    """A screenshot as a provider wants it: base64 data, its media type and its size in pixels."""

    data: str
    media_type: str
    width: int
    height: int

    @property
    def data_url(self) -> str:
        """The image as a ``data:`` URL (OpenAI's ``image_url`` parts)."""
        return f"data:{self.media_type};base64,{self.data}"


def to_array(screenshot: Any) -> np.ndarray:
    """``screenshot`` as an ``(H, W, 3)`` uint8 RGB array.

    Accepts an array (RGB or RGBA), a PIL image, base64 PNG/JPEG text (HUD's ``Observation.screenshot``,
    with or without a ``data:`` prefix), raw image bytes, or an observation (dict or object) with a
    ``screenshot``.

    Raises:
        ValueError: nothing that holds an image.
    """
    if isinstance(screenshot, dict):
        if "screenshot" not in screenshot:
            raise ValueError("the observation has no 'screenshot'")
        screenshot = screenshot["screenshot"]
    elif hasattr(screenshot, "screenshot") and not isinstance(screenshot, (np.ndarray, Image.Image)):
        screenshot = screenshot.screenshot
    if screenshot is None:
        raise ValueError("the observation has no screenshot (None)")
    if isinstance(screenshot, str):
        text = screenshot.split(",", 1)[1] if screenshot.startswith("data:") else screenshot
        try:
            screenshot = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the screenshot text is not base64 image data") from None
    if isinstance(screenshot, (bytes, bytearray)):
        try:
            with Image.open(io.BytesIO(screenshot)) as image:
                return np.asarray(image.convert("RGB"))
        except OSError as exc:
            raise ValueError(f"the screenshot bytes are not an image ({exc})") from None
    if isinstance(screenshot, Image.Image):
        return np.asarray(screenshot.convert("RGB"))
    array = np.asarray(screenshot)
    if array.ndim != 3 or array.shape[2] not in (3, 4) or array.dtype != np.uint8:
        raise ValueError(f"a screenshot array must be (H, W, 3) uint8, got shape {array.shape} {array.dtype}")
    return array if array.shape[2] == 3 else array[..., :3]


def resize(array: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``array`` resized to ``size`` ``(width, height)``; the same array when it already has that
    size. OpenCV's area interpolation when ``opencv-python-headless`` is installed (the
    ``agents`` extra: ~1 ms at 1280x720, 10-30x Pillow), else Pillow's antialiased bilinear (the
    same pixels within 1 level on average)."""
    width, height = size
    if array.shape[1] == width and array.shape[0] == height:
        return array
    cv2 = _cv2()
    if cv2 is not None:
        return cv2.resize(np.ascontiguousarray(array), (width, height), interpolation=cv2.INTER_AREA)
    return np.asarray(Image.fromarray(np.ascontiguousarray(array)).resize((width, height), Image.Resampling.BILINEAR))


@functools.cache
def _cv2() -> Any:
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def zoom(array: np.ndarray, box: tuple[int, int, int, int], size: tuple[int, int]) -> np.ndarray:
    """The region ``box`` ``(x0, y0, x1, y1)`` of ``array`` (clipped to it) resized to ``size``."""
    height, width = array.shape[:2]
    x0, y0 = min(max(box[0], 0), width - 1), min(max(box[1], 0), height - 1)
    x1, y1 = min(max(box[2], x0 + 1), width), min(max(box[3], y0 + 1), height)
    return resize(array[y0:y1, x0:x1], size)


def fit(size: tuple[int, int], frame: tuple[int, int]) -> tuple[int, int]:
    """``size`` scaled (up or down) to fit in ``frame`` with its aspect ratio kept."""
    scale = min(frame[0] / size[0], frame[1] / size[1])
    return max(1, round(size[0] * scale)), max(1, round(size[1] * scale))


def encode_image(array: np.ndarray, image_format: ImageFormat = "jpeg", quality: int = 85) -> EncodedImage:
    """Encode an ``(H, W, 3)`` uint8 array as base64 JPEG (``quality``) or PNG."""
    array = np.ascontiguousarray(array[..., :3])
    height, width = array.shape[:2]
    if image_format == "jpeg":
        data = simplejpeg.encode_jpeg(array, quality=quality, colorspace="RGB")
        media_type = "image/jpeg"
    elif image_format == "png":
        buffer = io.BytesIO()
        Image.fromarray(array).save(buffer, format="PNG", compress_level=1)
        data, media_type = buffer.getvalue(), "image/png"
    else:
        raise ValueError(f"image_format must be 'jpeg' or 'png', got {image_format!r}")
    return EncodedImage(base64.b64encode(data).decode("ascii"), media_type, width, height)
