"""The suites hud-gym ships, one package each, registered when :mod:`hud_gym` is imported.

A suite is a benchmark or a task family that extends a gym (:class:`~hud_gym.core.suite.Suite`):
its package defines ``SUITE`` (task sets, functions, options, hooks, each by import path, so that
registering imports nothing heavy) and the line below registers it. A suite defined elsewhere
registers itself the same way: ``hud_gym.register_suite(MY_SUITE)``. See ``docs/adding-a-suite.md``.

- :mod:`.miniwob`: MiniWoB++ in the browser gym;
- :mod:`.qa_basic`: the ``qa-basic`` task set of the QA gym;
- :mod:`.desktop_basic`: the ``desktop-basic`` task set of the Ubuntu gym;
- :mod:`.osworld`: OSWorld's Ubuntu tasks (``OSWorld-Ubuntu``) on the Ubuntu gym;
- :mod:`.webapps`: web apps on loopback and their task families (``webapps``);
- :mod:`.files`, :mod:`.office`: the ``files`` and ``office`` task families of the Ubuntu gym.

Example:
    >>> [suite.name for suite in BUILTIN_SUITES]
    ['qa-basic', 'miniwob', 'desktop-basic', 'osworld', 'webapps', 'files', 'office']
"""

from __future__ import annotations

from hud_gym.core.family import register_family
from hud_gym.core.suite import Suite, register_suite
from hud_gym.suites import desktop_basic, files, miniwob, office, osworld, qa_basic, webapps

__all__ = ["BUILTIN_SUITES"]

BUILTIN_SUITES: tuple[Suite, ...] = (
    register_suite(qa_basic.SUITE),
    register_suite(miniwob.SUITE),
    register_suite(desktop_basic.SUITE),
    register_suite(osworld.SUITE),
    register_suite(webapps.SUITE),
    register_suite(files.SUITE),
    register_suite(office.SUITE),
)
"""The suites hud-gym ships."""

for _family in (*webapps.FAMILIES, *files.FAMILIES, *office.FAMILIES):
    register_family(_family)
