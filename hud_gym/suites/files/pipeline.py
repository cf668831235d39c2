"""``files-pipeline``: answer a question about a web server's log with a small shell pipeline.

- difficulty 1: the number of requests that failed with status 404, into ``~/count.txt``;
- difficulty 2: the distinct client addresses, one per line, into ``~/clients.txt``;
- difficulty 3: the number of requests per status code, ``<count> <status>`` per line, most
  frequent first, into ``~/report.txt``.

``~/logs/access.log`` has lines ``<address> <method> <path> <status>``. Graded by the output
file's lines (white space runs count as one space). The oracle types ``grep``/``cut``/``sort``/
``uniq`` pipelines.

Example:
    >>> plan(4, 1).answer[0].isdigit()
    True
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from hud_gym.suites.files.script import ScriptOracle, family_random, family_task, shell_script
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "files-pipeline"
_PATHS = ("/", "/index.html", "/login", "/api/items", "/cart", "/search", "/about", "/img/logo.png")
_METHODS = ("GET", "GET", "GET", "POST")
_OUTPUTS = {1: "count.txt", 2: "clients.txt", 3: "report.txt"}


@dataclass(frozen=True)
class Plan:
    """The log's text and the expected output lines."""

    log: str
    answer: tuple[str, ...]
    ordered: bool


def plan(seed: int, difficulty: int) -> Plan:
    """The family's parameters for ``seed`` and ``difficulty`` (status counts all differ, so the
    report's order is unique)."""
    rng = family_random(FAMILY, seed, difficulty)
    clients = [f"10.0.{rng.randrange(256)}.{rng.randrange(1, 255)}" for _ in range(3 + 2 * difficulty)]
    statuses = rng.sample(("200", "301", "404", "500", "403"), 3) + ["404"]
    counts = dict(zip(dict.fromkeys(statuses), rng.sample(range(2, 4 + 4 * difficulty), 4), strict=False))
    statuses_pool = [status for status, count in counts.items() for _ in range(count)]
    rng.shuffle(statuses_pool)
    lines = [f"{rng.choice(clients)} {rng.choice(_METHODS)} {rng.choice(_PATHS)} {s}" for s in statuses_pool]
    tally = Counter(line.split()[-1] for line in lines)
    if difficulty == 1:
        return Plan("\n".join(lines) + "\n", (str(tally["404"]),), True)
    if difficulty == 2:
        return Plan("\n".join(lines) + "\n", tuple(sorted({line.split()[0] for line in lines})), False)
    report = tuple(f"{n} {status}" for status, n in sorted(tally.items(), key=lambda item: -item[1]))
    return Plan("\n".join(lines) + "\n", report, True)


_GOALS = {
    1: "Write the number of requests that got the status 404 (the number only) into ~/count.txt.",
    2: "Write the distinct client addresses (the first field), one per line, into ~/clients.txt.",
    3: "Write the number of requests per status code into ~/report.txt, one line '<count> <status>' per status code, the most frequent first.",
}


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    p = plan(seed, difficulty)
    return family_task(
        suite="files",
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"~/logs/access.log is a web server's log: one request per line, '<client address> <method> <path> <status>'. {_GOALS[difficulty]} A terminal is open.",
        setup=[("write_tree", "logs", {"access.log": p.log}), ("launch", "xterm")],
        evaluate=[("file_lines", _OUTPUTS[difficulty], list(p.answer), p.ordered)],
    )


_COMMANDS = {
    1: ["grep -c ' 404$' logs/access.log > count.txt"],
    2: ["cut -d' ' -f1 logs/access.log > .clients", "sort -u .clients > clients.txt"],
    3: [
        "awk '{print $4}' logs/access.log > .statuses",
        "sort .statuses | uniq -c > .counts",
        "sort -rn .counts > report.txt",
    ],
}
"""The oracle's commands: one stage of the pipeline per line."""


def oracle(task: Task) -> ScriptOracle:
    """Types the pipeline, a stage per command (its intermediate files hidden in the home)."""
    return shell_script(_COMMANDS[int((task.metadata or {})["difficulty"])])
