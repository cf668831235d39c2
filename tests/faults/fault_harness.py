"""The fault-injection suite's harness: seeds, rounds and when faults happen during rollouts.

(The suite's helper modules are imported by name: pytest puts this folder on ``sys.path``.)

- :func:`fault_rng` gives each test its own ``random.Random`` from one printed seed
  (``HUD_GYM_FAULT_SEED`` replays it); :data:`ROUNDS` (``HUD_GYM_FAULT_ROUNDS``) sets the length.
- :class:`FaultThread` injects faults while rollouts run, at seeded moments of their progress.
- :mod:`fault_kills`: what is killed, and which envs each fault hit.
- :mod:`fault_ledger`: what the envs and vector envs returned, and the checks (**an episode saw a
  fault** when the fault hit its env after its reset had completed and a step of it started after
  the killed process was gone: every such step must be a failure, a status in ``FAILED`` with
  reward ``None``/NaN, and so must the episode's trajectory, returned and stored; a fault that
  lands while the episode's last step or its reset is in flight constrains nothing: that step may
  have finished its work before the kill).
- :mod:`fault_processes`: no process the test started is left after ``close()``.
"""

from __future__ import annotations

import os
import random
import threading
import time
import zlib
from collections.abc import Callable
from typing import Any, Self

from fault_kills import Fault

ROUNDS = max(1, int(os.environ.get("HUD_GYM_FAULT_ROUNDS", "1")))
"""Rounds of faults per test: 1 by default (the suite's ~1 minute); a soak sets e.g. 50."""

_BASE_SEED = int(os.environ.get("HUD_GYM_FAULT_SEED", str(random.SystemRandom().randrange(2**31))))


def fault_rng(name: str) -> tuple[int, random.Random]:
    """The seed and generator of test ``name`` (the seed is printed: pytest shows it on failure)."""
    seed = (_BASE_SEED + zlib.crc32(name.encode())) % 2**31 if "HUD_GYM_FAULT_SEED" not in os.environ else _BASE_SEED
    print(f"fault-injection seed of {name}: {seed} (replay: HUD_GYM_FAULT_SEED={seed}, rounds {ROUNDS})")
    return seed, random.Random(seed)


class FaultThread:
    """Injects faults while rollouts run, at seeded moments of their progress: once the policy has
    been called ``trigger`` times (each trigger seeded), either inside that policy call (the
    rollout is between two steps: its next step starts after the fault) or from a thread after a
    seeded delay of up to 0.4 s (the fault lands in whatever the rollouts are doing: steps,
    resets, other policy calls). Wrap the policy with :meth:`policy`. Triggers the rollouts never
    reach are dropped when the block ends."""

    def __init__(self, rng: random.Random, inject: Callable[[], Fault | None], count: int, calls: int) -> None:
        self.pending = sorted(
            (rng.randrange(1, calls + 1), rng.choice(["inline", "thread"]), rng.uniform(0.0, 0.4)) for _ in range(count)
        )
        self.inject = inject
        self.faults: list[Fault] = []
        self.errors: list[BaseException] = []
        self._calls = 0
        self._stopped = False
        self._changed = threading.Condition()
        self._injecting = threading.Lock()  # one fault at a time
        self._thread = threading.Thread(target=self._run, name="fault-thread", daemon=True)

    def policy(self, policy: Callable[..., Any]) -> Callable[..., Any]:
        """``policy``, counting its calls for the triggers (and injecting the inline faults)."""

        def counted(*args: Any) -> Any:
            with self._changed:
                self._calls += 1
                due = [t for t in self.pending if t[0] <= self._calls and t[1] == "inline"]
                for trigger in due:
                    self.pending.remove(trigger)
                self._changed.notify_all()
            for _ in due:
                self._inject()
            return policy(*args)

        return counted

    def _inject(self) -> None:
        with self._injecting:
            if self._stopped or self.errors:
                return
            try:
                fault = self.inject()
            except BaseException as exc:  # raised again when the block ends
                self.errors.append(exc)
                return
            if fault is not None:
                self.faults.append(fault)

    def _next_threaded(self) -> tuple[int, str, float] | None:
        return next((t for t in self.pending if t[1] == "thread"), None)

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(
                    lambda: self._stopped or (t := self._next_threaded()) is None or self._calls >= t[0]
                )
                trigger = self._next_threaded()
                if self._stopped or trigger is None:
                    return
                self.pending.remove(trigger)
            time.sleep(trigger[2])
            self._inject()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify_all()
        self._thread.join(60)
        if self.errors:
            raise self.errors[0]
