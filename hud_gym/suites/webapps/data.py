"""Seeded data shared by the web apps: people, words, and the random generator of a seed.

Everything here is a pure function of the seed (``random.Random`` seeded with a string, stable
across Python versions and processes), so a task's data is the same wherever it is generated.
"""

from __future__ import annotations

import random

__all__ = ["FIRST", "LAST", "NOUNS", "TOPICS", "Person", "people", "rng"]

FIRST = (
    "Ada", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena",
    "Marta", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Samir", "Tessa", "Umar", "Vera", "Wendy", "Yusuf",
)  # fmt: skip
LAST = (
    "Abbott", "Berg", "Castro", "Dumont", "Eriksen", "Fischer", "Garcia", "Horvat", "Ivanova", "Jensen",
    "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Schmidt", "Tanaka", "Weber",
)  # fmt: skip
TOPICS = (
    "Budget", "Roadmap", "Offsite", "Hiring", "Invoice", "Security", "Launch", "Contract", "Training",
    "Migration", "Quarterly", "Design", "Vendor", "Audit", "Support", "Pricing",
)  # fmt: skip
NOUNS = (
    "review", "update", "question", "draft", "plan", "notes", "request", "summary", "follow-up", "schedule",
    "approval", "feedback",
)  # fmt: skip

Person = tuple[str, str]
"""A person: full name and e-mail address."""


def rng(seed: int, app: str) -> random.Random:
    """The random generator of ``app``'s data for ``seed``."""
    return random.Random(f"hud-gym-webapps/{app}/{seed}")


def people(r: random.Random, n: int) -> list[Person]:
    """``n`` people with distinct names and addresses."""
    names = r.sample([f"{first} {last}" for first in FIRST for last in LAST], n)
    return [(name, name.lower().replace(" ", ".") + "@example.com") for name in names]
