"""RayVectorEnv and RayEnvPool on a real local Ray cluster (one per module), mostly on hud/QA-v0.

The cluster is ``ray.init(num_cpus=2)``: ``local_mode`` no longer exists, so every actor is a real
worker process; the tests check that none outlives its vector env or pool, and that no Chromium
does either.
"""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from vector_timeline import SCHEDULE, TASK, batched, same_infos, same_obs

from hud_gym import ClickAction, Point, ResponseAction, Task, TypeAction, WaitAction
from hud_gym.controllers.process_utils import wait_gone
from hud_gym.envs.qa import QAEnv
from hud_gym.trajectory import TrajectoryGroup
from hud_gym.wrappers.rollout.grpo import rollout, rollout_group, rollout_groups

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------- fixtures and helpers


_ACTORS_BEFORE: set[str] = set()


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """One real local cluster for the module (skips the Ray tests when Ray is not installed)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'hud-gym[ray]')")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    _ACTORS_BEFORE.update(_actor_states(ray))
    yield ray
    if started:
        ray.shutdown()


def _actor_states(ray: Any) -> dict[str, str]:
    # ray.util.state.list_actors needs the dashboard (ray[default]); the GCS actor table does not.
    from ray._private import state

    return {actor_id: info["State"] for actor_id, info in state.actors().items()}


def _wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _descendants(pid: int) -> set[int]:
    try:
        return {child.pid for child in psutil.Process(pid).children(recursive=True)}
    except psutil.Error:
        return set()


def _chromium_under(pids: list[int]) -> set[int]:
    found = set()
    for pid in pids:
        for child in _descendants(pid):
            try:
                if "chrom" in psutil.Process(child).name():
                    found.add(child)
            except psutil.Error:
                pass
    return found


def assert_gone(ray: Any, described: list[dict[str, Any]], others: set[int] = frozenset()) -> None:
    """The actors (``describe()`` dicts) are dead in Ray, their processes and ``others`` gone."""
    ids = {d["actor_id"] for d in described}
    assert _wait_for(lambda: all(_actor_states(ray).get(i) == "DEAD" for i in ids), 30), _actor_states(ray)
    assert wait_gone({d["pid"] for d in described} | set(others), 30) == set()


def _qa_envs(num_envs: int = 3, **kwargs: Any) -> Any:
    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    return RayVectorEnv("hud/QA-v0", num_envs=num_envs, **{"task": TASK, **kwargs})


# ---------------------------------------------------------------------- lazy import


def test_hud_gym_does_not_import_ray() -> None:
    code = (
        "import sys, hud_gym, hud_gym.wrappers, hud_gym.wrappers.integrations.ray_vector, hud_gym.wrappers.integrations.ray_pool\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_missing_ray_names_the_extra() -> None:
    # sys.modules["ray"] = None makes `import ray` fail as on a machine without Ray.
    code = (
        "import sys\n"
        "sys.modules['ray'] = None\n"
        "from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv\n"
        "from hud_gym.wrappers.integrations.ray_pool import RayEnvPool\n"
        "for make in (lambda: RayVectorEnv('hud/QA-v0', num_envs=1), lambda: RayEnvPool(size=1)):\n"
        "    try:\n"
        "        make()\n"
        "    except ImportError as exc:\n"
        "        assert \"pip install 'hud-gym[ray]'\" in str(exc), exc\n"
        "    else:\n"
        "        raise AssertionError('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


# ---------------------------------------------------------------------- RayVectorEnv on QA


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_autoreset_timeline_matches_sync_vector_env(ray_cluster: Any, mode: AutoresetMode) -> None:
    ours = _qa_envs(3, max_episode_steps=3, autoreset_mode=mode)
    reference = SyncVectorEnv([lambda: QAEnv(task=TASK, max_steps=3)] * 3, autoreset_mode=mode)
    try:
        assert ours.metadata["autoreset_mode"] is mode
        assert ours.single_observation_space == reference.single_observation_space
        assert ours.observation_space == reference.observation_space
        config = ours.call("action_space_config")[0]
        obs_a, info_a = ours.reset(seed=5)
        obs_b, info_b = reference.reset(seed=5)
        same_obs(obs_a, obs_b)
        same_infos(info_a, info_b)
        assert obs_a["screenshot"].flags.writeable
        for step, actions in enumerate(SCHEDULE):
            batch = batched(ours.single_action_space, actions, config)
            # Ours takes a list of CLA actions or the batched element; alternate to test both.
            a = ours.step(actions if step % 2 else batch)
            b = reference.step(batch)
            same_obs(a[0], b[0])
            for x, y in zip(a[1:4], b[1:4], strict=True):
                np.testing.assert_array_equal(x, y)
            same_infos(a[4], b[4])
            if mode is AutoresetMode.SAME_STEP and "final_obs" in a[4]:
                for i in np.flatnonzero(a[4]["_final_obs"]):
                    same_obs(a[4]["final_obs"][i], b[4]["final_obs"][i])
            if mode is AutoresetMode.DISABLED:
                ended = np.logical_or(a[2], a[3])
                if ended.any():
                    with pytest.raises(RuntimeError, match="reset_mask"):
                        ours.step(actions)
                    obs_a, info_a = ours.reset(options={"reset_mask": ended})
                    obs_b, info_b = reference.reset(options={"reset_mask": ended})
                    same_obs(obs_a, obs_b)
                    same_infos(info_a, info_b)
    finally:
        described = ours.describe()
        ours.close()
        reference.close()
    assert_gone(ray_cluster, described)


def test_same_seed_reset_gives_identical_first_observations(ray_cluster: Any) -> None:
    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    envs = RayVectorEnv("hud/QA-v0", num_envs=4, taskset="qa-basic")
    try:
        obs, infos = envs.reset(seed=[11] * 4)
        assert len(set(infos["task_id"])) == 1
        assert len({d["pid"] for d in envs.describe()}) == 4  # four actors, four processes
        for i in range(1, 4):
            np.testing.assert_array_equal(obs["screenshot"][0], obs["screenshot"][i])
            assert obs["text"][0] == obs["text"][i]
        obs, infos = envs.reset(seed=[0, 1, 2, 3])
        assert len(set(infos["task_id"])) > 1
    finally:
        envs.close()


def test_env_creators_and_bad_arguments(ray_cluster: Any) -> None:
    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    creators = [functools.partial(QAEnv, task=TASK), functools.partial(QAEnv, task=Task(prompt="2+2?", target="4"))]
    envs = RayVectorEnv(creators)
    try:
        obs, _ = envs.reset(seed=0)
        assert obs["text"][0].startswith("Capital of France?") and obs["text"][1].startswith("2+2?")
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris"), ResponseAction(text="4")])
        assert rewards.tolist() == [1.0, 1.0] and terminated.tolist() == [True, True]
        with pytest.raises(ValueError, match="expected 2 actions"):
            envs.step([ResponseAction(text="x")])
        with pytest.raises(IndexError, match="not in"):
            envs.send([ResponseAction(text="x")], env_ids=[5])
    finally:
        envs.close()
    with pytest.raises(RuntimeError, match="closed"):
        envs.reset()
    with pytest.raises(ValueError, match="num_envs"):
        RayVectorEnv("hud/QA-v0")
    with pytest.raises(ValueError, match="env creators"):
        RayVectorEnv(creators, task=TASK)
    with pytest.raises(ray_cluster.exceptions.RayActorError, match="no_such_option"):
        RayVectorEnv("hud/QA-v0", num_envs=1, no_such_option=1)  # raised in the actor, reported here


def test_another_driver_joins_the_cluster_by_address(ray_cluster: Any) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    code = (
        "import ray\n"
        "from hud_gym import ResponseAction\n"
        "from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv\n"
        f"envs = RayVectorEnv('hud/QA-v0', num_envs=2, taskset='qa-basic', address={address!r})\n"
        f"assert ray.get_runtime_context().gcs_address == {address!r}\n"
        "obs, infos = envs.reset(seed=[3, 3])\n"
        "assert infos['task_id'][0] == infos['task_id'][1]\n"
        "_, rewards, terminated, _, _ = envs.step([ResponseAction(text='x')] * 2)\n"
        "assert terminated.tolist() == [True, True]\n"
        "envs.close()\n"
    )
    before = set(_actor_states(ray_cluster))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=90, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = set(_actor_states(ray_cluster)) - before
    assert len(theirs) == 2  # the two env actors ran on this cluster, and are dead now
    assert _wait_for(lambda: all(_actor_states(ray_cluster)[i] == "DEAD" for i in theirs), 30)


def test_send_recv_returns_fast_envs_first(ray_cluster: Any) -> None:
    envs = _qa_envs(3)
    try:
        envs.reset(seed=0)
        envs.send([WaitAction(time=1500), ResponseAction(text="Paris"), TypeAction(text="x")])
        _, rewards, terminated, _, infos = envs.recv(min_batch=2)
        assert sorted(infos["env_id"].tolist()) == [1, 2]
        assert dict(zip(infos["env_id"].tolist(), rewards.tolist(), strict=True)) == {1: 1.0, 2: 0.0}
        with pytest.raises(RuntimeError, match="in flight"):
            envs.send([TypeAction(text="y")], env_ids=[0])
        envs.send([TypeAction(text="y")], env_ids=[2])
        obs, _, _, _, infos = envs.recv(min_batch=1)
        assert infos["env_id"].tolist() == [2] and obs["text"][0].endswith("Answer so far: xy")
        _, _, _, _, infos = envs.recv(timeout=30)
        assert infos["env_id"].tolist() == [0] and infos["status"].tolist() == ["ok"]
        with pytest.raises(RuntimeError, match="send"):
            envs.recv()
        envs.send([WaitAction(time=1000)], env_ids=[2])
        with pytest.raises(TimeoutError):
            envs.recv(timeout=0.1)
        _, _, _, _, infos = envs.recv()
        assert infos["env_id"].tolist() == [2] and infos["status"].tolist() == ["ok"]
    finally:
        envs.close()


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_a_killed_actor_is_an_env_error_and_is_replaced(ray_cluster: Any, mode: AutoresetMode) -> None:
    envs = _qa_envs(2, autoreset_mode=mode)
    try:
        envs.reset(seed=0)
        before = envs.describe()
        envs.step([TypeAction(text="Par"), TypeAction(text="x")])
        ray_cluster.kill(envs.actors[0])
        obs, rewards, terminated, truncated, infos = envs.step([ResponseAction(text="Paris"), TypeAction(text="y")])
        assert terminated.tolist() == [True, False] and np.isnan(rewards[0]) and rewards[1] == 0.0
        # SAME_STEP (as SyncVectorEnv): the ended step's info is final_info, the row's the reset's.
        failure = infos if mode is AutoresetMode.NEXT_STEP else infos["final_info"]
        assert failure["status"][0] == "env_error" and infos["status"][1] == "ok"
        assert "ActorDiedError" in failure["error"][0] and failure["replaced"].tolist() == [True, False]
        after = envs.describe()
        assert after[0]["actor_id"] != before[0]["actor_id"] and after[1]["actor_id"] == before[1]["actor_id"]
        assert_gone(ray_cluster, [before[0]])
        if mode is AutoresetMode.NEXT_STEP:
            # The failed env reports its last observation, then the new actor's reset row.
            assert obs["text"][0].endswith("Answer so far: Par")
            obs, rewards, terminated, _, infos = envs.step([TypeAction(text="a"), ResponseAction(text="Paris")])
            assert infos["step"].tolist() == [0, 3] and rewards.tolist() == [0.0, 1.0]
            assert obs["text"][0].endswith("Answer so far: ")
        else:
            # SAME_STEP: the fresh actor was reset within the failed step; the failure rides along.
            assert infos["_final_info"].tolist() == [True, False] and infos["status"].tolist() == ["ok", "ok"]
            assert infos["step"].tolist() == [0, 2] and obs["text"][0].endswith("Answer so far: ")
            assert infos["final_obs"][0]["text"].endswith("Answer so far: Par")
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris"), ResponseAction(text="Paris")])
        assert rewards.tolist()[0] == 1.0 and terminated.tolist()[0]
    finally:
        described = envs.describe()
        envs.close()
    assert_gone(ray_cluster, described)


def test_same_step_when_the_replacement_cannot_start_either(ray_cluster: Any, tmp_path: Path) -> None:
    """SAME_STEP: the actor dies, and the fresh actor's env fails to start, so its reset fails
    too: the row reports both failures with no reset, and the next step resets on a third actor."""
    made = tmp_path / "made"
    made.mkdir()

    def second_one_fails() -> QAEnv:  # a closure: Ray pickles it by value
        count = len(list(made.iterdir()))
        (made / str(count)).touch()
        if count == 1:
            raise RuntimeError("this env cannot start")
        return QAEnv(task=TASK)

    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    envs = RayVectorEnv([second_one_fails], autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        envs.reset(seed=0)
        envs.step([TypeAction(text="Par")])
        ray_cluster.kill(envs.actors[0])
        obs, rewards, terminated, truncated, infos = envs.step([TypeAction(text="is")])
        assert terminated.tolist() == [True] and np.isnan(rewards[0]) and infos["status"].tolist() == ["env_error"]
        assert "ActorDiedError" in infos["error"][0] and "; then sub-env 0 crashed" in infos["error"][0]
        assert "final_obs" not in infos and obs["text"][0].endswith("Answer so far: Par")  # no reset happened
        obs, rewards, terminated, _, infos = envs.step([ResponseAction(text="Paris")])  # a reset in its place
        assert rewards.tolist() == [0.0] and terminated.tolist() == [False] and infos["step"].tolist() == [0]
        _, rewards, terminated, _, infos = envs.step([ResponseAction(text="Paris")])
        assert rewards.tolist() == [1.0] and infos["final_info"]["status"].tolist() == ["ok"]
        assert len(list(made.iterdir())) == 3
    finally:
        described = envs.describe()
        envs.close()
    assert_gone(ray_cluster, described)


def test_a_step_past_step_timeout_is_killed_and_replaced(ray_cluster: Any) -> None:
    envs = _qa_envs(2, step_timeout=30)
    try:
        envs.reset(seed=0)
        before = envs.describe()
        envs.step_timeout = 1.0
        # A real slow sub-env: the QA controller waits a minute for this action.
        obs, rewards, terminated, truncated, infos = envs.step([WaitAction(time=60_000), ResponseAction(text="Paris")])
        assert infos["status"].tolist() == ["timeout", "ok"]
        assert truncated.tolist() == [True, False] and terminated.tolist() == [False, True]
        assert np.isnan(rewards[0]) and rewards[1] == 1.0 and infos["replaced"].tolist() == [True, False]
        assert_gone(ray_cluster, [before[0]])  # the hung actor was killed
        envs.step_timeout = 30
        obs, _, _, _, infos = envs.step([TypeAction(text="a"), TypeAction(text="b")])
        assert infos["status"].tolist() == ["ok", "ok"] and infos["step"].tolist() == [0, 0]  # both reset
        _, rewards, _, _, _ = envs.step([ResponseAction(text="Paris"), ResponseAction(text="Lyon")])
        assert rewards.tolist() == [1.0, 0.0]
    finally:
        described = envs.describe()
        envs.close()
    assert_gone(ray_cluster, described)


def test_close_with_a_step_in_flight_leaves_no_actor(ray_cluster: Any) -> None:
    envs = _qa_envs(2)
    envs.reset(seed=0)
    described = envs.describe()
    envs.send([WaitAction(time=60_000)], env_ids=[0])
    envs.close()
    assert_gone(ray_cluster, described)
    envs.close()  # twice is fine


# ---------------------------------------------------------------------- a browser in each actor


def _pixel(screenshot: np.ndarray) -> tuple[int, ...]:
    """A colour of input.html's Toggle button (left 160, top 20, 120x40)."""
    return tuple(int(v) for v in screenshot[25, 168])  # a corner of the button, clear of its label


