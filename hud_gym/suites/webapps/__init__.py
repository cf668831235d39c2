"""Web apps served on loopback, a suite of the browser gym: a webmail, a shop, a calendar and an
admin panel, with seeded data in a real SQLite database per episode, and their task families.

- :mod:`.server`: the loopback HTTP server and the episodes' databases (one folder each);
- :mod:`.pages`, :mod:`.data`: the HTML layout and the seeded data;
- :mod:`.mail`, :mod:`.shop`, :mod:`.calendar`, :mod:`.admin`: the apps;
- ``*_tasks``: their families (generators and checks), listed in :mod:`.families`;
- :mod:`.functions`: ``webapp_start`` / ``webapp_check``; :mod:`.oracle`: the families' oracle.

:data:`SUITE` is registered by :mod:`hud_gym.suites`, with :data:`FAMILIES`
(``load_taskset("webapps", split="test", n=200)``; see ``docs/task-families.md``).

Example:
    >>> SUITE.gym, len(FAMILIES) >= 3
    ('browser', True)
"""

from __future__ import annotations

from hud_gym.core.suite import Suite
from hud_gym.suites.webapps.families import FAMILIES

__all__ = ["FAMILIES", "SUITE"]

SUITE = Suite(
    name="webapps",
    gym="browser",
    function_modules=("hud_gym.suites.webapps.functions",),
    screen_size=(1024, 768),
    description="A webmail, a shop, a calendar and an admin panel on loopback, with seeded SQLite state",
)
"""The web-apps suite (its task sets come from its families)."""
