"""Screenshots as image files: JPEG (simplejpeg, quality 85 by default) or PNG (Pillow)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import numpy as np

__all__ = ["ImageFormat", "screenshot_of", "write_image"]

ImageFormat = Literal["jpeg", "png"]

EXTENSIONS: dict[str, str] = {"jpeg": "jpg", "png": "png"}


def screenshot_of(observation: Any) -> np.ndarray | None:
    """The ``(H, W, 3)`` uint8 screenshot of an observation dict, if it has one."""
    screenshot = observation.get("screenshot") if isinstance(observation, dict) else None
    if screenshot is None:
        return None
    array = np.asarray(screenshot)
    if array.ndim != 3 or array.shape[2] < 3 or array.dtype != np.uint8:
        return None
    return array


def write_image(path: Path, array: np.ndarray, image_format: ImageFormat = "jpeg", jpeg_quality: int = 85) -> None:
    """Write ``array`` to ``path`` atomically (a reader never sees half a file; a failed write
    leaves nothing behind)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rgb = np.ascontiguousarray(array[..., :3])
    if image_format not in ("jpeg", "png"):
        raise ValueError(f"image_format must be 'jpeg' or 'png', got {image_format!r}")
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        if image_format == "jpeg":
            import simplejpeg

            partial.write_bytes(simplejpeg.encode_jpeg(rgb, quality=jpeg_quality, colorspace="RGB"))
        else:
            from PIL import Image

            Image.fromarray(rgb).save(partial, format="PNG", compress_level=1)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)  # a half-written file on a full disk would keep its space
        raise
