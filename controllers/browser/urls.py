"""Which URLs the browser gym opens: the navigation policy that keeps the host out of reach.

Opened: ``http:``, ``https:``, ``data:`` (the document is the URL itself: an opaque origin that
reads nothing of the host) and ``about:blank``. Refused, with a message that names the rule:

- ``file:`` (the host's files), unless ``allow_file_urls`` names a directory: then the files
  under it, and only those (symlinks resolved, ``..`` resolved; a ``True`` is not a directory);
- ``view-source:`` of anything, ``chrome:``, ``chrome-extension:``, ``chrome-untrusted:``,
  ``devtools:`` and ``about:`` pages other than ``about:blank`` (browser internals, some of which
  crash or exhaust the browser every env shares: ``chrome://crash``, ``chrome://memory-exhaust``);
- ``javascript:`` (not a navigation: it runs script in the current page, so an agent could write
  the state a page-graded task reads), ``blob:``, ``filesystem:`` and every other scheme.

Where it is enforced:

1. every navigation hud-gym starts (the agent's ``goto`` and ``new_tab``, a task's setup
   ``goto``) is checked first: the agent gets an ``action_error``, a task a setup error;
2. pages cannot reach them either. Chromium itself refuses navigations, frames, popups and
   redirects from web pages to ``file:``, ``chrome:``, ``devtools:`` and ``view-source:`` URLs;
   on top of that every tab's own DevTools session intercepts its ``file:`` requests and refuses
   them (:data:`FILE_REQUESTS`), whoever started them. With ``allow_file_urls`` a page under the
   directory is itself a ``file:`` page, which Chromium lets open other files: then every
   ``file:`` request of the context (popups and frames included) is routed through
   :meth:`UrlPolicy.file_allowed` instead (:meth:`UrlPolicy.guard_context`).

Example:
    >>> policy = UrlPolicy()
    >>> policy.check("example.com")
    'http://example.com'
    >>> policy.check("file:///etc/passwd")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NavigationRefused: navigation to file:///etc/passwd refused: file: URLs are the host's files ...
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from hud_gym.errors import HudGymError

__all__ = ["FILE_REQUESTS", "NavigationRefused", "UrlPolicy", "normalize_url", "with_scheme"]

FILE_REQUESTS: dict[str, Any] = {"patterns": [{"urlPattern": "file:*", "requestStage": "Request"}]}
"""``Fetch.enable`` parameters that pause a tab's ``file:`` requests (and nothing else)."""

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
_OPENED_SCHEMES = frozenset({"http", "https", "data"})
_INTERNAL = "a browser-internal page (chrome:, devtools:, view-source:, about: ... are never opened)"
_REASONS = {
    "javascript": "javascript: URLs run script in the current page instead of opening one",
    "view-source": "view-source: is never opened (it would show the source of any URL, files included)",
}


class NavigationRefused(HudGymError, ValueError):
    """A URL the navigation policy does not open; the message names the rule."""


def normalize_url(url: str) -> str:
    """``url`` as Chromium reads it: leading and trailing control characters and spaces stripped,
    tabs and newlines removed wherever they are (so ``" fi\\tle:///x"`` is a ``file:`` URL)."""
    return re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(0x21))))


def with_scheme(url: str) -> str:
    """``url`` with ``http://`` when it has no scheme (``about:``, ``data:``, ``file:`` ... kept;
    ``localhost:8000`` is a host and port, not a scheme)."""
    if _SCHEME.match(url) and not re.match(r"^[^:/]+:\d", url):
        return url
    return "http://" + url


class UrlPolicy:
    """The URLs this env opens; see the module docstring.

    Args:
        allow_file_urls: the one directory whose files (and sub-directories) pages may open as
            ``file:`` URLs; ``None`` (default) opens no file at all.

    Raises:
        ValueError: ``allow_file_urls`` is not the path of an existing directory.
    """

    def __init__(self, allow_file_urls: str | os.PathLike[str] | None = None) -> None:
        self.file_root: Path | None = None
        if allow_file_urls is None:
            return
        self.check_path(allow_file_urls)
        root = Path(allow_file_urls).expanduser()
        if not root.is_dir():
            raise ValueError(f"allow_file_urls={str(allow_file_urls)!r} is not an existing directory")
        self.file_root = root.resolve()

    @staticmethod
    def check_path(allow_file_urls: object) -> None:
        """Raise :class:`ValueError` unless ``allow_file_urls`` is a path (its existence is not
        checked: a remote controller's directory is on the server's machine)."""
        if isinstance(allow_file_urls, bool) or not isinstance(allow_file_urls, (str, os.PathLike)):
            raise ValueError(
                f"allow_file_urls names the one directory whose files pages may open (a path), got "
                f"{allow_file_urls!r}: there is no 'every file' setting"
            )

    def check(self, url: str) -> str:
        """The URL to open for ``url`` (``http://`` added when it has no scheme).

        Raises:
            NavigationRefused: the policy does not open it; the message says why and how to allow
                ``file:`` URLs when that is what was refused.
        """
        target = with_scheme(normalize_url(url))
        match = _SCHEME.match(target)
        scheme = match.group(1).lower() if match else ""
        rest = target[len(scheme) + 1 :]
        if scheme in _OPENED_SCHEMES:
            return target
        if scheme == "about" and re.fullmatch(r"blank([?#].*)?", rest, re.DOTALL):
            return target
        if scheme == "file":
            if self.file_allowed(target):
                return target
            if self.file_root is None:
                reason = (
                    "file: URLs are the host's files and are not opened; "
                    "allow_file_urls=<directory> opens the files under one directory"
                )
            else:
                reason = f"it is outside the directory allow_file_urls={str(self.file_root)!r}"
            raise NavigationRefused(f"navigation to {target} refused: {reason}")
        reason = _REASONS.get(scheme) or (
            f"{scheme}: is {_INTERNAL}"
            if scheme in ("chrome", "chrome-extension", "chrome-untrusted", "devtools", "about", "chrome-error")
            else f"{scheme + ': URLs' if scheme else 'such URLs'} are not opened (only http:, https:, data: and about:blank)"
        )
        raise NavigationRefused(f"navigation to {target} refused: {reason}")

    def file_allowed(self, url: str) -> bool:
        """Whether ``url`` (a ``file:`` URL) is a file under :attr:`file_root`, once ``..``,
        percent-escapes, backslashes and symlinks are resolved."""
        if self.file_root is None:
            return False
        parts = urlsplit(normalize_url(url))
        if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
            return False
        path = unquote(parts.path).replace("\\", "/")
        if "\0" in path or not path.startswith("/"):
            return False
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):  # a symlink loop
            return False
        return resolved.is_relative_to(self.file_root)

    async def guard_context(self, context: Any) -> None:
        """Route every ``file:`` request of a Playwright ``BrowserContext`` through
        :meth:`file_allowed` (popups and frames included); only with a :attr:`file_root`."""
        if self.file_root is None:
            return

        async def route(route: Any) -> None:
            if self.file_allowed(route.request.url):
                await route.continue_()
            else:
                await route.abort("accessdenied")

        await context.route(re.compile(r"^file:", re.IGNORECASE), route)
