"""A calendar: a work week (Monday to Friday, 9:00 to 17:00), event pages, a form to create and
edit an event (title, day, start, end, attendees) that refuses an event overlapping another, and
deletion.

The state is the ``events`` table of the episode's database.
"""

from __future__ import annotations

import re
import sqlite3
from functools import lru_cache
from typing import Any

from hud_gym.suites.webapps.data import NOUNS, TOPICS, people, rng
from hud_gym.suites.webapps.pages import Response, esc, layout, not_found, redirect
from hud_gym.suites.webapps.server import App, Request

__all__ = ["APP", "DAYS", "calendar_dataset", "free_hours"]

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
OPEN, CLOSE = 9, 17
_SCHEMA = (
    "CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT, day INTEGER, start INTEGER, end INTEGER, attendees TEXT)"
)
_HOUR = re.compile(r"^\s*(\d{1,2})(?::00)?\s*$")


@lru_cache(maxsize=256)
def calendar_dataset(seed: int) -> tuple[dict[str, Any], ...]:
    """The week of ``seed``: 2 or 3 events a day (1 or 2 hours, never overlapping), distinct titles."""
    r = rng(seed, "calendar")
    titles = iter(r.sample([f"{t} {n}" for t in TOPICS for n in NOUNS], 20))
    team = [email for _, email in people(r, 8)]
    rows = []
    for day in range(len(DAYS)):
        hour = OPEN + r.randint(0, 1)
        for _ in range(r.randint(2, 3)):
            length = r.randint(1, 2)
            rows.append({"title": next(titles), "day": day, "start": hour, "end": hour + length,
                         "attendees": ", ".join(r.sample(team, r.randint(1, 3)))})  # fmt: skip
            hour += length + r.randint(0, 1)
    return tuple({"id": i + 1, **row} for i, row in enumerate(rows))


def free_hours(events: tuple[dict[str, Any], ...] | list[dict[str, Any]], day: int, length: int = 1) -> list[int]:
    """The start hours of ``day`` where an event of ``length`` hours overlaps none of ``events``."""
    busy = [(e["start"], e["end"]) for e in events if e["day"] == day]
    return [h for h in range(OPEN, CLOSE - length + 1) if all(h + length <= s or h >= e for s, e in busy)]


def create(conn: sqlite3.Connection, seed: int) -> None:
    """The episode's database: the schema and the seed's week."""
    conn.execute(_SCHEMA)
    conn.executemany(
        "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
        [(e["id"], e["title"], e["day"], e["start"], e["end"], e["attendees"]) for e in calendar_dataset(seed)],
    )


def _page(req: Request, content: str) -> Response:
    return layout("Calendar", [("Week", f"{req.base}/"), ("New event", f"{req.base}/new")], content, req.get("flash"))


def _week(req: Request) -> Response:
    rows = req.db.execute("SELECT id, title, day, start, end FROM events ORDER BY day, start").fetchall()
    cells = []
    for day in range(len(DAYS)):
        items = "".join(
            f'<li>{s}:00-{e}:00 <a href="{req.base}/event/{i}">{esc(t)}</a></li>' for i, t, d, s, e in rows if d == day
        )
        cells.append(f"<td style='vertical-align:top'><ul>{items}</ul></td>")
    head = "".join(f"<th>{d}</th>" for d in DAYS)
    return _page(req, f"<h2>This week</h2><table><tr>{head}</tr><tr>{''.join(cells)}</tr></table>")


def _event(req: Request, event_id: int) -> Response:
    row = req.db.execute(
        "SELECT id, title, day, start, end, attendees FROM events WHERE id = ?", (event_id,)
    ).fetchone()
    if row is None:
        return not_found()
    i, title, day, start, end, attendees = row
    content = (
        f"<h2>{esc(title)}</h2><p>{DAYS[day]}, {start}:00 to {end}:00</p><p>Attendees: {esc(attendees) or 'none'}</p>"
        f'<p><a class="btn" href="{req.base}/event/{i}/edit">Edit</a></p>'
        f'<form method="post" action="{req.base}/event/{i}/delete"><button>Delete event</button></form>'
    )
    return _page(req, content)


