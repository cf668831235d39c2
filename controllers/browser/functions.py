"""Setup and evaluate functions of the browser gym (``hud/Browser-v0``).

They work against the live page of ``ctx.controller`` (a
:class:`~hud_gym.controllers.browser.controller.BrowserController`; its session,
``ctx.controller.state``, has the active tab, the context, the navigation policy): the ``async`` ones on the
env's event loop, the sync ones on a thread (:mod:`hud_gym.evaluation.calls`); evaluate functions
check the page as it is at evaluate time and return a :class:`~hud_gym.evaluation.Grade`.

The setup functions that open or change the page bind it to the episode, and the evaluators that
read the page's state grade only a page the setup made (:mod:`.binding`: a ``data:`` page or
another site the agent opened is graded as the task's failure, ``config["graded_pages"]`` says
otherwise). The URL and cookie evaluators read the browser as it is.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from hud_gym.controllers.browser.binding import bind, graded_page
from hud_gym.evaluation import FunctionContext, Grade, evaluate_function, setup_function
from hud_gym.evaluation.patterns import PatternError, compile_task_pattern

__all__: list[str] = []

NAVIGATION_TIMEOUT_MS = 10_000
ELEMENT_TIMEOUT_MS = 10_000

# Visible text of the page and of its same-origin frames, in one round trip.
_PAGE_TEXT_JS = """() => {
  const texts = [];
  const walk = (doc) => {
    if (!doc || !doc.body) return;
    texts.push(doc.body.innerText || "");
    for (const el of doc.querySelectorAll("input, textarea")) {
      if (el.value) texts.push(el.value);
    }
    for (const frame of doc.querySelectorAll("iframe, frame")) {
      try { walk(frame.contentDocument); } catch (e) { /* cross-origin */ }
    }
  };
  walk(document);
  return texts.join("\\n");
}"""


def _page(ctx: FunctionContext) -> Any:
    return ctx.controller.state.page


# ------------------------------------------------------------------------------- setup


@setup_function("browser", aliases=("navigate_to_url", "navigate"))
async def goto(ctx: FunctionContext, url: str, wait_until: str = "domcontentloaded") -> None:
    """Open ``url`` (``http://`` added when there is no scheme); wait for DOM content, 10 s cap.

    Raises:
        NavigationRefused: the env's URL policy does not open ``url`` (``file:`` outside
            ``allow_file_urls``, ``chrome:``, ``view-source:`` ...; see ``controllers/browser/urls.py``).
    """
    target = ctx.controller.state.url_policy.check(url)
    await _page(ctx).goto(target, wait_until=wait_until, timeout=NAVIGATION_TIMEOUT_MS)
    await bind(ctx, _page(ctx))


@setup_function("browser")
async def load_html_content(ctx: FunctionContext, html: str) -> None:
    """Show ``html`` as the page's content."""
    await _page(ctx).set_content(html, wait_until="domcontentloaded", timeout=NAVIGATION_TIMEOUT_MS)
    await bind(ctx, _page(ctx))


@setup_function("browser")
async def wait_for_element(ctx: FunctionContext, selector: str, timeout_ms: int = ELEMENT_TIMEOUT_MS) -> None:
    """Wait until ``selector`` matches a visible element."""
    await _page(ctx).wait_for_selector(selector, state="visible", timeout=timeout_ms)


@setup_function("browser", aliases=("click_element",))
async def click(ctx: FunctionContext, selector: str, timeout_ms: int = ELEMENT_TIMEOUT_MS) -> None:
    """Click the element matching ``selector``."""
    await _page(ctx).click(selector, timeout=timeout_ms)


@setup_function("browser", name="type", aliases=("fill_input", "type_text"))
async def type_text(ctx: FunctionContext, selector: str, text: str, timeout_ms: int = ELEMENT_TIMEOUT_MS) -> None:
    """Fill the input matching ``selector`` with ``text`` (replacing its value)."""
    await _page(ctx).fill(selector, text, timeout=timeout_ms)


