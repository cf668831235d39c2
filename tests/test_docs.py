"""The README and the docs site stay short, linked and buildable.

- README.md stays at most :data:`README_MAX_LINES` lines: what hud-gym is, how to install it, an
  example, the gyms, the CLI and links; everything else is a page of the site in ``docs/``.
- Every relative link of README.md and of ``docs/**/*.md`` leads to a file of the checkout, and
  an anchor (``page.md#section``, ``#section``) to a heading of that page.
- ``mkdocs build --strict`` passes (what ``make check`` and ``make docs`` run): no broken link, no
  page left out of the nav, no docstring mkdocstrings cannot read. mkdocs-material and
  mkdocstrings are dev dependencies, so the build always runs here, never skipped.
- The build fetches nothing: no plugin beyond search and mkdocstrings, no remote font.
- The API reference covers every name of ``hud_gym.__all__``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import mkdocs  # noqa: F401  (a dev dependency: the docs tests fail, not skip, without it)
import pytest
import yaml
from markdown.extensions.toc import slugify

import hud_gym

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 100

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def _markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans (their brackets are not links)."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def links(text: str) -> list[str]:
    """The targets of the Markdown links and images of ``text``, outside code."""
    return _LINK.findall(_prose(text))


def anchors(path: Path) -> set[str]:
    """The anchors of the headings of the Markdown file ``path`` (as mkdocs' toc makes them)."""
    return {
        slugify(re.sub(r"[`*]", "", heading), "-") for heading in _HEADING.findall(_FENCE.sub("", path.read_text()))
    }


def broken_links(path: Path) -> list[str]:
    """The relative links of ``path`` whose file, or whose anchor in that file, does not exist."""
    broken = []
    for target in links(path.read_text()):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # http:, https:, mailto: ...: not a file of the checkout
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    return broken


def test_readme_is_short() -> None:
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move the detail into a page of docs/"
    )


def test_the_link_checker_sees_broken_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# There\n\n## A section\n")
    page.write_text(
        "# Page\n\n[ok](there.md) [ok](there.md#a-section) [ok](#page) [web](https://example.com)\n"
        "[gone](missing.md) [no anchor](there.md#nowhere) ![img](img/x.png)\n"
        "`[not a link](nowhere.md)`\n\n```\n[not a link](nowhere.md)\n```\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "there.md#nowhere: no heading with that anchor",
        "img/x.png: no such file",
    ]


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    assert broken_links(path) == [], f"{path.relative_to(ROOT)} has broken links"


def test_docs_build_fetches_nothing() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["theme"]["name"] == "material"
    assert config["theme"]["font"] is False, "the theme would load its fonts from a font CDN"
    plugins = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    assert plugins <= {"search", "mkdocstrings"}, f"plugins beyond search and mkdocstrings: {plugins}"
    assert config["strict"] is True


def test_griffe_extension_reads_the_docstrings_as_markdown() -> None:
    spec = importlib.util.spec_from_file_location("griffe_markdown", DOCS / "griffe_markdown.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "Use :class:`~hud_gym.task.Task` or :func:`hud_gym.make`.\n\n    Example:\n        >>> 1\n        1\n"
    assert module.markdown_docstring(text) == (
        "Use `Task` or `hud_gym.make`.\n\n    Examples:\n        >>> 1\n        1\n"
    )


def _inventory(site: Path) -> set[str]:
    """The object names of the built site's ``objects.inv`` (Sphinx inventory v2, zlib-compressed)."""
    raw = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # four comment lines, then the compressed body
        header_end = raw.index(b"\n", header_end) + 1
    body = zlib.decompress(raw[header_end:]).decode()
    return {line.split(" ", 1)[0] for line in body.splitlines() if line}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_strict_docs_build(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml")]
        + ["--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=540,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    assert (site / "index.html").is_file() and (site / "reference" / "index.html").is_file()

    documented = _inventory(site)
    missing = [
        name
        for name in hud_gym.__all__
        if f"hud_gym.{name}" not in documented and not any(n.endswith(f".{name}") for n in documented)
    ]
    assert missing == [], f"names of hud_gym.__all__ missing from the API reference (docs/reference/): {missing}"