def test_browser_envs_in_two_actors_return_real_screenshots(ray_cluster: Any, site: str) -> None:
    from hud_gym.controllers.browser.chromium import ChromiumNotFoundError, find_chromium
    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    try:
        find_chromium()
    except ChromiumNotFoundError as exc:
        pytest.skip(str(exc))
    task = Task(id="toggle", prompt="Press Toggle.", setup=[("goto", f"{site}/input.html")], gym="hud-browser")
    envs = RayVectorEnv(
        "hud/Browser-v0", num_envs=2, task=task, screen_size=(400, 300), step_timeout=60, render_mode="rgb_array"
    )
    described: list[dict[str, Any]] = []
    browsers: set[int] = set()
    try:
        obs, infos = envs.reset(seed=0)
        described = envs.describe()
        browsers_of = [_chromium_under([d["pid"]]) for d in described]
        browsers = set().union(*browsers_of)
        assert all(browsers_of), "no Chromium under the actors"
        assert obs["screenshot"].shape == (2, 300, 400, 3)
        assert list(infos["url"]) == [f"{site}/input.html"] * 2
        # The Toggle button is blue; clicking it in env 1 turns it red there only.
        for i in range(2):
            assert _pixel(obs["screenshot"][i]) == pytest.approx((0, 0, 255), abs=40)
        obs, _, _, _, infos = envs.step([WaitAction(time=0), ClickAction(point=Point(x=220, y=40))])
        assert infos["status"].tolist() == ["ok", "ok"]
        assert _pixel(obs["screenshot"][0]) == pytest.approx((0, 0, 255), abs=40)
        assert _pixel(obs["screenshot"][1]) == pytest.approx((255, 0, 0), abs=40)
        rendered = envs.render()
        np.testing.assert_array_equal(rendered[1], obs["screenshot"][1])
        # A killed actor takes its browser with it (Playwright's driver exits with its parent).
        ray_cluster.kill(envs.actors[0])
        _, _, terminated, _, infos = envs.step([WaitAction(time=0), WaitAction(time=0)])
        assert infos["status"].tolist() == ["env_error", "ok"] and terminated.tolist() == [True, False]
        assert wait_gone(browsers_of[0], 30) == set()
        described += envs.describe()[:1]  # the replacement
    finally:
        described = described or envs.describe()
        envs.close()
    assert_gone(ray_cluster, described, browsers)


