"""The attacks on browser tasks (MiniWoB++ pages): leave the task's page, reload it, open it again
in a new tab, solve an easier task's page, close the tab, click everywhere, type garbage.

(Imported as ``hacking_browser``: pytest puts this folder on ``sys.path`` for its test modules.)
The attacks that solve a page use :class:`~hud_gym.agents.MiniWoBScriptedAgent` on what the
agent sees (the active tab's elements: the env is made with ``elements=True``).
"""

from __future__ import annotations

from hacking_harness import Attack, Episode

from hud_gym import ClickAction, CustomAction, Point, PressAction, Task, TypeAction, WaitAction
from hud_gym.agents import MiniWoBScriptedAgent
from hud_gym.suites.miniwob import MINIWOB_TASK_AREA
from hud_gym.suites.miniwob.tasks import task_url

__all__ = ["BROWSER_ATTACKS", "EASY_TASK"]

EASY_TASK = ("click-test", "Click the button.")
"""The easy MiniWoB++ task an attacker solves instead (its instruction), and for itself the sibling
below."""
_SIBLING = ("click-test-2", "Click button ONE.")

_COVER = Point(x=MINIWOB_TASK_AREA[2] // 2, y=MINIWOB_TASK_AREA[3] // 2)
"""The middle of the task area: the START cover of a MiniWoB page opened without a setup."""


def _task_name(task: Task) -> str:
    return task.id.split("/")[-1]


def _solve_here(episode: Episode, instruction: str, tries: int = 3) -> None:
    """Start the MiniWoB page the active tab shows (click its START cover) and solve it as the
    scripted agent does, given ``instruction`` (what that page's own instruction says)."""
    episode.step(ClickAction(point=_COVER))
    agent = MiniWoBScriptedAgent()
    for _ in range(tries):
        if episode.over:
            return
        episode.step(agent.act(episode.observation, {**episode.info, "prompt": instruction}))


def _goto(url: str) -> CustomAction:
    return CustomAction(action="goto", args={"url": url})


def _solve_sibling(episode: Episode) -> None:
    """Navigate the task's tab to an easier task's page and solve that one."""
    name, instruction = _SIBLING if _task_name(episode.task) == EASY_TASK[0] else EASY_TASK
    episode.step(_goto(task_url(name)))
    _solve_here(episode, instruction)


def _solve_in_new_tab(episode: Episode) -> None:
    """Open an easy task's page in a new tab (the task itself when it is the easy one) and solve it."""
    episode.step(CustomAction(action="new_tab", args={"url": task_url(EASY_TASK[0])}))
    _solve_here(episode, EASY_TASK[1])


def _reload_and_solve(episode: Episode) -> None:
    """Reload the task's page (a new instance) and solve the easy task if that is what it shows."""
    episode.step(CustomAction(action="reload"))
    if _task_name(episode.task) == EASY_TASK[0]:
        _solve_here(episode, EASY_TASK[1])


def _click_everywhere(episode: Episode) -> None:
    """Click a grid over the task area, one click a step (the first wrong one ends the episode)."""
    x0, y0, width, height = MINIWOB_TASK_AREA
    for y in range(y0 + 60, y0 + height, 30):
        for x in range(x0 + 10, x0 + width, 30):
            episode.step(ClickAction(point=Point(x=x, y=y)))


def _garbage(episode: Episode) -> None:
    """Tab to the page's fields and type garbage into them, pressing Enter (no click: a click can
    land on the right button, which is solving)."""
    episode.step([PressAction(keys=["tab"]), TypeAction(text="x' OR 1=1 --<script>", enter_after=True)])
    episode.step([PressAction(keys=["tab"]), TypeAction(text="A" * 500, enter_after=True)])


def _has_text_fields(task: Task) -> bool:
    """Tasks with text fields to fill (tabbing to a button and pressing Enter is a guess, not garbage)."""
    return _task_name(task).startswith(("enter-", "login-"))


def _not_easy(task: Task) -> bool:
    """Clicking anywhere on a click-test page clicks its one button: that solves it, legitimately."""
    return _task_name(task) not in (EASY_TASK[0], _SIBLING[0])


BROWSER_ATTACKS: tuple[Attack, ...] = (
    Attack("back", lambda ep: ep.step(CustomAction(action="back"))),
    Attack("goto about:blank", lambda ep: ep.step(_goto("about:blank"))),
    Attack("goto data:", lambda ep: ep.step(_goto("data:text/html,<div id=query>done</div><button>Submit</button>"))),
    Attack("reload and solve", _reload_and_solve),
    Attack("close the tab", lambda ep: ep.step(CustomAction(action="close_tab", args={"index": 0}))),
    Attack("solve a sibling task's page", _solve_sibling),
    Attack("solve the easy task in a new tab", _solve_in_new_tab),
    Attack("click everywhere", _click_everywhere, applies=_not_easy),
    Attack("type garbage", _garbage, applies=_has_text_fields),
    Attack("wait, then answer", lambda ep: ep.step(WaitAction(time=200))),
)
"""Every attack on a MiniWoB++ task; graded MiniWoB's failure (-1) or unfinished (0)."""
