"""The inline stylesheet and script of the HTML job report (:mod:`hud_gym.cli.report`)."""

from __future__ import annotations

__all__ = ["REPORT_CSS", "REPORT_JS"]

REPORT_CSS = """
:root { --ok: #2e7d32; --fail: #c62828; --error: #8e24aa; --muted: #616161; --line: #e0e0e0; --bg: #fafafa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #212121;
       background: var(--bg); }
header.page { padding: 20px 28px 12px; background: #263238; color: #fff; }
header.page h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; word-break: break-word; }
header.page .meta { color: #cfd8dc; font-size: 13px; }
main { padding: 8px 28px 40px; max-width: 1600px; }
h2 { font-size: 17px; margin: 26px 0 10px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 16px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 140px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 22px; font-weight: 600; }
.card .sub { color: var(--muted); font-size: 12px; }
dl.settings { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
dl.settings dt { color: var(--muted); } dl.settings dd { margin: 0; font-family: ui-monospace, monospace; }
table { border-collapse: collapse; background: #fff; border: 1px solid var(--line); font-size: 13px; }
th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: #eceff1; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
         color: #fff; background: var(--muted); white-space: nowrap; }
.badge.success, .badge.completed { background: var(--ok); }
.badge.failure, .badge.failed { background: var(--fail); }
.badge.error, .badge.interrupted { background: var(--error); }
.badge.running { background: #f9a825; }
.filters { margin: 6px 0 12px; display: flex; gap: 6px; flex-wrap: wrap; }
.filters button { border: 1px solid var(--line); background: #fff; border-radius: 14px; padding: 3px 12px;
                  cursor: pointer; font: inherit; }
.filters button.active { background: #263238; color: #fff; border-color: #263238; }
article.trajectory { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--muted);
                     border-radius: 8px; padding: 10px 14px; margin-bottom: 14px; }
article.trajectory.success { border-left-color: var(--ok); }
article.trajectory.failure { border-left-color: var(--fail); }
article.trajectory.error { border-left-color: var(--error); background: #fdf6fe; }
article.trajectory[hidden] { display: none; }
.trajectory .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 10px; }
.trajectory .head .task { font-weight: 600; font-size: 15px; }
.trajectory .head .ids { color: var(--muted); font-size: 12px; font-family: ui-monospace, monospace; }
.trajectory .reward { font-weight: 600; }
.trajectory .reward.none { color: var(--error); }
.trajectory .prompt { margin: 6px 0; white-space: pre-wrap; word-break: break-word; }
.trajectory .error-text { margin: 6px 0; color: var(--error); white-space: pre-wrap; word-break: break-word;
                          font-family: ui-monospace, monospace; font-size: 12px; }
.trajectory .answer { margin: 4px 0; color: var(--muted); white-space: pre-wrap; word-break: break-word; }
.filmstrip { display: flex; gap: 10px; overflow-x: auto; padding: 6px 0 4px; }
figure.frame { margin: 0; flex: 0 0 auto; width: 240px; border: 1px solid var(--line); border-radius: 6px;
               background: #fcfcfc; }
figure.frame img { display: block; width: 100%; height: auto; border-radius: 6px 6px 0 0; cursor: zoom-in;
                   background: #eee; }
.shot { position: relative; line-height: 0; }
.shot svg.overlay { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; }
figure.frame .noimage { height: 120px; display: flex; align-items: center; justify-content: center;
                        color: var(--muted); font-size: 12px; }
figure.frame figcaption { padding: 5px 7px; font-size: 12px; }
figure.frame .step-head { display: flex; justify-content: space-between; gap: 6px; font-weight: 600; }
figure.frame.bad { border-color: var(--fail); }
figure.frame .actions { margin-top: 2px; word-break: break-word; }
figure.frame .step-error { color: var(--fail); word-break: break-word; }
figure.frame details summary { cursor: pointer; color: var(--muted); }
figure.frame pre { margin: 4px 0 0; max-height: 160px; overflow: auto; font-size: 11px; white-space: pre-wrap;
                   word-break: break-all; background: #f5f5f5; padding: 4px; border-radius: 4px; }
dialog#zoom { padding: 0; border: none; background: transparent; max-width: 95vw; max-height: 95vh; }
dialog#zoom img { max-width: 95vw; max-height: 90vh; display: block; }
dialog#zoom::backdrop { background: rgba(0, 0, 0, .75); }
p.note { color: var(--muted); }
#job-error { color: var(--error); font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
"""

REPORT_JS = """
(function () {
  const cards = Array.from(document.querySelectorAll('article.trajectory'));
  const buttons = Array.from(document.querySelectorAll('.filters button'));
  for (const button of buttons) {
    button.addEventListener('click', function () {
      const outcome = button.dataset.filter;
      for (const b of buttons) b.classList.toggle('active', b === button);
      for (const card of cards) card.hidden = outcome !== 'all' && card.dataset.outcome !== outcome;
    });
  }
  const dialog = document.getElementById('zoom');
  const zoomed = dialog ? dialog.querySelector('img') : null;
  if (dialog && zoomed && typeof dialog.showModal === 'function') {
    document.addEventListener('click', function (event) {
      const target = event.target;
      if (target instanceof HTMLImageElement && target.closest('figure.frame')) {
        zoomed.src = target.src;
        zoomed.alt = target.alt;
        dialog.showModal();
      } else if (dialog.open) {
        dialog.close();
      }
    });
  }
})();
"""
