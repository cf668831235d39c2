"""What the envs returned under faults, and the suite's checks on it.

- :class:`EnvTaps` records, for every env made while it is installed, each reset and step exactly
  as the env returns them (a listener), with monotonic times: a reset's when it returned, a step's
  when ``astep`` was called and when it returned.
- :class:`VectorLog` records every row of a vector env, with when its step was sent and returned.
- **An episode saw a fault** when the fault hit its env after its reset had completed and a step of
  it started after the killed process was gone: every such step (row) must be a failure (a status
  in ``FAILED``, reward ``None``/NaN), and so must the episode's trajectory, returned and stored
  (:func:`check_taps`, :meth:`VectorLog.check`, :func:`check_store`).
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fault_kills import Fault

from hud_gym.core.env import HudEnv
from hud_gym.jobs.recorder import TrajectoryRecorder
from hud_gym.trajectory import FAILED


@dataclass
class StepRecord:
    start: float
    end: float
    status: str
    reward: float | None
    ended: bool


@dataclass
class Episode:
    """One episode of one env, as the env returned it."""

    env: int
    reset_done: float
    trajectory_id: str | None
    steps: list[StepRecord] = field(default_factory=list)
    ended_status: str | None = None  # set by ``end_episode`` (a failure from outside the env)

    def steps_after(self, fault: Fault) -> list[StepRecord]:
        """The steps of this episode that started after ``fault``, if the episode had begun before it."""
        if self.reset_done >= fault.begun:
            return []
        return [s for s in self.steps if s.start > fault.done]


class EnvTaps:
    """Records every reset and step of every env made while installed (see the module docstring)."""

    def __init__(self) -> None:
        self.envs: list[HudEnv] = []
        self.episodes: list[Episode] = []
        self._open: dict[int, Episode] = {}
        self._starts: dict[int, float] = {}
        self._lock = threading.Lock()

    @contextmanager
    def installed(self) -> Iterator[EnvTaps]:
        """Tap every env made inside the block (``HudEnv.__init__`` adds the listener; ``astep``,
        which the vector env and the rollouts call, notes when each step starts)."""
        original_init, original_astep = HudEnv.__init__, HudEnv.astep
        taps = self

        @functools.wraps(original_init)  # the env's options stay introspectable (hud_gym.core.options)
        def init(env: HudEnv, *args: Any, **kwargs: Any) -> None:
            original_init(env, *args, **kwargs)
            env.listeners.insert(0, taps)
            with taps._lock:
                taps.envs.append(env)

        async def astep(env: HudEnv, action: Any) -> Any:
            taps._starts[id(env)] = time.monotonic()
            return await original_astep(env, action)

        HudEnv.__init__, HudEnv.astep = init, astep  # type: ignore[method-assign]
        try:
            yield self
        finally:
            HudEnv.__init__, HudEnv.astep = original_init, original_astep  # type: ignore[method-assign]

    def live(self) -> list[HudEnv]:
        with self._lock:
            return [env for env in self.envs if env.controller is not None]

    async def on_reset(self, env: HudEnv, observation: Any, info: dict[str, Any], options: dict[str, Any]) -> None:
        hint = options.get("trajectory")
        episode = Episode(id(env), time.monotonic(), getattr(hint, "trajectory_id", None))
        with self._lock:
            self._open[id(env)] = episode
            self.episodes.append(episode)

    async def on_step(
        self,
        env: HudEnv,
        action: Any,
        observation: Any,
        reward: float | None,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        end = time.monotonic()
        with self._lock:
            start = self._starts.pop(id(env), end)
            episode = self._open.get(id(env))
            if episode is None:
                return
            episode.steps.append(StepRecord(start, end, str(info.get("status")), reward, terminated or truncated))
            if episode.trajectory_id is None:  # the job recorder's id (its reset ran after ours)
                episode.trajectory_id = next(
                    (listener.trajectory_id for listener in env.listeners if isinstance(listener, TrajectoryRecorder)),
                    None,
                )

    async def on_end_episode(self, env: HudEnv, status: str, error: str | None) -> None:
        with self._lock:
            episode = self._open.pop(id(env), None)
            if episode is not None:
                episode.ended_status = status

    async def on_close(self, env: HudEnv) -> None:
        with self._lock:
            self._open.pop(id(env), None)

    def hit(self, faults: Iterable[Fault]) -> list[tuple[Fault, Episode, list[StepRecord]]]:
        """The episodes that saw each fault, with their steps after it."""
        found = []
        for fault in faults:
            for episode in self.episodes:
                if episode.env in fault.envs and (after := episode.steps_after(fault)):
                    found.append((fault, episode, after))
        return found


def failed(status: str, reward: float | None) -> bool:
    """A failure as the suite requires it: a failure status and no reward (None or NaN)."""
    return status in FAILED and (reward is None or math.isnan(reward))


def check_taps(taps: EnvTaps, faults: list[Fault], seed: int) -> list[tuple[Fault, Episode, list[StepRecord]]]:
    """Every step an env returned after a fault of its episode is a failure; returns the hits
    (prints the faults first: pytest shows them with a failure)."""
    print("faults: " + "; ".join(str(f) for f in faults))
    hits = taps.hit(faults)
    bad = [(str(f), s) for f, _, after in hits for s in after if not failed(s.status, s.reward)]
    assert not bad, f"seed {seed}: steps reported ok after a fault of their episode: {bad[:5]}"
    return hits


@dataclass
class Row:
    sent: float
    returned: float
    status: str
    reward: float
    ended: bool
    reset: bool  # a NEXT_STEP autoreset row (or the first reset): it begins an episode
    error: str | None = None


class VectorLog:
    """Every row a vector env returned, per env index, with when its step was sent and returned."""

    def __init__(self, num_envs: int) -> None:
        self.rows: list[list[Row]] = [[] for _ in range(num_envs)]
        self._ended = [False] * num_envs

    def reset(self, sent: float) -> None:
        returned = time.monotonic()
        for i, rows in enumerate(self.rows):
            rows.append(Row(sent, returned, "ok", 0.0, False, True))
            self._ended[i] = False

    def record(self, sent: float, result: tuple[Any, ...]) -> None:
        """Add the rows of one ``recv()`` (``infos["env_id"]`` names them, else they are in order)."""
        returned = time.monotonic()
        _, rewards, terminated, truncated, infos = result
        env_ids = list(infos.get("env_id", range(len(rewards))))
        for row, i in enumerate(env_ids):
            ended = bool(terminated[row] or truncated[row])
            reset = self._ended[i]  # NEXT_STEP: the step after an ended one resets the env
            errors = infos.get("error")
            error = errors[row] if errors is not None and infos.get("_error", [True] * len(rewards))[row] else None
            self.rows[i].append(
                Row(
                    sent,
                    returned,
                    str(infos["status"][row]),
                    float(rewards[row]),
                    ended,
                    reset,
                    None if error is None else str(error),
                )
            )
            self._ended[i] = ended

    def episodes(self, i: int) -> Iterator[list[Row]]:
        """Env ``i``'s episodes: a reset row, then its steps."""
        episode: list[Row] = []
        for row in self.rows[i]:
            if row.reset and episode:
                yield episode
                episode = []
            episode.append(row)
        if episode:
            yield episode

    def check(self, faults: list[Fault], seed: int) -> int:
        """No ok row after a fault of its episode; a failed row is NaN and only a failed row is.
        Returns how many rows had to fail (prints the rows first: pytest shows them with a failure)."""
        print(summary(self))
        inconsistent = [
            (i, r) for i, rows in enumerate(self.rows) for r in rows if (r.status in FAILED) != math.isnan(r.reward)
        ]
        assert not inconsistent, f"seed {seed}: rows whose reward and status disagree: {inconsistent[:5]}"
        bad, constrained = [], 0
        for fault in faults:
            for i in sorted(fault.slots):
                for episode in self.episodes(i):
                    if episode[0].returned >= fault.begun:
                        continue  # the episode began after (or while) the fault happened
                    for row in episode[1:]:
                        if row.sent > fault.done:
                            constrained += 1
                            if not failed(row.status, row.reward):
                                bad.append((str(fault), i, row))
        assert not bad, f"seed {seed}: rows ok after a fault of their episode: {bad[:5]}"
        return constrained


