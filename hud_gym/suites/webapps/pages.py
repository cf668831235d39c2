"""HTML of the web apps: the page layout, escaping, lists with pagination, redirects.

Every value shown is escaped (:func:`esc`); pages are server-rendered HTML forms (no script), laid
out to fit a 1024x768 screen.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

__all__ = ["PAGE_SIZE", "Response", "esc", "layout", "not_found", "pager", "redirect"]

PAGE_SIZE = 8
"""Rows of a list page."""

_CSS = """
body{font-family:sans-serif;margin:0;font-size:14px;color:#222}
header{background:#2d4a7a;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:center}
header a{color:#fff;text-decoration:none;padding:4px 8px}
header b{margin-right:24px}
main{padding:12px 16px}
main a{display:inline-block}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:5px 8px;text-align:left}
input[type=text],input[type=email],input[type=number],textarea{padding:4px;width:300px}
textarea{height:60px}
button,.btn{padding:5px 12px;margin:2px}
.flash{background:#e6f4e6;padding:6px;margin-bottom:8px}
.pager a{margin:0 6px}
form.inline{display:inline}
"""


@dataclass(frozen=True)
class Response:
    """An app's answer: status, HTML, and where a redirect goes."""

    status: int
    body: str
    location: str | None = None


def esc(value: object) -> str:
    """``value`` as HTML text."""
    return html.escape(str(value), quote=True)


def layout(title: str, nav: Sequence[tuple[str, str]], content: str, flash: str = "") -> Response:
    """A full page: the app's bar (``nav``: label, href), a flash message, the content."""
    links = "".join(f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in nav)
    note = f'<div class="flash">{esc(flash)}</div>' if flash else ""
    body = (
        f"<!doctype html><html><head><meta charset=utf-8><title>{esc(title)}</title><link rel=icon href='data:,'><style>{_CSS}</style></head>"
        f"<body><header><b>{esc(title)}</b>{links}</header><main>{note}{content}</main></body></html>"
    )
    return Response(200, body)


def redirect(location: str, flash: str = "") -> Response:
    """A 303 to ``location`` (with a flash message shown there)."""
    if flash:
        location += ("&" if "?" in location else "?") + urlencode({"flash": flash[:200]})
    return Response(303, "", location)


def not_found() -> Response:
    """The 404 page (an unknown page, or an episode that is not live)."""
    return Response(404, "<!doctype html><title>Not found</title><h1>Not found</h1>")


def pager(href: str, page: int, total: int, extra: dict[str, str] | None = None) -> str:
    """Links to the previous and next page of a list of ``total`` rows."""
    pages = max(1, -(-total // PAGE_SIZE))
    query = dict(extra or {})
    out = [f"Page {page} of {pages}"]
    if page > 1:
        out.append(f'<a href="{esc(href)}?{esc(urlencode({**query, "page": page - 1}))}">Previous</a>')
    if page < pages:
        out.append(f'<a href="{esc(href)}?{esc(urlencode({**query, "page": page + 1}))}">Next</a>')
    return f'<div class="pager">{" ".join(out)}</div>'


def page_number(value: str) -> int:
    """A page number from a query field (1 when it is not one)."""
    return int(value) if value.isdigit() and 0 < int(value) < 10_000 else 1
