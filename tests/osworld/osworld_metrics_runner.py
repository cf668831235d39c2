"""Runs OSWorld's own metric functions (``desktop-env`` 1.0.2, in the ``.venv-osworld`` overlay venv)
on the cases given as JSON on stdin: ``[{"module", "func", "args", "kwargs"}]``; prints
``[score or {"error"}]`` as JSON. Used by ``test_parity.py``.

``desktop_env.evaluators.metrics``'s ``__init__`` imports every metric module, and those import
what the compared metrics never call (``easyocr``, which pulls torch; ``librosa``; ...): the
package is entered without its ``__init__`` and only the compared modules are imported; ``easyocr``
(imported at the top of ``docs.py``, used only by its OCR metric) is an empty stand-in module.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import sys
import types


def _enter_package() -> None:
    spec = importlib.util.find_spec("desktop_env")
    assert spec is not None and spec.submodule_search_locations, "desktop-env is not installed here"
    root = list(spec.submodule_search_locations)[0]
    for name, path in (
        ("desktop_env", root),
        ("desktop_env.evaluators", f"{root}/evaluators"),
        ("desktop_env.evaluators.metrics", f"{root}/evaluators/metrics"),
    ):
        module = types.ModuleType(name)
        module.__path__ = [path]
        sys.modules[name] = module
    sys.modules.setdefault("easyocr", types.ModuleType("easyocr"))


def main() -> None:
    _enter_package()
    cases = json.load(sys.stdin)
    scores = []
    for case in cases:
        module = importlib.import_module(f"desktop_env.evaluators.metrics.{case['module']}")
        try:
            with contextlib.redirect_stdout(sys.stderr):  # OSWorld's metrics print as they go
                score = getattr(module, case["func"])(*case["args"], **case.get("kwargs", {}))
            scores.append(float(score))
        except Exception as exc:
            scores.append({"error": f"{type(exc).__name__}: {exc}"})
    json.dump(scores, sys.stdout)


if __name__ == "__main__":
    main()