@setup_function("browser")
async def select_option(ctx: FunctionContext, selector: str, value: str, timeout_ms: int = ELEMENT_TIMEOUT_MS) -> None:
    """Select the option ``value`` (its value or label) of the ``<select>`` matching ``selector``."""
    page = _page(ctx)
    try:
        await page.select_option(selector, value=value, timeout=timeout_ms)
    except Exception:  # noqa: BLE001  (fall back to the visible label)
        await page.select_option(selector, label=value, timeout=timeout_ms)


def _cookie(cookie: dict[str, Any], page_url: str) -> dict[str, Any]:
    cookie = dict(cookie)
    if "url" not in cookie and "domain" not in cookie:
        if not page_url.startswith("http"):
            raise ValueError(f"cookie {cookie.get('name')!r} needs a 'url' or 'domain' (the page is {page_url!r})")
        cookie["url"] = page_url
    if "domain" in cookie and "path" not in cookie:
        cookie["path"] = "/"
    return cookie


@setup_function("browser")
async def set_cookies(ctx: FunctionContext, cookies: list[dict[str, Any]]) -> None:
    """Add cookies (Playwright's cookie dicts; ``url`` defaults to the current page's URL)."""
    page_url = _page(ctx).url
    await ctx.controller.state.context.add_cookies([_cookie(c, page_url) for c in cookies])


@setup_function("browser")
async def clear_cookies(ctx: FunctionContext) -> None:
    """Remove every cookie of this env's browser context."""
    await ctx.controller.state.context.clear_cookies()


@setup_function("browser")
def maximize(ctx: FunctionContext) -> None:
    """Accepted for HUD compatibility; the viewport already fills the headless screen."""


# ------------------------------------------------------------------------------- evaluate


@evaluate_function("browser")
def url_match(ctx: FunctionContext, expected_url: str) -> Grade:
    """Reward 1 when the page URL equals ``expected_url`` (a trailing ``/`` on a bare host is ignored)."""
    url = _page(ctx).url

    def canonical(u: str) -> str:
        parts = urlsplit(u)
        return u + "/" if parts.scheme in ("http", "https") and parts.path == "" and not parts.query else u

    ok = canonical(url) == canonical(expected_url)
    return Grade(reward=float(ok), content=f"url is {url!r}", info={"url": url})


@evaluate_function("browser")
def url_contains(ctx: FunctionContext, substring: str) -> Grade:
    """Reward 1 when the page URL contains ``substring``."""
    url = _page(ctx).url
    ok = substring in url
    return Grade(reward=float(ok), content=f"url is {url!r}", info={"url": url})


async def page_text(ctx: FunctionContext) -> str:
    """The page's visible text, its input values, and its same-origin frames' text (of the page
    :func:`~.binding.graded_page` grades)."""
    return await (await graded_page(ctx)).evaluate(_PAGE_TEXT_JS)


_PAGE_HTML_JS = "() => document.documentElement ? document.documentElement.outerHTML : ''"
"""``page.content()`` read as the page's own script would (Playwright's ``content()`` waits for a
utility world that a page stuck in a refused navigation may never get)."""


@evaluate_function("browser", aliases=("contains_text",))
async def page_contains(
    ctx: FunctionContext, texts: str | list[str], partial_rewarding: bool = False, case_sensitive: bool = True
) -> Grade:
    """HUD's ``page_contains`` (alias ``contains_text``): reward 1 when every text is in the page's
    HTML, as ``page.content()`` (markup and attributes included; the main frame's document).

    With ``partial_rewarding`` the reward is the fraction found; ``done`` when all are found.
    :func:`visible_text_contains` checks what a user sees instead.
    """
    html = await (await graded_page(ctx)).evaluate(_PAGE_HTML_JS)
    return _contains_grade(texts, html, partial_rewarding, case_sensitive)


@evaluate_function("browser")
async def visible_text_contains(
    ctx: FunctionContext, texts: str | list[str], partial_rewarding: bool = False, case_sensitive: bool = True
) -> Grade:
    """Reward 1 when every text is in what the page shows: its visible text, its input values and
    its same-origin frames' text (never a hidden element's text or the markup). Options as
    :func:`page_contains`'s."""
    return _contains_grade(texts, await page_text(ctx), partial_rewarding, case_sensitive)


