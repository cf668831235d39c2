"""Running a test module under an overlay venv's python (``make install`` makes ``.venv-NAME``
with scripts/overlay-venv.sh for packages whose pins the main venv does not take)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def overlay_python(name: str) -> Path | None:
    """The python of ``.venv-NAME`` beside this venv (or in the checkout), if made."""
    venv = Path(sys.prefix)
    for candidate in (venv.parent / f"{venv.name}-{name}", ROOT / f".venv-{name}"):
        if (candidate / "bin" / "python").exists():
            return candidate / "bin" / "python"
    return None


def run_in_overlay(name: str, module: Path, timeout: float) -> str:
    """Run ``module``'s tests except the overlay runner under ``.venv-NAME``: its pytest output
    (asserting it passed)."""
    import pytest

    python = overlay_python(name)
    if python is None:
        pytest.skip(f"no .venv-{name} (make install creates it)")
    result = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module), "-k", "not overlay"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    return result.stdout
