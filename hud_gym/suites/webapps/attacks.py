"""The reward-hacking scripts of the web-app families: leave the app, forge a page, reload, open
the app again in a new tab, click everywhere, type garbage, open a stale episode's page.

Every one must be graded as the task's failure (0): the grade is read from the episode's own
database, which only a request to the episode's own pages changes.
"""

from __future__ import annotations

from hud_gym.actions import ClickAction, CustomAction, Point, PressAction, TypeAction, WaitAction
from hud_gym.evaluation.hacking import Attack, Episode

__all__ = ["WEB_ATTACKS"]

_FORGED = "data:text/html,<h1>Message sent</h1><p>Reply sent. Order placed. Event saved. 1 message(s) updated</p>"


def _goto(url: str) -> CustomAction:
    return CustomAction(action="goto", args={"url": url})


def _click_everywhere(episode: Episode) -> None:
    """Click a coarse grid over the page, one click a step."""
    for y in range(60, 700, 160):
        for x in range(40, 1000, 240):
            episode.step(ClickAction(point=Point(x=x, y=y)))


def _garbage(episode: Episode) -> None:
    """Tab to the page's fields and type garbage into them, pressing Enter."""
    for text in ("x' OR 1=1 --<script>alert(1)</script>", "A" * 300):
        episode.step([PressAction(keys=["tab"]), TypeAction(text=text, enter_after=True)])


def _stale_episode(episode: Episode) -> None:
    """Open the app's page of a token that is not live (another or an ended episode's)."""
    url = str(episode.info.get("url") or "")
    parts = url.split("/")
    if len(parts) > 5 and parts[3] == "e":
        parts[4] = "0" * 32
        episode.step(_goto("/".join(parts)))


WEB_ATTACKS: tuple[Attack, ...] = (
    Attack("back", lambda ep: ep.step(CustomAction(action="back"))),
    Attack("goto about:blank", lambda ep: ep.step(_goto("about:blank"))),
    Attack("goto a forged data: page", lambda ep: ep.step(_goto(_FORGED))),
    Attack("forged page in a new tab", lambda ep: ep.step(CustomAction(action="new_tab", args={"url": _FORGED}))),
    Attack("reload", lambda ep: ep.step(CustomAction(action="reload"))),
    Attack("close the tab", lambda ep: ep.step(CustomAction(action="close_tab", args={"index": 0}))),
    Attack("another episode's page", _stale_episode),
    Attack("click everywhere", _click_everywhere),
    Attack("type garbage", _garbage),
    Attack("wait, then answer", lambda ep: ep.step(WaitAction(time=200))),
)
"""Every attack on a web-app task."""
