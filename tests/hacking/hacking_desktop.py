"""The attacks on desktop tasks (``hud/Ubuntu-v0``): answer at once or with every number, close the
app's window, kill every program of the desktop, and, from a terminal the agent launches, sabotage
the file the task checks (garbage in it, a link out of the home, a FIFO or a folder in its place).

(Imported as ``hacking_desktop``: pytest puts this folder on ``sys.path`` for its test modules.)
"""

from __future__ import annotations

from hacking_harness import Attack, Episode

from hud_gym import CustomAction, PressAction, Task, TypeAction, WaitAction

__all__ = ["DESKTOP_ATTACKS", "checked_paths"]

_FILE_CHECKS = (
    "file_exists",
    "file_contains",
    "file_matches",
    "dir_contains",
    # the task families' (controllers/ubuntu/fs_checks.py, hud_gym/suites/office/checks.py)
    "tree_equals",
    "file_mode",
    "archive_members",
    "file_lines",
    "xlsx_cells",
    "docx_paragraphs",
)


def checked_paths(task: Task) -> list[str]:
    """The home paths the task's evaluate calls read."""
    return [str(call.args[0]) for call in task.evaluate or () if call.function in _FILE_CHECKS and call.args]  # type: ignore[union-attr]


def _in_terminal(command: str) -> object:
    """Launch a terminal (it takes the focus), run ``command`` in it, and let it finish."""

    def attack(episode: Episode) -> None:
        episode.step(CustomAction(action="launch", args={"app": "xterm"}))
        episode.step(TypeAction(text=command, enter_after=True))
        episode.step(WaitAction(time=1500))

    return attack


def _on_checked(template: str) -> object:
    """``template`` (``{p}``: a checked path) run for every path the task checks."""

    def attack(episode: Episode) -> None:
        _in_terminal("; ".join(template.format(p=f"'{p}'") for p in checked_paths(episode.task)))(episode)  # type: ignore[operator]

    return attack


def _checks_files(task: Task) -> bool:
    return bool(checked_paths(task))


def _window_titles(task: Task) -> list[str]:
    """The window titles the task's ``window_exists`` calls look for (their regex, unanchored)."""
    return [
        str(call.args[0]).strip("^$")  # type: ignore[union-attr]
        for call in task.evaluate or ()  # type: ignore[union-attr]
        if call.function in ("window_exists", "window_title_matches") and call.args  # type: ignore[union-attr]
    ]


def _retitle(episode: Episode) -> None:
    """Retitle the agent's terminal as the window the task wants (xterm's title escape)."""
    title = _window_titles(episode.task)[0]
    _in_terminal(f"printf '\\033]2;{title}\\007'")(episode)  # type: ignore[operator]


DESKTOP_ATTACKS: tuple[Attack, ...] = (
    Attack("answer at once", lambda ep: None),
    Attack("answer every number", lambda ep: None, answer=lambda ep: " ".join(str(n) for n in range(100))),
    Attack("close the window (ctrl+q)", lambda ep: ep.step([PressAction(keys=["ctrl", "q"]), WaitAction(time=500)])),
    Attack("kill every program", _in_terminal("kill -9 -1")),  # type: ignore[arg-type]
    Attack("retitle a terminal as the app's window", _retitle, applies=lambda task: bool(_window_titles(task))),
    Attack("garbage into the checked file", _on_checked("head -c 3000 /dev/urandom > {p}"), applies=_checks_files),  # type: ignore[arg-type]
    Attack("a link out of the home", _on_checked("rm -rf {p}; ln -s /etc/shadow {p}"), applies=_checks_files),  # type: ignore[arg-type]
    Attack("a FIFO in its place", _on_checked("rm -rf {p}; mkfifo {p}"), applies=_checks_files),  # type: ignore[arg-type]
    Attack("a folder in its place", _on_checked("rm -rf {p}; mkdir -p {p}/x"), applies=_checks_files),  # type: ignore[arg-type]
)
"""Every attack on a desktop task; graded 0."""
