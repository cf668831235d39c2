"""The page scan behind ``info["elements"]``, the set-of-marks and the accessibility tree: one
JavaScript pass over the document's elements in document order, keeping the visible ones that
an agent can see or act on.

Kept: interactive elements (links, buttons, form fields, ARIA widgets, ``onclick``, focusable
ones, elements with a pointer cursor of their own, canvases), elements with their own text, and
textless elements that show something: images, SVG, video, and boxes painted with a background
or a border (coloured boxes, icons). Each is reported with its viewport bounding box.
A *mark* is an element an agent would click: an interactive one, or a textless painted box or
image with no element inside it.

The scan runs in the page's own JavaScript world, so a page can lie about itself: what it returns
is bounded again on the host (:mod:`.accessibility`).
"""

from __future__ import annotations

__all__ = ["ELEMENTS_JS", "SCAN_JS", "nodes_expression"]

SCAN_JS = r"""
(limit, depths) => {
  const INTERACTIVE = 'a[href], button, input, select, textarea, summary, label, option, details, ' +
    '[role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=menuitem], ' +
    '[role=option], [role=switch], [role=textbox], [role=combobox], [role=slider], [role=spinbutton], ' +
    '[onclick], [contenteditable=""], [contenteditable=true], [tabindex]:not([tabindex="-1"]), canvas';
  const MEDIA = {img: 1, svg: 1, video: 1, canvas: 1, picture: 1};
  const vw = window.innerWidth, vh = window.innerHeight - (window[Symbol.for('hud-gym.marker')] ? 1 : 0);
  const clip = (s, n) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);
  const painted = (style) => (style.backgroundColor !== 'rgba(0, 0, 0, 0)' && style.backgroundColor !== 'transparent') ||
    style.backgroundImage !== 'none' || (parseFloat(style.borderTopWidth) > 0 && style.borderTopStyle !== 'none');
  const ownPointer = (el, style) => style.cursor === 'pointer' &&
    !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer');
  const items = [], nodes = [];
  const all = document.body ? document.body.getElementsByTagName('*') : [];
  for (let i = 0; i < all.length && items.length < limit; i++) {
    const el = all[i];
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style' || tag === 'noscript' || tag === 'template') continue;
    if (el.ownerSVGElement) continue;  // an SVG's parts: the <svg> stands for them
    let interactive = el.matches(INTERACTIVE);
    let ownText = '';
    if (!interactive) {
      for (const node of el.childNodes) if (node.nodeType === 3) ownText += node.nodeValue;
      ownText = clip(ownText, 200);
    }
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.right <= 0 || r.bottom <= 0 || r.left >= vw || r.top >= vh) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none' || parseFloat(style.opacity) === 0) continue;
    if (!interactive && ownPointer(el, style)) interactive = true;
    if (!interactive && !ownText && !MEDIA[tag] && !painted(style)) continue;
    const cx = Math.min(Math.max(r.left + r.width / 2, 0), vw - 1);
    const cy = Math.min(Math.max(r.top + r.height / 2, 0), vh - 1);
    const hit = document.elementFromPoint(cx, cy);
    const item = {
      tag: tag,
      text: interactive ? clip(el.innerText || el.getAttribute('aria-label') || el.getAttribute('title') ||
                               el.getAttribute('placeholder') || el.getAttribute('alt') || '', 200) :
            (ownText || clip(el.getAttribute('aria-label') || el.getAttribute('title') || el.getAttribute('alt') || '', 200)),
      value: ('value' in el && typeof el.value === 'string' && tag !== 'button' && tag !== 'option') ? el.value.slice(0, 200) : null,
      id: el.id ? String(el.id).slice(0, 200) : null,
      interactive: interactive,
      topmost: !!hit && (hit === el || el.contains(hit) || hit.contains(el)),
      bbox: [Math.round(r.left * 10) / 10, Math.round(r.top * 10) / 10,
             Math.round(r.width * 10) / 10, Math.round(r.height * 10) / 10],
    };
    if (!interactive && !ownText && !el.firstElementChild) item.mark = true;  // a textless box or image
    if (interactive) item.mark = true;
    const role = el.getAttribute('role'); if (role) item.role = role.slice(0, 200);
    const type = el.getAttribute('type'); if (type && (tag === 'input' || tag === 'button')) item.type = type.slice(0, 200);
    const name = el.getAttribute('name'); if (name) item.name = name.slice(0, 200);
    if (tag === 'a' && el.href) item.href = String(el.href).slice(0, 8192);
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) item.checked = el.checked;
    if (el.disabled) item.disabled = true;
    items.push(item);
    nodes.push(el);
  }
  if (depths) {
    const kept = new Set(nodes);
    nodes.forEach((el, i) => {
      let depth = 0;
      for (let p = el.parentElement; p; p = p.parentElement) if (kept.has(p)) depth++;
      items[i].depth = depth;
    });
  }
  nodes.items = items;
  return nodes;
}
"""
"""``(limit, depths) => elements``: the kept elements (module docstring), at most ``limit``, as an
array whose ``items`` property holds each one's description (``tag``, ``text``, ``value``, ``id``,
``interactive``, ``topmost``, ``bbox``, ``mark`` and, when set, ``role``, ``type``, ``name``,
``href``, ``checked``, ``disabled``; ``depth`` with ``depths``: how many kept elements contain it)."""

ELEMENTS_JS = f"(limit) => ({SCAN_JS.strip()})(limit, false).items"
"""``info["elements"]``: the scan's descriptions (:data:`SCAN_JS`), in document order."""


def nodes_expression(limit: int, tree: bool, marks: bool) -> str:
    """The ``Runtime.evaluate`` expression of the scan's elements by reference (with their
    descriptions as ``items``, and the document's element ``count``): with ``tree`` the first
    ``limit`` (their items ``tree: true``), with ``marks`` the first ``limit`` marks (``mark: true``)."""
    return (
        f"(() => {{ const all = ({SCAN_JS.strip()})({4 * int(limit)}, true); const nodes = [], items = []; "
        "let trees = 0, marks = 0; "
        "all.items.forEach((item, i) => { "
        f"item.tree = {str(tree).lower()} && trees < {int(limit)}; "
        f"item.mark = {str(marks).lower()} && !!item.mark && marks < {int(limit)}; "
        "if (item.tree) trees++; if (item.mark) marks++; "
        "if (item.tree || item.mark) { nodes.push(all[i]); items.push(item); } }); "
        "nodes.items = items; nodes.count = document.getElementsByTagName('*').length; return nodes; })()"
    )
