"""The web-app families: three per app, each a generator, the shared plan oracle, and a check.

A family ``NAME`` of app module ``M`` has its generator and check in ``M_tasks`` (``NAME_task``,
``check_NAME``); :data:`FAMILIES` lists them, :data:`CHECKS` maps each name to its check. Importing
this module imports nothing heavy (registering the suite does not start a browser library).
"""

from __future__ import annotations

from hud_gym.core.family import Family

__all__ = ["CHECKS", "ENV_OPTIONS", "FAMILIES"]

_PKG = "hud_gym.suites.webapps"
_ORACLE = f"{_PKG}.oracle:plan_oracle"
ENV_OPTIONS = {"elements": True, "screen_size": (1024, 768), "max_episode_steps": 200}
"""The env the families' oracle plays in: element boxes in ``info``, room for the hardest level's steps."""

_SPECS: tuple[tuple[str, str, str, str], ...] = (
    # family, module, function stem, description
    ("mail-reply", "mail_tasks", "reply", "webmail: find emails by subject and reply with a text (difficulty: emails)"),
    ("mail-forward", "mail_tasks", "forward", "webmail: forward emails to an address (difficulty: emails)"),
    ("mail-label", "mail_tasks", "label", "webmail: label a sender's emails and archive them in bulk (difficulty: senders)"),
    ("shop-cart", "shop_tasks", "cart", "shop: search products and add them to the cart (difficulty: products)"),
    ("shop-cheapest", "shop_tasks", "cheapest", "shop: filter a category, sort by price, add the cheapest well-rated product (difficulty: categories)"),
    ("shop-checkout", "shop_tasks", "checkout", "shop: buy products and check out with an address (difficulty: products)"),
    ("cal-schedule", "calendar_tasks", "schedule", "calendar: schedule events in the earliest free hour of a day (difficulty: events)"),
    ("cal-reschedule", "calendar_tasks", "reschedule", "calendar: move events to given free slots (difficulty: events)"),
    ("cal-invite", "calendar_tasks", "invite", "calendar: add an attendee to events, keeping the others (difficulty: events)"),
    ("admin-moderate", "admin_tasks", "moderate", "admin panel: reject posts through a confirmation page (difficulty: posts)"),
    ("admin-settings", "admin_tasks", "settings", "admin panel: edit settings in a validated form (difficulty: settings)"),
    ("admin-bulk", "admin_tasks", "bulk", "admin panel: find users and deactivate them with a bulk action (difficulty: users)"),
)  # fmt: skip

FAMILIES: tuple[Family, ...] = tuple(
    Family(
        name=name,
        gym="browser",
        kind="webapps",
        generate=f"{_PKG}.{module}:{stem}_task",
        oracle=_ORACLE,
        description=description,
        attacks=f"{_PKG}.attacks:WEB_ATTACKS",
        env_options=ENV_OPTIONS,
    )
    for name, module, stem, description in _SPECS
)
"""Every web-app family."""

CHECKS: dict[str, str] = {name: f"{_PKG}.{module}:check_{stem}" for name, module, stem, _ in _SPECS}
"""Each family's check, by name: import path of ``fn(db, params) -> (done, explanation)``."""