# ---------------------------------------------------------------------- GRPO through RayEnvPool


def _answers(*texts: str) -> Callable[..., Any]:
    """A policy that types, then answers with the next of ``texts`` (one per rollout, in the
    order the rollouts ask)."""
    remaining = list(texts)
    lock = threading.Lock()

    def policy(observation: dict, history: list, task: Task) -> Any:
        assert observation["text"].endswith("Answer so far: ") or history  # a clean env every lease
        if not history:
            return TypeAction(text="x")
        with lock:
            return ResponseAction(text=remaining.pop(0))

    return policy


def test_rollout_group_through_the_ray_pool(ray_cluster: Any) -> None:
    from hud_gym.wrappers.integrations.ray_pool import RayEnvPool

    def answer_target(observation: dict, history: list, task: Task) -> Any:
        return ResponseAction(text=task.target)

    async def main() -> tuple[TrajectoryGroup, TrajectoryGroup, list[TrajectoryGroup], list[Any], int]:
        async with RayEnvPool(size=4) as pool:
            first = await rollout_group(
                "qa-basic/capital-france", _answers("Paris", "Rome", "Paris", "Lyon"), 4, seed=9, pool=pool
            )
            proxies = list(pool._idle["hud/QA-v0"])
            second = await rollout_group("qa-basic/capital-france", _answers(*["Paris"] * 4), 4, seed=10, pool=pool)
            tasks = [
                Task(id="a", prompt="1+1?", target="2", gym="qa"),
                Task(id="b", prompt="2+2?", target="4", gym="qa"),
            ]
            streamed = [g async for g in rollout_groups(tasks, answer_target, 2, max_concurrent=4, pool=pool)]
            return first, second, streamed, proxies, pool.envs

    first, second, streamed, proxies, envs = asyncio.run(main())
    assert {t.group_id for t in first.trajectories} == {first.group_id}
    assert {t.seed for t in first.trajectories} == {9}
    assert [t.status for t in first.trajectories] == ["ok"] * 4
    assert sorted(first.rewards()) == [0.0, 0.0, 1.0, 1.0]
    assert {t.final_response for t in first.trajectories} == {"Paris", "Rome", "Lyon"}
    for t in first.trajectories:
        assert t.reward == (1.0 if t.final_response == "Paris" else 0.0)
        assert t.initial_observation["screenshot"].flags.writeable
        np.testing.assert_array_equal(
            t.initial_observation["screenshot"], first.trajectories[0].initial_observation["screenshot"]
        )
    assert second.rewards() == [1.0] * 4
    assert envs == 4 and len({p.pid for p in proxies}) == 4  # four actors, reused by every group
    assert sorted(g.task.id for g in streamed) == ["a", "b"]
    assert [g.rewards() for g in streamed] == [[1.0, 1.0], [1.0, 1.0]]
    assert_gone(ray_cluster, [{"actor_id": p.actor_id, "pid": p.pid} for p in proxies])


