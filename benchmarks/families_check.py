"""The proof of every task family on 100 seeds (issue 26; ``make bench`` and ``make bench-families``).

Runs ``hud-gym tasksets check KIND --seeds N`` for each kind (``webapps``, ``files``, ``office``):
per family, its oracle on train seeds ``0 .. N-1`` (the difficulty levels in turn) must score 1 on
every one, doing nothing and 15 random actions at most 2%, the reward-hacking scripts 0; the
table printed has the rates and the oracle's mean steps per difficulty. ``make test`` runs the same
check on a few seeds (``tests/suites/*``); this is the long run (hours on 2 cores: run families in
parallel processes with ``--kinds FAMILY`` to spread it).

Run: ``python -m benchmarks.families_check [--kinds webapps,files,office] [--seeds 100]``.
Exits 1 when a family fails.
"""

from __future__ import annotations

import argparse
import sys
import time

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Check each kind (or family) of ``--kinds`` on ``--seeds`` seeds.

    Raises:
        RuntimeError: a family failed (its problems are printed above).
    """
    from hud_gym.cli import main as cli

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="webapps,files,office", help="comma-separated kinds or family names")
    parser.add_argument("--seeds", type=int, default=100, help="seeds per family")
    args = parser.parse_args([] if argv is None and __name__ != "__main__" else argv)
    failed = []
    for kind in args.kinds.split(","):
        started = time.perf_counter()
        code = cli(["tasksets", "check", kind, "--seeds", str(args.seeds)])
        print(f"{kind}: exit {code} ({time.perf_counter() - started:.0f} s)", flush=True)
        if code:
            failed.append(kind)
    if failed:
        raise RuntimeError(f"task families failed the check: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as exc:
        sys.exit(str(exc))
