"""The calendar's families: schedule in the earliest free hour, reschedule to a given slot, and
invite an attendee (difficulty = events to handle).

Each check reads the episode's ``events`` table and requires every other event unchanged.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hud_gym.suites.webapps.calendar import DAYS, calendar_dataset, free_hours
from hud_gym.suites.webapps.data import FIRST, LAST, rng
from hud_gym.suites.webapps.functions import family_task
from hud_gym.suites.webapps.oracle import Op, append, click, fill
from hud_gym.task import Task

__all__ = ["check_invite", "check_reschedule", "check_schedule", "invite_task", "reschedule_task", "schedule_task"]

_NEW = ("Interview", "Demo", "Retro", "Lunch talk", "Board prep", "1:1", "Kickoff", "Workshop")
_COLUMNS = ("id", "title", "day", "start", "end", "attendees")


def _rows(db: sqlite3.Connection) -> dict[int, dict[str, Any]]:
    return {row[0]: dict(zip(_COLUMNS, row, strict=True)) for row in db.execute("SELECT * FROM events")}


def _others_unchanged(db_rows: dict[int, dict[str, Any]], seed: int, skip: set[int]) -> bool:
    return all(db_rows.get(e["id"]) == e for e in calendar_dataset(seed) if e["id"] not in skip)


def _edit(title: str, fields: list[Op]) -> list[Op]:
    return [click("Week", "a"), click(title, "a"), click("Edit", "a"), *fields, click("Save", "button")]


def schedule_task(seed: int, difficulty: int) -> Task:
    """Schedule ``difficulty`` one-hour events, each in the earliest free hour of its day."""
    r = rng(seed, "cal-schedule")
    week = calendar_dataset(seed)
    wanted: list[dict[str, Any]] = []
    for title, day in zip(r.sample(_NEW, difficulty), sorted(r.sample(range(len(DAYS)), difficulty)), strict=True):
        wanted.append({"title": title, "day": day, "start": free_hours(week, day)[0]})
    plan: list[Op] = []
    for w in wanted:
        times = [fill("start", f"{w['start']}:00"), fill("end", f"{w['start'] + 1}:00")]
        plan += [
            click("New event", "a"),
            fill("title", w["title"]),
            click(DAYS[w["day"]], "label"),
            *times,
            click("Save", "button"),
        ]
    asks = "; ".join(f"'{w['title']}' on {DAYS[w['day']]}" for w in wanted)
    prompt = (
        f"In the calendar, schedule these one-hour events, each in the earliest free hour of its day "
        f"(between 9:00 and 17:00, overlapping nothing): {asks}."
    )
    return family_task("cal-schedule", "calendar", seed, difficulty, prompt, {"seed": seed, "events": wanted}, plan)


def check_schedule(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """Each asked event exists once at its slot; the week's events are unchanged; nothing else added."""
    rows = _rows(db)
    if not _others_unchanged(rows, params["seed"], set()) or len(rows) != len(calendar_dataset(params["seed"])) + len(
        params["events"]
    ):
        return False, "the week's other events changed, or the wrong number of events was added"
    for w in params["events"]:
        slot = (w["day"], w["start"], w["start"] + 1)
        if [(e["day"], e["start"], e["end"]) for e in rows.values() if e["title"].strip() == w["title"]] != [slot]:
            return False, f"{w['title']!r} is not scheduled once at its earliest free hour"
    return True, "every event scheduled"


def reschedule_task(seed: int, difficulty: int) -> Task:
    """Move ``difficulty`` events to given free slots on other days (same length)."""
    r = rng(seed, "cal-reschedule")
    week = list(calendar_dataset(seed))
    moves = []
    for event in r.sample(week, difficulty):
        length = event["end"] - event["start"]
        day = r.choice([d for d in range(len(DAYS)) if d != event["day"] and free_hours(week, d, length)])
        start = r.choice(free_hours(week, day, length))
        week = [e for e in week if e["id"] != event["id"]] + [
            {**event, "day": day, "start": start, "end": start + length}
        ]
        moves.append({"id": event["id"], "title": event["title"], "day": day, "start": start, "end": start + length})
    plan: list[Op] = []
    for m in moves:
        plan += _edit(
            m["title"],
            [click(DAYS[m["day"]], "label"), fill("start", f"{m['start']}:00"), fill("end", f"{m['end']}:00")],
        )
    asks = "; ".join(f"'{m['title']}' to {DAYS[m['day']]} {m['start']}:00-{m['end']}:00" for m in moves)
    prompt = f"In the calendar, move these events (keep everything else about them): {asks}."
    return family_task("cal-reschedule", "calendar", seed, difficulty, prompt, {"seed": seed, "moves": moves}, plan)


def check_reschedule(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """Each moved event is at its new slot (title and attendees kept); every other event unchanged."""
    rows = _rows(db)
    original = {e["id"]: e for e in calendar_dataset(params["seed"])}
    moved = {m["id"] for m in params["moves"]}
    if not _others_unchanged(rows, params["seed"], moved) or len(rows) != len(original):
        return False, "other events changed"
    for m in params["moves"]:
        expected = {**original[m["id"]], "day": m["day"], "start": m["start"], "end": m["end"]}
        if rows.get(m["id"]) != expected:
            return False, f"{m['title']!r} is not at its new slot as it was"
    return True, "every event moved"


def invite_task(seed: int, difficulty: int) -> Task:
    """Add an attendee to ``difficulty`` events, keeping their other attendees."""
    r = rng(seed, "cal-invite")
    events = r.sample(calendar_dataset(seed), difficulty)
    email = f"{r.choice(FIRST).lower()}.{r.choice(LAST).lower()}@guest.example.net"
    plan = [op for e in events for op in _edit(e["title"], [append("attendees", f", {email}")])]
    titles = "; ".join(f"'{e['title']}'" for e in events)
    prompt = f"In the calendar, add {email} to the attendees of these events (keep the other attendees): {titles}."
    return family_task(
        "cal-invite",
        "calendar",
        seed,
        difficulty,
        prompt,
        {"seed": seed, "ids": [e["id"] for e in events], "email": email},
        plan,
    )


def check_invite(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """Each event's attendees are its old ones plus the guest; every other event unchanged."""
    rows = _rows(db)
    original = {e["id"]: e for e in calendar_dataset(params["seed"])}
    if not _others_unchanged(rows, params["seed"], set(params["ids"])) or len(rows) != len(original):
        return False, "other events changed"
    for event_id in params["ids"]:
        row, old = rows.get(event_id), original[event_id]
        want = {a.strip() for a in old["attendees"].split(",")} | {params["email"]}
        if row is None or {k: row[k] for k in _COLUMNS[:5]} != {k: old[k] for k in _COLUMNS[:5]}:
            return False, f"{old['title']!r} changed beyond its attendees"
        if {a.strip() for a in row["attendees"].split(",") if a.strip()} != want:
            return False, f"{old['title']!r} does not have exactly its attendees and the guest"
    return True, "every event has the guest"
