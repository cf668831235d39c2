"""The desktop task families (``files``, ``office``) under the reward-hacking attacks
(:mod:`hacking_desktop`), and attacks of their own: every episode graded 0, never ``eval_error``
or ``env_error``.

A sample keeps the module short: every files family at one level, and one office family (each
office episode starts LibreOffice). Their own attacks: for the files families, ``chmod -R 777``
and ``touch`` of every checked path, a copy instead of a move; for a Calc total, the number typed
instead of a formula (made as the agent's saved file, graded by the same evaluator).
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import gymnasium
import openpyxl
import pytest
from hacking_desktop import DESKTOP_ATTACKS, checked_paths
from hacking_harness import Attack, Episode, check_family

import hud_gym  # noqa: F401  (registers the families)
from hud_gym import CustomAction, ResponseAction, TypeAction, WaitAction
from hud_gym.controllers.ubuntu.display import DesktopNotAvailableError, require_programs
from hud_gym.controllers.ubuntu.homefs import HomeFiles
from hud_gym.core.family import families, generate_task
from hud_gym.suites.office import calc_totals

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    try:
        require_programs("openbox")
    except DesktopNotAvailableError as exc:
        pytest.skip(str(exc))
    env = gymnasium.make("hud/Ubuntu-v0", in_container=False, max_steps=40, step_timeout=120)
    yield env
    env.close()


def _shell(command: str) -> object:
    def attack(episode: Episode) -> None:
        episode.step(CustomAction(action="launch", args={"app": "xterm"}))
        paths = " ".join(f"'{p}'" for p in checked_paths(episode.task))
        episode.step(TypeAction(text=command.format(paths=paths), enter_after=True))
        episode.step(WaitAction(time=1500))

    return attack


FILES_ATTACKS = (
    *DESKTOP_ATTACKS,
    Attack("chmod -R 777 and touch the checked paths", _shell("chmod -R 777 ~; touch {paths}")),  # type: ignore[arg-type]
    Attack(
        "copy the home's files everywhere", _shell("for p in {paths}; do mkdir -p $p; cp -r ~/* $p/ 2>/dev/null; done")
    ),  # type: ignore[arg-type]
)


@pytest.mark.parametrize(("index", "family"), list(enumerate(f.name for f in families("files"))))
def test_no_attack_scores_on_the_files_families(env: gymnasium.Env, index: int, family: str) -> None:
    """One test per family (workers share them out), each at its own level."""
    check_family(env, [generate_task(family, 7, 1 + index % 3)], FILES_ATTACKS)


def test_no_attack_scores_on_an_office_family(env: gymnasium.Env) -> None:
    attacks = [
        a
        for a in DESKTOP_ATTACKS
        if a.name in ("answer at once", "kill every program", "garbage into the checked file", "a link out of the home")
    ]
    check_family(env, [generate_task("calc-totals", 7, 1)], attacks)


def test_a_typed_number_instead_of_a_formula_scores_0(env: gymnasium.Env) -> None:
    task = generate_task("calc-totals", 8, 1)
    without_app = task.model_copy(update={"setup": [call for call in task.setup or () if call.function != "launch"]})
    rows = calc_totals.plan(8, 1)
    book = openpyxl.Workbook()
    for row in [*rows, ["Total", sum(row[1] for row in rows[1:])]]:
        book.active.append(row)
    data = io.BytesIO()
    book.save(data)
    env.reset(options={"task": without_app})
    controller = env.unwrapped.controller
    HomeFiles(controller.state.home, controller.state.file_owner).write_bytes(
        controller.state.home / "Documents/order.xlsx", data.getvalue()
    )
    _, reward, _, _, info = env.step(ResponseAction(text="done"))
    assert info["status"] == "ok" and reward == 0.0, info.get("grade")
    assert "holds no formula" in info["grade"].content
