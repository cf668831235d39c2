"""A neighbour's steps while another env's episode hogs the machine under its limits, in one run.

Two ``hud/Ubuntu-v0`` envs in this process (640x480, openbox). The *neighbour* steps
(``env.step(MoveAction)``, returning the observation) while the *hog* env's episode runs, in
alternating blocks so machine load hits every variant alike:

- **idle**: the hog's episode runs nothing;
- **spin**: the hog's xterm-less shell spins (``while :; do :; done``) under the default limits
  (one core at once; the CPU budget is lifted for the measurement, so it is not ended early);
- **fork bomb**: a fork bomb held at the default ``pids`` limit (512 processes and threads).

Per variant: the neighbour's median step wall ms and this process's CPU ms per step (the
neighbour's controller, X connection and grabber run here; the hog's programs do not). Ratios to
``idle``; target: the neighbour's step within 1.5x. Run: ``python -m benchmarks.episode_limits
[--rounds N] [--steps N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import psutil

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.envs.ubuntu import UbuntuEnv

SIZE = (640, 480)
HOGS: dict[str, list[str] | None] = {
    "idle": None,
    "spin": ["bash", "-c", "while :; do :; done"],
    "fork bomb": ["bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 600"],
}


def _on_loop(env: UbuntuEnv, coro: Any) -> Any:
    return env._runner.run(coro, timeout=60)


def _start(hog: UbuntuEnv, argv: list[str] | None) -> None:
    hog.reset(seed=0)
    if argv is not None:
        controller = hog.controller
        _on_loop(hog, controller.state.procs.spawn(argv))
        time.sleep(1.0)  # the hog at full tilt before measuring


def _block(neighbour: UbuntuEnv, steps: int) -> tuple[list[float], float]:
    me = psutil.Process()
    walls = []
    cpu0 = sum(me.cpu_times()[:2])
    for i in range(steps):
        started = time.perf_counter()
        _, _, _, _, info = neighbour.step({"type": "move", "point": {"x": 10 + i % 50, "y": 10}})
        walls.append((time.perf_counter() - started) * 1000)
        assert info["status"] == "ok", info
    return walls, (sum(me.cpu_times()[:2]) - cpu0) * 1000 / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    options = parser.parse_args()
    neighbour = UbuntuEnv(in_container=False, screen_size=SIZE, max_steps=10**6)
    hog = UbuntuEnv(
        in_container=False, screen_size=SIZE, max_steps=10**6, allow_shell=True, limits={"cpu_seconds": None}
    )
    walls: dict[str, list[float]] = {name: [] for name in HOGS}
    cpus: dict[str, list[float]] = {name: [] for name in HOGS}
    try:
        neighbour.reset(seed=0)
        for round_ in range(options.rounds):
            order = list(HOGS) if round_ % 2 == 0 else list(reversed(HOGS))
            for name in order:
                _start(hog, HOGS[name])
                wall, cpu = _block(neighbour, options.steps)
                walls[name] += wall
                cpus[name].append(cpu)
        hog.reset(seed=0)
    finally:
        hog.close()
        neighbour.close()
    base_wall, base_cpu = statistics.median(walls["idle"]), statistics.median(cpus["idle"])
    print(f"neighbour step, {options.rounds} rounds x {options.steps} steps, load {psutil.getloadavg()[0]:.1f}")
    print(f"{'hog':<10} {'wall ms':>8} {'x idle':>7} {'CPU ms':>7} {'x idle':>7}")
    for name in HOGS:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:<10} {wall:>8.1f} {wall / base_wall:>7.2f} {cpu:>7.1f} {cpu / base_cpu:>7.2f}")


if __name__ == "__main__":
    main()
