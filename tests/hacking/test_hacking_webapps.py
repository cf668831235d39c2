"""The web-app families under attack: leaving the app, forged pages, reloads, a stale episode's
page, clicking everywhere, garbage: every one is graded 0 (the grade is the episode's own
database, which only its own pages change)."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import pytest
from hacking_harness import check_family

from hud_gym.core.family import generate_task
from hud_gym.suites.webapps.attacks import WEB_ATTACKS
from hud_gym.suites.webapps.families import ENV_OPTIONS, FAMILIES

pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def env() -> Iterator[gymnasium.Env]:
    env = gymnasium.make("hud/Browser-v0", **ENV_OPTIONS, step_timeout=90)
    yield env
    env.close()


@pytest.mark.parametrize("app", ["mail", "shop", "cal", "admin"])
def test_no_attack_scores_on_a_web_app(env: gymnasium.Env, app: str) -> None:
    tasks = [generate_task(f.name, 0, 1) for f in FAMILIES if f.name.startswith(app)]
    verdicts = check_family(env, tasks[:2], WEB_ATTACKS)
    assert len(verdicts) == 2 * len(WEB_ATTACKS)