def _form(req: Request, action: str, values: dict[str, Any]) -> Response:
    days = " ".join(
        f'<label><input type="radio" name="day" value="{n}"{" checked" if values.get("day") == n else ""}> {d}</label>'
        for n, d in enumerate(DAYS)
    )
    text = "".join(
        f'<p>{label} <input type="text" name="{name}" value="{esc(values.get(name, ""))}"></p>'
        for label, name in (("Title", "title"), ("Start", "start"), ("End", "end"), ("Attendees", "attendees"))
    )
    content = (
        f'<h2>Event</h2><form method="post" action="{esc(action)}"><p>Day: {days}</p>{text}<button>Save</button></form>'
    )
    return _page(req, content)


def _save(req: Request, event_id: int | None) -> Response:
    back = f"{req.base}/event/{event_id}/edit" if event_id else f"{req.base}/new"
    start, end, day = _HOUR.match(req.get("start")), _HOUR.match(req.get("end")), req.get("day")
    title = req.get("title").strip()[:200]
    if not (title and start and end and day.isdigit() and int(day) < len(DAYS)):
        return redirect(back, "Give a title, a day, and start and end hours (e.g. 10:00)")
    s, e, d = int(start.group(1)), int(end.group(1)), int(day)
    if not OPEN <= s < e <= CLOSE:
        return redirect(back, "An event is between 9:00 and 17:00 and ends after it starts")
    clash = req.db.execute(
        "SELECT title FROM events WHERE day = ? AND start < ? AND end > ? AND id IS NOT ?", (d, e, s, event_id)
    ).fetchone()
    if clash:
        return redirect(back, f"That time overlaps {clash[0]}")
    attendees = ", ".join(a.strip() for a in req.get("attendees").split(",") if a.strip())[:1000]
    if event_id is None:
        req.db.execute(
            "INSERT INTO events (title, day, start, end, attendees) VALUES (?, ?, ?, ?, ?)", (title, d, s, e, attendees)
        )
    else:
        req.db.execute(
            "UPDATE events SET title = ?, day = ?, start = ?, end = ?, attendees = ? WHERE id = ?",
            (title, d, s, e, attendees, event_id),
        )
    return redirect(f"{req.base}/", "Event saved")


def _existing(req: Request, event_id: int, action: str) -> Response:
    row = req.db.execute("SELECT title, day, start, end, attendees FROM events WHERE id = ?", (event_id,)).fetchone()
    if row is None:
        return not_found()
    if action == "delete" and req.method == "POST":
        req.db.execute("DELETE FROM events WHERE id = ?", (event_id,))
        return redirect(f"{req.base}/", "Event deleted")
    if action == "edit" and req.method == "POST":
        return _save(req, event_id)
    if action == "edit":
        title, day, start, end, attendees = row
        values = {"title": title, "day": day, "start": f"{start}:00", "end": f"{end}:00", "attendees": attendees}
        return _form(req, f"{req.base}/event/{event_id}/edit", values)
    return not_found()


def handle(req: Request) -> Response:
    """The calendar's pages."""
    parts = req.path.strip("/").split("/")
    if parts == [""] and req.method == "GET":
        return _week(req)
    if parts == ["new"]:
        return _save(req, None) if req.method == "POST" else _form(req, f"{req.base}/new", {})
    if len(parts) >= 2 and parts[0] == "event" and parts[1].isdigit():
        if len(parts) == 2 and req.method == "GET":
            return _event(req, int(parts[1]))
        if len(parts) == 3:
            return _existing(req, int(parts[1]), parts[2])
    return not_found()


APP = App(name="calendar", create=create, handle=handle)
"""The calendar."""