def check_store(
    job: Any,
    taps: EnvTaps,
    hits: list[tuple[Fault, Episode, list[StepRecord]]],
    seed: int,
    returned: Iterable[Any] = (),
) -> dict[str, int]:
    """Every episode with a step is stored, none is left ``running``; an episode that ended is
    stored with its end (failure status and no reward, or a graded status); an episode that saw a
    fault is stored failed; every trajectory ``returned`` to the caller is stored as returned."""
    stored = {t.trajectory_id: t for t in job.load_trajectories(include_running=True)}
    lost, wrong = [], []
    for episode in taps.episodes:
        if not episode.steps or episode.trajectory_id is None:
            continue
        trajectory = stored.get(episode.trajectory_id)
        if trajectory is None:
            lost.append(episode)
            continue
        last = episode.steps[-1]
        end = episode.ended_status or (last.status if last.ended or last.status in FAILED else None)
        if trajectory.status == "running":
            wrong.append((episode.trajectory_id, "running"))
        elif end is not None and (end in FAILED) != failed(trajectory.status, trajectory.reward):
            wrong.append((episode.trajectory_id, f"ended {end}, stored {trajectory.status} {trajectory.reward}"))
    for fault, episode, _ in hits:
        trajectory = stored.get(episode.trajectory_id or "")
        if trajectory is not None and not failed(trajectory.status, trajectory.reward):
            wrong.append((episode.trajectory_id, f"saw {fault}, stored {trajectory.status} {trajectory.reward}"))
    for trajectory in returned:
        copy = stored.get(trajectory.trajectory_id)
        if copy is None:
            lost.append(trajectory.trajectory_id)
        elif copy.status != trajectory.status or copy.reward != trajectory.reward:
            outcome = f"returned {trajectory.status} {trajectory.reward}, stored {copy.status} {copy.reward}"
            wrong.append((trajectory.trajectory_id, outcome))
    assert not lost, f"seed {seed}: finished trajectories missing from the store: {lost[:5]}"
    assert not wrong, f"seed {seed}: stored trajectories that disagree with what happened: {wrong[:5]}"
    counts: dict[str, int] = {}
    for trajectory in stored.values():
        counts[trajectory.status] = counts.get(trajectory.status, 0) + 1
    return counts


def summary(log: VectorLog) -> str:
    """One line per env: each row's status initial (R reset, . ok, E env_error, T timeout, ...)."""
    marks = {"ok": ".", "env_error": "E", "timeout": "T", "eval_error": "V", "action_error": "a"}
    lines = [
        f"env {i}: " + "".join("R" if r.reset else marks.get(r.status, "?") for r in rows)
        for i, rows in enumerate(log.rows)
    ]
    errors = sorted({f"{r.status}: {r.error[:200]}" for rows in log.rows for r in rows if r.error})
    return "\n".join(lines + errors)
