"""`make check`'s import-cycle gate: the cycles among hud_gym's modules, function-level imports included.

import-linter's layers catch an upward import, not a cycle within a layer, and a cycle hidden in
function-level imports (``capture -> miniwob_dom -> miniwob -> tabs -> state -> capture`` was one)
passes every other gate. This builds grimp's graph of ``hud_gym`` (every import statement, in a
function or not; ``if TYPE_CHECKING:`` imports left out), leaves out the imports of the package
root (``hud_gym/__init__`` wires the layers together) and of a module's own parent packages,
and prints each strongly connected component. It fails on any cycle not in :data:`KNOWN`.

Run from a tree where ``hud_gym.controllers`` and ``hud_gym.wrappers`` resolve (scripts/check.sh
makes one): ``python scripts/import_cycles.py``.
"""

from __future__ import annotations

import sys

import grimp
import networkx

KNOWN: tuple[frozenset[str], ...] = ()
"""Cycles that predate this gate, each to be removed by the work named."""


def import_graph(package: str = "hud_gym") -> dict[str, set[str]]:
    """Module -> the modules it imports (see the module docstring for what is left out)."""
    graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        if module == package:
            continue
        imported = graph.find_modules_directly_imported_by(module)
        edges[module] = {other for other in imported if not module.startswith(other + ".")}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (networkx)."""
    graph = networkx.DiGraph([(module, other) for module, imported in edges.items() for other in imported])
    return [frozenset(c) for c in networkx.strongly_connected_components(graph) if len(c) > 1]


def main() -> int:
    found = cycles(import_graph())
    new = [cycle for cycle in found if cycle not in KNOWN]
    for cycle in found:
        print(("known: " if cycle in KNOWN else "CYCLE: ") + " <-> ".join(sorted(cycle)))
    print(f"{len(found)} import cycle(s), {len(new)} new")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
