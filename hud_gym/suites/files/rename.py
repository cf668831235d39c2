"""``files-rename``: rename the photos of ``~/photos`` by a pattern.

- difficulty 1: change the extension ``.jpeg`` to ``.jpg``;
- difficulty 2: ``IMG_<n>.jpeg`` becomes ``<event>-<n>.jpg`` (the number kept);
- difficulty 3: as 2, with the numbers renumbered from 1 in the original order, three digits
  (``<event>-001.jpg``).

Graded by the tree of ``~/photos`` (each photo's content under its new name, nothing else). The
oracle types one ``mv`` per file.

Example:
    >>> sorted(plan(1, 1).renames.values())[0].endswith(".jpg")
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from hud_gym.suites.files.script import ScriptOracle, family_random, family_task, shell_script
from hud_gym.task import Task

__all__ = ["generate", "oracle", "plan"]

FAMILY = "files-rename"
_EVENTS = ("holiday", "wedding", "garden", "concert", "hiking", "birthday", "museum", "harbour")


@dataclass(frozen=True)
class Plan:
    """The photos (old name -> content), their new names, and the rule."""

    photos: dict[str, str]
    renames: dict[str, str]
    rule: str


def plan(seed: int, difficulty: int) -> Plan:
    """The family's parameters for ``seed`` and ``difficulty``."""
    rng = family_random(FAMILY, seed, difficulty)
    numbers = sorted(rng.sample(range(1, 9999), 2 + 2 * difficulty))
    event = rng.choice(_EVENTS)
    photos = {f"IMG_{n:04d}.jpeg": f"JPEG {event} {n} {rng.randrange(10**8)}\n" for n in numbers}
    if difficulty == 1:
        renames = {name: name.removesuffix(".jpeg") + ".jpg" for name in photos}
        rule = "Rename every photo in ~/photos from the extension .jpeg to .jpg (IMG_0042.jpeg becomes IMG_0042.jpg)."
    elif difficulty == 2:
        renames = {f"IMG_{n:04d}.jpeg": f"{event}-{n:04d}.jpg" for n in numbers}
        rule = f"Rename every photo in ~/photos from IMG_<number>.jpeg to {event}-<number>.jpg, keeping the four-digit number (IMG_0042.jpeg becomes {event}-0042.jpg)."
    else:
        renames = {f"IMG_{n:04d}.jpeg": f"{event}-{i:03d}.jpg" for i, n in enumerate(numbers, start=1)}
        rule = f"Rename the photos in ~/photos to {event}-001.jpg, {event}-002.jpg, ... numbered from 1 in the order of their current numbers (the photo with the lowest IMG_ number becomes {event}-001.jpg)."
    return Plan(photos, renames, rule)


def generate(seed: int, difficulty: int) -> Task:
    """The task for ``seed`` and ``difficulty``."""
    p = plan(seed, difficulty)
    expected = {p.renames[name]: text for name, text in p.photos.items()}
    return family_task(
        suite="files",
        family=FAMILY,
        seed=seed,
        difficulty=difficulty,
        prompt=f"{p.rule} Keep the photos' contents; no other file stays in the folder. A terminal is open.",
        setup=[("write_tree", "photos", dict(p.photos)), ("launch", "xterm")],
        evaluate=[("tree_equals", "photos", expected)],
    )


def oracle(task: Task) -> ScriptOracle:
    """Types one ``mv`` per photo."""
    meta = task.metadata or {}
    p = plan(meta["seed"], meta["difficulty"])
    return shell_script(["cd ~/photos", *(f"mv {old} {new}" for old, new in sorted(p.renames.items()))])