def test_a_killed_actor_fails_its_pooled_rollout_and_is_replaced(ray_cluster: Any) -> None:
    from hud_gym.wrappers.integrations.ray_pool import RayEnvPool

    async def main() -> tuple[Any, Any, TrajectoryGroup, list[Any]]:
        async with RayEnvPool(size=2) as pool:
            async with pool.lease(Task(prompt="x", target="y", gym="qa")) as proxy:

                def kill_then_answer(observation: dict, history: list, task: Task) -> Any:
                    ray_cluster.kill(proxy.actor)
                    return ResponseAction(text="Paris")

                failed = await rollout(TASK, kill_then_answer, env=proxy, seed=1)
            assert pool.envs == 0  # the dead actor was discarded on release
            group = await rollout_group(TASK, _answers("Paris", "Paris"), 2, seed=1, pool=pool)
            live = [p for envs in pool._idle.values() for p in envs]
            return failed, proxy, group, live

    failed, dead, group, live = asyncio.run(main())
    assert (failed.status, failed.reward) == ("env_error", None)
    assert "ActorDiedError" in failed.error
    assert group.rewards() == [1.0, 1.0]
    assert dead.pid not in {p.pid for p in live} and len(live) == 2
    assert_gone(ray_cluster, [{"actor_id": p.actor_id, "pid": p.pid} for p in [dead, *live]])


