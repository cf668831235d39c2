"""Griffe extension for the API reference: hud-gym's docstrings read as the site's Markdown.

The docstrings are Google style with a few reStructuredText habits that griffe takes literally:

- doctests under ``Example:``: griffe reads only ``Examples:`` as the examples section (whose ``>>>``
  blocks it renders as code) and takes ``Example:`` for a Markdown admonition, where ``>>>`` would
  be a quote and ``['a']`` a link;
- Sphinx roles (``:class:`~hud_gym.task.Task```, ``:func:`make```): shown as code, ``~`` keeping
  the last name only, as Sphinx does.

This rewrites the docstring griffe parses, never the source. Loaded by ``mkdocs.yml``
(mkdocstrings' ``extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const|term):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def markdown_docstring(text: str) -> str:
    """``text`` with ``Example:`` headings as ``Examples:`` and Sphinx roles as code spans.

    Examples:
        >>> markdown_docstring("See :class:`~hud_gym.task.Task`.")
        'See `Task`.'
    """
    return _ROLE.sub(_role, _EXAMPLE.sub(r"\1Examples:", text))


class MarkdownDocstrings(griffe.Extension):
    """Rewrite every docstring griffe loads with :func:`markdown_docstring`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite ``obj``'s docstring before it is parsed."""
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
