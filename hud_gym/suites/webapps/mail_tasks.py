"""The webmail's families: reply, forward, and label-and-archive (difficulty = messages to handle).

Each generator picks its targets from the seed's Inbox (:func:`~.mail.mail_dataset`); each check
reads the episode's ``messages`` table.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hud_gym.suites.webapps.data import FIRST, LAST, rng
from hud_gym.suites.webapps.functions import family_task
from hud_gym.suites.webapps.mail import ME, mail_dataset
from hud_gym.suites.webapps.oracle import Op, click, fill, press
from hud_gym.task import Task

__all__ = ["check_forward", "check_label", "check_reply", "forward_task", "label_task", "reply_task"]

_WORDS = ("confirmed", "approved", "noted", "scheduled", "received", "declined", "postponed")


def _open(subject: str) -> list[Op]:
    """Search the Inbox for ``subject`` and open it."""
    return [fill("q", subject), press("enter"), click(subject, "a")]


def reply_task(seed: int, difficulty: int) -> Task:
    """Reply to ``difficulty`` messages (by subject) with a given text."""
    r = rng(seed, "mail-reply")
    targets = r.sample(mail_dataset(seed), difficulty)
    text = f"{r.choice(_WORDS).capitalize()}, thanks - ref {r.randint(100, 999)}"
    subjects = "; ".join(f"'{t['subject']}'" for t in targets)
    plan: list[Op] = []
    for target in targets:
        plan += [*_open(target["subject"]), click("Reply", "a"), fill("body", text), click("Send", "button")]
    params = {"targets": [t["id"] for t in targets], "text": text}
    prompt = f"In the webmail, reply to the email(s) with the subject {subjects}. Each reply's text: {text}"
    return family_task("mail-reply", "mail", seed, difficulty, prompt, params, plan)


def check_reply(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """Each target has a sent reply to its sender containing the text; no other reply was sent."""
    rows = db.execute(
        "SELECT m.in_reply_to, m.recipients, m.body, o.sender_email FROM messages m "
        "LEFT JOIN messages o ON o.id = m.in_reply_to WHERE m.folder = 'Sent'"
    ).fetchall()
    good = {
        src for src, to, body, sender in rows if src is not None and to.strip() == sender and params["text"] in body
    }
    if good != set(params["targets"]) or len(rows) != len(params["targets"]):
        return False, f"{len(good)} of {len(params['targets'])} replies right, {len(rows)} message(s) sent"
    return True, "every reply sent"


def forward_task(seed: int, difficulty: int) -> Task:
    """Forward ``difficulty`` messages (by subject) to an address."""
    r = rng(seed, "mail-forward")
    targets = r.sample(mail_dataset(seed), difficulty)
    to = f"{r.choice(FIRST).lower()}.{r.choice(LAST).lower()}@partner.example.org"
    plan: list[Op] = []
    for target in targets:
        plan += [*_open(target["subject"]), click("Forward", "a"), fill("to", to), click("Send", "button")]
    subjects = "; ".join(f"'{t['subject']}'" for t in targets)
    prompt = f"In the webmail, forward the email(s) with the subject {subjects} to {to}."
    return family_task(
        "mail-forward", "mail", seed, difficulty, prompt, {"targets": [t["id"] for t in targets], "to": to}, plan
    )


def check_forward(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """Each target was forwarded to the address, and nothing else was sent."""
    rows = db.execute("SELECT forwarded_from, recipients FROM messages WHERE folder = 'Sent'").fetchall()
    good = {src for src, to in rows if src is not None and to.strip().lower() == params["to"]}
    if good != set(params["targets"]) or len(rows) != len(params["targets"]):
        return False, f"{len(good)} of {len(params['targets'])} forwards right, {len(rows)} message(s) sent"
    return True, "every message forwarded"


def label_task(seed: int, difficulty: int) -> Task:
    """Label every message of ``difficulty`` senders and move them to the Archive (bulk actions)."""
    r = rng(seed, "mail-label")
    inbox = mail_dataset(seed)
    senders = r.sample(sorted({m["sender"] for m in inbox}), difficulty)
    label = r.choice(("Finance", "Projects", "Clients", "Later", "Team", "Travel"))
    plan: list[Op] = []
    for sender in senders:
        boxes = [click(f"Select {m['subject']}", "input") for m in inbox if m["sender"] == sender]
        plan += [fill("q", sender), press("enter"), *boxes, fill("label", label), click("Apply label", "button")]
        plan += [fill("q", sender), press("enter"), *boxes, click("Move to Archive", "button")]
    targets = [m["id"] for m in inbox if m["sender"] in senders]
    names = ", ".join(senders)
    prompt = f"In the webmail, label every email from {names} as '{label}' and move them to the Archive folder."
    return family_task("mail-label", "mail", seed, difficulty, prompt, {"targets": targets, "label": label}, plan)


def check_label(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """The targets are labelled and archived; every other message is untouched."""
    rows = db.execute("SELECT id, folder, label FROM messages WHERE sender_email != ?", (ME,)).fetchall()
    targets = set(params["targets"])
    wrong = [
        i
        for i, folder, label in rows
        if (folder, label) != (("Archive", params["label"]) if i in targets else ("Inbox", ""))
    ]
    return (not wrong, "every message filed" if not wrong else f"{len(wrong)} message(s) not as asked")