def test_no_env_actor_left_alive(ray_cluster: Any) -> None:
    # Every test above closed its vector env or pool: no actor of this module is still alive.
    alive = [i for i, s in _actor_states(ray_cluster).items() if s != "DEAD" and i not in _ACTORS_BEFORE]
    assert alive == []


def test_actors_run_their_controllers_on_a_fleet_of_servers(ray_cluster: Any) -> None:
    """``controller=[url, url]``: each actor holds an env core whose controller runs on a server."""
    from controller_servers import TOKEN, ServerProcess

    from hud_gym.wrappers.integrations.ray_vector import RayVectorEnv

    servers = [ServerProcess("qa"), ServerProcess("qa")]
    fleet = [server.url for server in servers]
    envs = RayVectorEnv(
        "hud/QA-v0",
        num_envs=2,
        task=Task(id="f", prompt="Capital of France?", target="Paris", gym="qa"),
        controller=fleet,
        controller_token=TOKEN,
    )
    try:
        envs.reset(seed=0)
        _, rewards, terminated, _, _ = envs.step([ResponseAction(text="Paris"), ResponseAction(text="Rome")])
        assert rewards.tolist() == [1.0, 0.0] and terminated.all()
        envs.step([TypeAction(text="a"), TypeAction(text="b")])  # both start a new episode
        servers[0].kill()  # only env 0's controller lived there
        _, _, terminated, _, infos = envs.step([TypeAction(text="c"), TypeAction(text="d")])
        assert infos["status"].tolist() == ["env_error", "ok"] and terminated.tolist() == [True, False]
    finally:
        envs.close()
        for server in servers:
            server.stop()
