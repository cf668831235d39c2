"""The admin panel's families: moderate posts, edit settings, and deactivate users in bulk
(difficulty = posts, settings or users to change).

Each check reads the episode's tables and requires everything else unchanged.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hud_gym.suites.webapps.admin import SETTINGS, admin_dataset
from hud_gym.suites.webapps.data import TOPICS, rng
from hud_gym.suites.webapps.functions import family_task
from hud_gym.suites.webapps.oracle import Op, click, fill, press
from hud_gym.task import Task

__all__ = ["bulk_task", "check_bulk", "check_moderate", "check_settings", "moderate_task", "settings_task"]


def moderate_task(seed: int, difficulty: int) -> Task:
    """Reject ``difficulty`` pending posts (by title), leaving the others pending."""
    pending = [p for p in admin_dataset(seed)["posts"] if p["status"] == "pending"]
    targets = rng(seed, "admin-moderate").sample(pending, difficulty)
    plan = [
        op
        for t in targets
        for op in (click("Posts", "a"), click(t["title"], "a"), click("Reject", "a"), click("Confirm", "button"))
    ]
    titles = "; ".join(f"'{t['title']}'" for t in targets)
    prompt = f"In the admin panel, reject these pending posts and leave every other post as it is: {titles}."
    return family_task(
        "admin-moderate", "admin", seed, difficulty, prompt, {"seed": seed, "ids": [t["id"] for t in targets]}, plan
    )


def check_moderate(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """The targets are rejected; every other post keeps its status."""
    status = dict(db.execute("SELECT id, status FROM posts").fetchall())
    wrong = [
        p["id"] for p in admin_dataset(params["seed"])["posts"]
        if status.get(p["id"]) != ("rejected" if p["id"] in params["ids"] else p["status"])
    ]  # fmt: skip
    return (not wrong, "moderated as asked" if not wrong else f"{len(wrong)} post(s) not as asked")


def settings_task(seed: int, difficulty: int) -> Task:
    """Change the first ``difficulty`` settings (site name, support email, max upload) to given values."""
    r = rng(seed, "admin-settings")
    word = r.choice([t for t in TOPICS if t not in admin_dataset(seed)["settings"]["site_name"]])
    new = {"site_name": f"{word} Hub", "support_email": f"support@{word.lower()}hub.example.org",
           "max_upload_mb": str(r.choice((25, 50, 75, 150)))}  # fmt: skip
    changes = dict(list(new.items())[:difficulty])
    plan = [click("Settings", "a"), *(fill(k, v) for k, v in changes.items()), click("Save settings", "button")]
    asks = "; ".join(f"{SETTINGS[k]}: {v}" for k, v in changes.items())
    prompt = f"In the admin panel, change these settings (leave the others as they are): {asks}."
    return family_task("admin-settings", "admin", seed, difficulty, prompt, {"seed": seed, "changes": changes}, plan)


def check_settings(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """The changed settings have their new values, the others their old ones."""
    values = dict(db.execute("SELECT key, value FROM settings").fetchall())
    want = {**admin_dataset(params["seed"])["settings"], **params["changes"]}
    return (values == want, "settings as asked" if values == want else "the settings are not as asked")


def bulk_task(seed: int, difficulty: int) -> Task:
    """Deactivate ``difficulty`` active users (by name), leaving every other user as is."""
    active = [u for u in admin_dataset(seed)["users"] if u["active"]]
    targets = rng(seed, "admin-bulk").sample(active, difficulty)
    plan: list[Op] = [click("Users", "a")]
    for t in targets:
        plan += [
            fill("q", t["name"]),
            press("enter"),
            click(f"Select {t['name']}", "input"),
            click("Deactivate", "button"),
        ]
    names = ", ".join(t["name"] for t in targets)
    prompt = f"In the admin panel, deactivate these users (change nothing else): {names}."
    return family_task(
        "admin-bulk", "admin", seed, difficulty, prompt, {"seed": seed, "ids": [t["id"] for t in targets]}, plan
    )


def check_bulk(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """The targets are inactive; every user keeps its role, every other user its status."""
    rows = {i: (role, active) for i, role, active in db.execute("SELECT id, role, active FROM users")}
    wrong = [
        u["id"] for u in admin_dataset(params["seed"])["users"]
        if rows.get(u["id"]) != (u["role"], 0 if u["id"] in params["ids"] else u["active"])
    ]  # fmt: skip
    return (not wrong, "users as asked" if not wrong else f"{len(wrong)} user(s) not as asked")
