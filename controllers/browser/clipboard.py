"""Each browser env's own clipboard, empty at every episode.

The envs of one process share one Chromium (:mod:`.chromium`), and Chromium has one clipboard per
process (the headless one in memory, a headed one its X display's CLIPBOARD and PRIMARY): without
this module env 0's ``ctrl+c`` is env 1's ``ctrl+v``, and a copy outlives ``reset``. Browser
contexts isolate cookies and storage, not the clipboard.

:class:`EnvClipboard` gives an env a clipboard of its own, kept by the controller (a string,
:data:`MAX_CLIPBOARD_CHARS` at most) and mirrored into every frame of its contexts by an init
script (:data:`CLIPBOARD_JS`), so that a paste reads it synchronously, as a real one does:

- a trusted ``copy`` / ``cut`` (keys, the context menu, ``document.execCommand``) is cancelled
  before any page handler sees it, and dispatched again to the page with an empty
  ``DataTransfer``: what the page's handlers put there (or else the selection) becomes the env's
  clipboard; a cut then deletes the selection of an editable field. Chromium's own clipboard gets
  nothing (a cancelled copy writes the empty ``DataTransfer``);
- a trusted ``paste`` (keys, the menu, a middle click's PRIMARY) is cancelled likewise and
  dispatched again carrying the env's clipboard; unless a handler cancels it, the text is inserted
  (``insertText``: the field's ``maxlength``, ``readonly`` and undo apply);
- ``navigator.clipboard`` reads and writes the env's clipboard (text only).

A copy in one frame reaches the env's other frames and tabs through the controller (a binding,
then an evaluation in each frame); :meth:`EnvClipboard.clear` empties it at every reset, in
every frame of a context kept across episodes too. What a page does to its own shim only touches
its own env's clipboard.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

__all__ = ["BINDING", "CLIPBOARD_JS", "MAX_CLIPBOARD_CHARS", "EnvClipboard"]

BINDING = "__hudGymClipboard"
"""The binding the frames call: ``("get", "")`` -> the env's clipboard, ``("set", text)``."""
SYNC = "__hudGymClipboardSync"
MAX_CLIPBOARD_CHARS = 1_000_000
"""The longest text the env's clipboard keeps (a longer copy is cut there)."""

CLIPBOARD_JS = f"""(() => {{
  if (window.{SYNC}) return;
  const call = window.{BINDING};
  let text = "";
  Object.defineProperty(window, "{SYNC}", {{ value: (t) => {{ text = String(t); }} }});
  if (call) call("get", "").then((t) => {{ if (typeof t === "string") text = t; }}, () => {{}});
  const set = (t) => {{ text = String(t).slice(0, {MAX_CLIPBOARD_CHARS}); if (call) call("set", text).catch(() => {{}}); }};
  const field = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "INPUT");
  const editable = (el) => !!el && (field(el) ? !el.readOnly && !el.disabled : el.isContentEditable);
  const selected = () => {{
    const el = document.activeElement;
    if (field(el)) {{
      try {{
        return el.type === "password" ? "" : el.value.slice(el.selectionStart ?? 0, el.selectionEnd ?? 0);
      }} catch (e) {{ return ""; }}
    }}
    return String(getSelection() || "");
  }};
  const mirror = (e, data) => {{
    const copy = new ClipboardEvent(e.type, {{ clipboardData: data, bubbles: true, cancelable: true, composed: true }});
    return !(e.target || document).dispatchEvent(copy);
  }};
  const onCopy = (e) => {{
    if (!e.isTrusted) return;
    e.stopImmediatePropagation();
    e.preventDefault();
    const data = new DataTransfer();
    const handled = mirror(e, data);
    const value = handled ? data.getData("text/plain") : selected();
    if (handled || value) set(value);
    if (e.type === "cut" && !handled && value && editable(document.activeElement)) document.execCommand("delete");
  }};
  const onPaste = (e) => {{
    if (!e.isTrusted) return;
    e.stopImmediatePropagation();
    e.preventDefault();
    const data = new DataTransfer();
    data.setData("text/plain", text);
    if (!mirror(e, data) && text && editable(document.activeElement)) document.execCommand("insertText", false, text);
  }};
  window.addEventListener("copy", onCopy, true);
  window.addEventListener("cut", onCopy, true);
  window.addEventListener("paste", onPaste, true);
  if (window.Clipboard) {{
    const proto = Clipboard.prototype;
    const blob = () => new Blob([text], {{ type: "text/plain" }});
    proto.readText = async function () {{ return text; }};
    proto.writeText = async function (t) {{ set(t); }};
    proto.read = async function () {{ return [new ClipboardItem({{ "text/plain": blob() }})]; }};
    proto.write = async function (items) {{
      const item = [...items].find((i) => i.types.includes("text/plain"));
      set(item ? await (await item.getType("text/plain")).text() : "");
    }};
  }}
}})();"""
"""The init script of every frame of an env's contexts (see the module docstring)."""


class EnvClipboard:
    """One env's clipboard (see the module docstring): :meth:`install` on each of its contexts,
    :meth:`clear` at each reset."""

    def __init__(self) -> None:
        self.text = ""

    async def install(self, context: BrowserContext) -> None:
        """Give ``context``'s frames the env's clipboard (before its first page opens)."""
        await context.expose_binding(BINDING, self._call)
        await context.add_init_script(CLIPBOARD_JS)

    async def clear(self, context: BrowserContext | None) -> None:
        """Empty the clipboard, in every frame of ``context`` (the env's current one) as well."""
        self.text = ""
        await self.sync(context)

    async def sync(self, context: BrowserContext | None) -> None:
        """Put the env's clipboard in every frame of ``context`` (a context it enters again)."""
        await self._sync(context, None)

    async def _call(self, source: dict[str, Any], op: Any, value: Any = "") -> str:
        if op == "set" and isinstance(value, str):
            text = value[:MAX_CLIPBOARD_CHARS]
            if text != self.text:
                self.text = text
                await self._sync(source.get("context"), source.get("frame"))
        return self.text

    async def _sync(self, context: BrowserContext | None, skip: Any) -> None:
        """Put the clipboard in every frame of ``context`` but ``skip`` (one that has it)."""
        if context is None:
            return
        frames = [frame for page in context.pages for frame in page.frames if frame is not skip]
        expression = f"t => window.{SYNC} && window.{SYNC}(t)"
        calls = [asyncio.wait_for(frame.evaluate(expression, self.text), 5) for frame in frames]
        with contextlib.suppress(PlaywrightError, asyncio.TimeoutError):
            await asyncio.gather(*calls, return_exceptions=True)
