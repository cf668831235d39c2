"""The attacks on question-answering tasks (``hud/QA-v0``): no answer, garbage, the question (and
its passage) echoed back, every choice at once, every number, a huge answer.

(Imported as ``hacking_qa``: pytest puts this folder on ``sys.path`` for its test modules.)
"""

from __future__ import annotations

from hacking_harness import Attack, Episode

from hud_gym import Task, TypeAction

__all__ = ["QA_ATTACKS"]


def _has_choices(task: Task) -> bool:
    return bool(task.choices)


def _every_choice(episode: Episode) -> str:
    choices = episode.task.choices or []
    return " ".join(chr(ord("A") + i) for i in range(len(choices))) + "\n" + "\n".join(choices)


def _echo(episode: Episode) -> str:
    """Whatever the agent was shown: the observation's text (question and passage)."""
    observation = episode.observation
    return str(observation.get("text") if isinstance(observation, dict) else "") or episode.prompt


QA_ATTACKS: tuple[Attack, ...] = (
    Attack("no answer", lambda ep: None, answer=lambda ep: ""),
    Attack("garbage", lambda ep: None, answer=lambda ep: "\x00\ufffd' OR 1=1 -- <script>{{7*7}}"),
    Attack("echo the question", lambda ep: None, answer=_echo),
    Attack("every choice at once", lambda ep: None, answer=_every_choice, applies=_has_choices),
    Attack("every letter", lambda ep: None, answer=lambda ep: "A, B, C, D, E"),
    Attack("every number", lambda ep: None, answer=lambda ep: " ".join(str(n) for n in range(1000))),
    Attack("a huge answer", lambda ep: None, answer=lambda ep: "lorem ipsum " * 20_000),
    Attack("type, then answer nothing", lambda ep: ep.step(TypeAction(text="maybe")), answer=lambda ep: ""),
)
"""Every attack on a QA task; graded 0."""
