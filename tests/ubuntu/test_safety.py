"""Shell and path permissions of the desktop gym (its container image: tests/test_docker_images.py;
what a task or an agent can reach of the host at all: tests/security/test_desktop_sandbox.py).

On the host (``in_container=False``; this test machine may itself be a container, so it is set
explicitly) the desktop runs in its sandbox, and a setup or evaluate function that runs a command
is refused unless the env is made with ``allow_shell=True``, which lets such commands run inside
the sandbox: a setup refusal raises from ``reset``, an evaluate refusal is an error grade, and both
name the option. Task paths stay inside the env's home unless ``allow_absolute_paths=True``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import CustomAction, SetupError, Task, load_taskset
from hud_gym.controllers.ubuntu import UbuntuController
from hud_gym.envs.ubuntu_options import UbuntuOptions
from hud_gym.evaluation import Grade

pytestmark = pytest.mark.timeout(60)

SHELL_OPTION = "allow_shell=True"
PATH_OPTION = "allow_absolute_paths=True"


@pytest.fixture(scope="module")
def host() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False)
    yield env
    env.close()


@pytest.fixture(scope="module")
def shell() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, allow_shell=True)
    yield env
    env.close()


def task(setup: Any = None, evaluate: Any = None) -> Task:
    return Task(prompt="x", gym="hud-ubuntu", setup=setup, evaluate=evaluate)


def refused_setup(env: gymnasium.Env, setup: Any, option: str = SHELL_OPTION) -> str:
    """Reset with ``setup``, which must be refused with a message naming ``option``."""
    with pytest.raises(SetupError) as caught:
        env.reset(options={"task": task(setup)})
    message = str(caught.value)
    assert "PermissionError" in message and option in message, message
    return message


def evaluate(env: gymnasium.Env, evaluate: Any, setup: Any = None) -> Grade:
    env.reset(options={"task": task(setup, evaluate)})
    return env.unwrapped.evaluate()


# ------------------------------------------------------------------------------- the shell


def test_run_is_refused_on_the_host(host: gymnasium.Env, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    message = refused_setup(host, ("run", f"touch {shlex.quote(str(marker))}"))
    assert "run runs arbitrary commands" in message and "docker/ubuntu" in message
    refused_setup(host, ("bash", ["touch", str(marker)]))
    assert not marker.exists()


def test_command_output_contains_is_an_error_grade_on_the_host(host: gymnasium.Env) -> None:
    result = evaluate(host, ("command_output_contains", "echo hi", "hi"))
    assert result.is_error and result.reward == 0.0
    assert SHELL_OPTION in (result.content or "")


def test_launch_of_an_unknown_program_is_refused_on_the_host(host: gymnasium.Env) -> None:
    message = refused_setup(host, ("launch", "xmessage", ["hi"]))
    assert "launch of 'xmessage'" in message
    refused_setup(host, ("launch", "bash", ["-c", "true"]))
    refused_setup(host, ("open_file", "notes.txt", "xmessage"))
    # A known app with arguments that would run a command (xterm -e) is refused too.
    refused_setup(host, ("launch", "xterm", ["-e", "touch /tmp/hud-gym-never"]))
    assert not Path("/tmp/hud-gym-never").exists()
    # ... and so is the agent's own launch action.
    host.reset(options={"task": task()})
    _, _, _, _, info = host.step(CustomAction(action="launch", args={"app": "xmessage", "args": ["hi"]}))
    assert info["status"] == "action_error" and SHELL_OPTION in info["action_error"]


def test_known_apps_need_no_shell(host: gymnasium.Env) -> None:
    setup = [("launch", "xterm"), ("write_file", "a.txt", "x"), ("open_file", "a.txt"), ("launch", "xcalc")]
    windows = [("window_exists", "^xterm$"), ("window_exists", "Editor"), ("window_exists", "Calculator")]
    result = evaluate(host, windows, setup)
    assert result.reward == 1.0, result


def test_the_shell_works_with_allow_shell(shell: gymnasium.Env) -> None:
    setup = [
        ("run", "echo from-run > out.txt"),
        ("launch", "xmessage", ["-name", "msg", "hello"]),
        ("launch", "xterm", ["-e", "sleep 60"]),
    ]
    checks = [
        ("file_contains", "out.txt", "from-run"),
        ("command_output_contains", "cat out.txt", "from-run"),
        ("process_running", "xmessage"),
        ("process_running", "sleep"),
        ("command_output_contains", "id -un", "user"),
    ]  # in the sandbox, as its user
    result = evaluate(shell, checks, setup)
    assert result.reward == 1.0, result


def test_the_container_allows_the_shell_by_default() -> None:
    assert UbuntuController(options=UbuntuOptions(in_container=True)).desktop.shell_allowed()
    assert not UbuntuController(options=UbuntuOptions(in_container=False)).desktop.shell_allowed()
    assert UbuntuController(options=UbuntuOptions(in_container=False, allow_shell=True)).desktop.shell_allowed()
    # The host sandboxes by default; the gym's own container is the sandbox (asking is allowed).
    assert (
        UbuntuController(options=UbuntuOptions(in_container=False)).state.sandbox
        and not UbuntuController(options=UbuntuOptions(in_container=True)).state.sandbox
    )
    assert UbuntuController(options=UbuntuOptions(in_container=True, sandbox=True)).state.sandbox
    with pytest.raises(PermissionError, match=re.escape(SHELL_OPTION)):
        UbuntuController(options=UbuntuOptions(in_container=False)).desktop.require_shell("run")


# ------------------------------------------------------------------------------- paths


@pytest.mark.parametrize("path", ["/tmp/hud-gym-escape.txt", "../escape.txt", "a/../../escape.txt", "~root/escape.txt"])
def test_paths_outside_the_home_are_refused(host: gymnasium.Env, path: str) -> None:
    refused_setup(host, ("write_file", path, "x"), PATH_OPTION)
    refused_setup(host, ("make_dir", path), PATH_OPTION)
    refused_setup(host, [("write_file", "in.txt", "x"), ("copy_file", "in.txt", path)], PATH_OPTION)
    refused_setup(host, ("copy_file", path, "in.txt"), PATH_OPTION)
    refused_setup(host, ("open_file", path), PATH_OPTION)
    evaluators = (
        ("file_exists", path),
        ("file_contains", path, "x"),
        ("file_matches", path, "x"),
        ("dir_contains", path, "x"),
    )
    for evaluator in evaluators:
        result = evaluate(host, evaluator)
        assert result.is_error and PATH_OPTION in (result.content or ""), (evaluator, result)
    assert not Path("/tmp/hud-gym-escape.txt").exists()


def test_reading_system_files_is_refused(host: gymnasium.Env) -> None:
    result = evaluate(host, ("file_contains", "/etc/passwd", "root"))
    assert result.is_error and PATH_OPTION in (result.content or "")
    result = evaluate(host, ("file_contains", "../../../../../../etc/passwd", "root"))
    assert result.is_error and PATH_OPTION in (result.content or "")


def test_a_symlink_out_of_the_home_is_refused(shell: gymnasium.Env) -> None:
    # At evaluate time such a link may be the agent's (planted to dodge a failing grade): graded 0.
    result = evaluate(shell, ("file_contains", "etc-link/passwd", "root"), ("run", "ln -s /etc etc-link"))
    assert result.reward == 0.0 and not result.is_error and "leads out" in (result.content or ""), result
    refused_setup(
        shell, [("run", "ln -s /tmp tmp-link"), ("write_file", "tmp-link/hud-gym-escape.txt", "x")], PATH_OPTION
    )
    assert not Path("/tmp/hud-gym-escape.txt").exists()


def test_absolute_paths_work_with_allow_absolute_paths(tmp_path: Path) -> None:
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, allow_absolute_paths=True)
    try:
        target = tmp_path / "outside" / "abs.txt"
        result = evaluate(
            env,
            [("file_contains", str(target), "absolute"), ("file_exists", "../")],
            ("write_file", str(target), "absolute"),
        )
        assert result.reward == 1.0, result
        assert target.read_text() == "absolute"
    finally:
        env.close()


# ------------------------------------------------------------------------------- the bundled tasks


def test_bundled_desktop_tasks_need_no_shell() -> None:
    """Static check (the scripted policies in test_desktop_tasks.py run them on a host env)."""
    known = set(UbuntuController().desktop.known_apps)
    for item in load_taskset("desktop-basic"):
        for call in item.setup or []:
            assert call.function not in ("run", "bash", "execute"), (item.id, call)
            if call.function in ("launch", "launch_app"):
                assert call.args[0] in known, (item.id, call)
            if call.function == "open_file":
                assert len(call.args) < 2 or call.args[1] in known, (item.id, call)
        for call in item.evaluate or []:
            assert call.function != "command_output_contains", (item.id, call)