def _contains_grade(texts: str | list[str], content: str, partial_rewarding: bool, case_sensitive: bool) -> Grade:
    wanted = [texts] if isinstance(texts, str) else list(texts)
    fold = (lambda s: s) if case_sensitive else str.casefold
    found = [t for t in wanted if fold(t) in fold(content)]
    missing = [t for t in wanted if t not in found]
    fraction = len(found) / len(wanted) if wanted else 0.0
    reward = fraction if partial_rewarding else float(not missing and bool(wanted))
    return Grade(
        reward=reward,
        done=not missing,
        content="all found" if not missing else f"missing {missing!r}",
        info={"found": found, "missing": missing},
    )


@evaluate_function("browser")
async def element_exists(ctx: FunctionContext, selector: str) -> Grade:
    """Reward 1 when ``selector`` matches at least one element."""
    count = await (await graded_page(ctx)).locator(selector).count()
    return Grade(reward=float(count > 0), content=f"{count} element(s) match {selector!r}", info={"count": count})


@evaluate_function("browser")
async def text_matches(ctx: FunctionContext, selector: str, pattern: str) -> Grade:
    """Reward 1 when the text (or value, for inputs) of the first element matching ``selector``
    matches the regex ``pattern`` (``re.search``; matched off the event loop with a timeout, see
    :mod:`hud_gym.evaluation.patterns`)."""
    try:
        regex = compile_task_pattern(pattern, dotall=True)
    except PatternError as exc:
        return Grade.error(str(exc))
    locator = (await graded_page(ctx)).locator(selector).first
    if await locator.count() == 0:
        return Grade(reward=0.0, content=f"no element matches {selector!r}")
    text = await locator.evaluate(
        "el => (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT') ? el.value : el.innerText"
    )
    try:
        ok = await asyncio.to_thread(regex.search, text or "") is not None
    except PatternError as exc:
        return Grade.error(str(exc))
    return Grade(
        reward=float(ok),
        content=f"text {text!r} {'matches' if ok else 'does not match'} {pattern!r}",
        info={"text": text},
    )


async def _cookies(ctx: FunctionContext) -> dict[str, str]:
    return {c["name"]: c["value"] for c in await ctx.controller.state.context.cookies()}


@evaluate_function("browser")
async def cookie_exists(ctx: FunctionContext, names: str | list[str]) -> Grade:
    """Reward 1 when every cookie named in ``names`` exists in this env's context."""
    wanted = [names] if isinstance(names, str) else list(names)
    cookies = await _cookies(ctx)
    missing = [n for n in wanted if n not in cookies]
    return Grade(
        reward=float(not missing),
        content="all cookies exist" if not missing else f"missing {missing!r}",
        info={"missing": missing},
    )


@evaluate_function("browser")
async def cookie_match(
    ctx: FunctionContext, name_or_pairs: str | list[str] | dict[str, str], value: str | None = None
) -> Grade:
    """Reward 1 when cookies have the expected values.

    Accepts ``cookie_match(name, value)``, HUD's flat ``[name1, value1, name2, value2, ...]``, or a
    ``{name: value}`` dict.
    """
    if isinstance(name_or_pairs, dict):
        expected = dict(name_or_pairs)
    elif isinstance(name_or_pairs, list):
        if len(name_or_pairs) % 2:
            return Grade.error("cookie_match needs name/value pairs: an even-length list")
        expected = dict(zip(name_or_pairs[::2], name_or_pairs[1::2], strict=True))  # even length, checked above
    else:
        if value is None:
            return Grade.error("cookie_match(name, value) needs a value")
        expected = {name_or_pairs: value}
    cookies = await _cookies(ctx)
    wrong = {n: cookies.get(n) for n, v in expected.items() if cookies.get(n) != v}
    return Grade(
        reward=float(not wrong),
        content="all cookies match" if not wrong else f"mismatched {wrong!r}",
        info={"mismatched": wrong},
    )
