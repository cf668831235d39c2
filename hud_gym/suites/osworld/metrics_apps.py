"""OSWorld's metric functions over the desktop apps' own settings and documents, with OSWorld's
semantics (``desktop_env/evaluators/metrics/gimp.py`` and ``slides.py`` of OSWorld, Apache-2.0;
the parity is measured by ``tests/osworld/test_parity.py``):

- ``check_config_status``: a line of GIMP's ``gimprc`` (read by the ``gimp_config_file`` getter)
  sets ``rule["key"]`` (a name, or a list of two words) to ``rule["value"]``;
- ``check_transition``: slide ``rules["slide_idx"]`` (from 0) of a ``.pptx`` has a transition
  holding the element ``p:<rules["transition_type"]>`` (LibreOffice writes ``<p:dissolve/>``).

Files come from the desktop, which the agent controls: they are read with a size bound
(:data:`~.metrics_text.MAX_FILE_BYTES`, also for a slide inside the zip).

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "gimprc")
    >>> _ = open(path, "w").write('(theme "Light")\\n')
    >>> check_config_status(path, {"key": "theme", "value": '"Light"'})
    1.0
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Mapping
from typing import Any

from hud_gym.suites.osworld.metrics_text import MAX_FILE_BYTES, read_text

__all__ = ["check_config_status", "check_transition"]

_NAMESPACES = {
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "p": "http://schemas.openxmlformats.org/presentationml/2006/main",
}


def _sets(items: list[str], key: Any, value: Any) -> bool:
    if isinstance(key, str):
        return items[0] == key and items[-1] == value
    if isinstance(key, list) and len(key) == 2:
        return items[0] == key[0] and items[1] == key[1] and items[-1] == value
    return False


def check_config_status(actual_config_path: str | None, rule: Mapping[str, Any]) -> float:
    """1 when a line of the config file (``(key value)``; ``#`` lines and empty lines skipped) has
    ``rule["key"]`` as its first word (or its first two) and ``rule["value"]`` as its last, else 0;
    a missing file (``None``) is 0. A blank line of spaces raises, as OSWorld's (its ``items[0]``)."""
    if actual_config_path is None:
        return 0.0
    for line in read_text(actual_config_path).splitlines(keepends=True):
        if line.startswith("#") or line == "\n":
            continue
        items = line.strip().lstrip("(").rstrip(")\n").split()
        if _sets(items, rule["key"], rule["value"]):
            return 1.0
    return 0.0


def check_transition(pptx_file: str | None, rules: Mapping[str, Any]) -> float:
    """1 when slide ``rules["slide_idx"]`` (from 0) has a ``p:transition`` holding a
    ``p:<rules["transition_type"]>`` element, else 0 (also when the slide does not exist)."""
    slide_name = f"ppt/slides/slide{rules['slide_idx'] + 1}.xml"
    transition_type = rules["transition_type"]
    if pptx_file is None:
        raise TypeError("no presentation (the file is missing)")  # OSWorld's ZipFile(None) raises
    with zipfile.ZipFile(pptx_file) as archive:
        try:
            info = archive.getinfo(slide_name)
        except KeyError:
            return 0.0
        if info.file_size > MAX_FILE_BYTES:
            raise ValueError(f"{slide_name} is larger than {MAX_FILE_BYTES} bytes")
        with archive.open(info) as slide:
            root = ET.fromstring(slide.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES])
    transition = root.find(".//p:transition", _NAMESPACES)
    if transition is None:
        return 0.0
    return float(transition.find(f".//p:{transition_type}", _NAMESPACES) is not None)
