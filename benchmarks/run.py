"""Run every benchmark in this folder (``make bench``); each prints its own table."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks


def main() -> int:
    """Import each ``benchmarks/*.py`` module with a ``main()`` and run it."""
    failed = []
    for module_info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if module_info.name in ("run",) or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"benchmarks.{module_info.name}")
        if not hasattr(module, "main"):
            continue
        print(f"\n=== benchmarks/{module_info.name}.py")
        started = time.perf_counter()
        try:
            module.main()
        except Exception as exc:
            print(f"FAILED: {type(exc).__name__}: {exc}")
            failed.append(module_info.name)
        print(f"({time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
