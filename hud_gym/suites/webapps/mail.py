"""Webmail: folders (Inbox, Archive, Sent, Trash), search, pagination, a message page, labels,
bulk actions on checked messages, reply and forward through a compose form.

The state is the ``messages`` table of the episode's database; a sent message has
``in_reply_to`` or ``forwarded_from`` set to the message it answers.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from typing import Any

from hud_gym.suites.webapps.data import NOUNS, TOPICS, people, rng
from hud_gym.suites.webapps.pages import PAGE_SIZE, Response, esc, layout, not_found, page_number, pager, redirect
from hud_gym.suites.webapps.server import App, Request

__all__ = ["APP", "ME", "mail_dataset"]

ME = "me@example.com"
FOLDERS = ("Inbox", "Archive", "Sent", "Trash")
_SCHEMA = """CREATE TABLE messages (id INTEGER PRIMARY KEY, folder TEXT NOT NULL, sender TEXT NOT NULL,
  sender_email TEXT NOT NULL, recipients TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL,
  day INTEGER NOT NULL, label TEXT NOT NULL DEFAULT '', in_reply_to INTEGER, forwarded_from INTEGER)"""
_COLUMNS = ("id", "folder", "sender", "sender_email", "recipients", "subject", "body", "day")


@lru_cache(maxsize=256)
def mail_dataset(seed: int) -> tuple[dict[str, Any], ...]:
    """The Inbox of ``seed``: 30 messages with distinct subjects from 10 senders (newest first)."""
    r = rng(seed, "mail")
    senders = people(r, 10)
    subjects = r.sample([f"{t} {n}" for t in TOPICS for n in NOUNS], 30)
    rows = []
    for i, subject in enumerate(subjects):
        name, email = senders[i % 10] if i < 20 else r.choice(senders)
        body = f"Hi, about the {subject.lower()}: {r.choice(NOUNS)} is due on day {r.randint(1, 28)}. Regards, {name}"
        rows.append({"id": i + 1, "folder": "Inbox", "sender": name, "sender_email": email, "recipients": ME,
                     "subject": subject, "body": body, "day": 30 - i})  # fmt: skip
    return tuple(rows)


def create(conn: sqlite3.Connection, seed: int) -> None:
    """The episode's database: the schema and the seed's Inbox."""
    conn.execute(_SCHEMA)
    conn.executemany(
        f"INSERT INTO messages ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
        [tuple(row[c] for c in _COLUMNS) for row in mail_dataset(seed)],
    )


def _nav(base: str) -> list[tuple[str, str]]:
    return [(f, f"{base}/folder/{f}") for f in FOLDERS] + [("Compose", f"{base}/compose")]


def _folder(req: Request, folder: str) -> Response:
    query, page = req.get("q").strip(), page_number(req.get("page"))
    where, args = "folder = ?", [folder]
    if query:
        where += " AND (subject LIKE ? OR sender LIKE ?)"
        args += [f"%{query}%", f"%{query}%"]
    total = req.db.execute(f"SELECT count(*) FROM messages WHERE {where}", args).fetchone()[0]
    rows = req.db.execute(
        f"SELECT id, sender, subject, day, label FROM messages WHERE {where} ORDER BY day DESC, id DESC LIMIT ? OFFSET ?",
        [*args, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    ).fetchall()
    lines = "".join(
        f'<tr><td><input type="checkbox" name="id" value="{i}" aria-label="Select {esc(s)}" form="bulk"></td>'
        f'<td>{esc(n)}</td><td><a href="{req.base}/msg/{i}">{esc(s)}</a></td><td>{esc(lab)}</td><td>Day {d}</td></tr>'
        for i, n, s, d, lab in rows
    )
    search = (
        f'<form method="get" action="{req.base}/folder/{folder}"><input type="text" name="q" value="{esc(query)}" '
        'placeholder="Search mail"> <button>Search</button></form>'
    )
    bulk = (
        f'<form id="bulk" method="post" action="{req.base}/bulk"><input type="hidden" name="back" value="{folder}">'
        '<input type="text" name="label" placeholder="Label"> <button name="action" value="label">Apply label</button>'
        + "".join(
            f'<button name="action" value="{f}">Move to {f}</button>' for f in FOLDERS if f not in (folder, "Sent")
        )
        + "</form>"
    )
    table = f"<table><tr><th></th><th>From</th><th>Subject</th><th>Label</th><th>Date</th></tr>{lines}</table>"
    content = f"<h2>{folder}</h2>{search}{bulk}{table}{pager(f'{req.base}/folder/{folder}', page, total, {'q': query})}"
    return layout("Webmail", _nav(req.base), content, req.get("flash"))


def _message(req: Request, message_id: int) -> Response:
    row = req.db.execute(
        "SELECT id, folder, sender, sender_email, recipients, subject, body, label FROM messages WHERE id = ?",
        (message_id,),
    ).fetchone()
    if row is None:
        return not_found()
    i, folder, sender, email, recipients, subject, body, label = row
    moves = "".join(
        f'<button name="action" value="{f}">Move to {f}</button>' for f in FOLDERS if f not in (folder, "Sent")
    )
    content = (
        f"<h2>{esc(subject)}</h2><p>From: {esc(sender)} &lt;{esc(email)}&gt;<br>To: {esc(recipients)}<br>"
        f"Folder: {esc(folder)} &middot; Label: {esc(label) or 'none'}</p><p>{esc(body)}</p>"
        f'<p><a class="btn" href="{req.base}/compose?reply={i}">Reply</a> '
        f'<a class="btn" href="{req.base}/compose?forward={i}">Forward</a></p>'
        f'<form method="post" action="{req.base}/bulk"><input type="hidden" name="id" value="{i}">'
        f'<input type="hidden" name="back" value="{esc(folder)}">'
        f'<input type="text" name="label" placeholder="Label"> <button name="action" value="label">Apply label</button>'
        f"{moves}</form>"
    )
    return layout("Webmail", _nav(req.base), content, req.get("flash"))


def _compose(req: Request) -> Response:
    to = subject = quoted = ""
    kind, source = ("reply", req.get("reply")) if req.get("reply") else ("forward", req.get("forward"))
    if source.isdigit():
        row = req.db.execute("SELECT sender_email, subject, body FROM messages WHERE id = ?", (int(source),)).fetchone()
        if row is None:
            return not_found()
        to = row[0] if kind == "reply" else ""
        subject = ("Re: " if kind == "reply" else "Fwd: ") + row[1]
        quoted = f"\n\n> {row[2]}"
    hidden = f'<input type="hidden" name="{kind}" value="{esc(source)}">' if source.isdigit() else ""
    content = (
        f'<h2>New message</h2><form method="post" action="{req.base}/send">{hidden}'
        f'<p>To <input type="text" name="to" value="{esc(to)}"></p>'
        f'<p>Subject <input type="text" name="subject" value="{esc(subject)}"></p>'
        f'<p><textarea name="body">{esc(quoted)}</textarea></p><button>Send</button></form>'
    )
    return layout("Webmail", _nav(req.base), content)


def _send(req: Request) -> Response:
    to = req.get("to").strip()
    if not to:
        return redirect(f"{req.base}/compose", "A message needs a recipient")
    reply, forward = req.get("reply"), req.get("forward")
    req.db.execute(
        "INSERT INTO messages (folder, sender, sender_email, recipients, subject, body, day, in_reply_to, "
        "forwarded_from) VALUES ('Sent', 'Me', ?, ?, ?, ?, 31, ?, ?)",
        (ME, to, req.get("subject"), req.get("body"), int(reply) if reply.isdigit() else None,
         int(forward) if forward.isdigit() else None),
    )  # fmt: skip
    return redirect(f"{req.base}/folder/Inbox", "Message sent")


def _bulk(req: Request) -> Response:
    ids = [int(i) for i in req.all("id") if i.isdigit()]
    action, back = req.get("action"), req.get("back", "Inbox")
    back = back if back in FOLDERS else "Inbox"
    if not ids:
        return redirect(f"{req.base}/folder/{back}", "No message selected")
    marks = ", ".join("?" * len(ids))
    if action == "label":
        req.db.execute(f"UPDATE messages SET label = ? WHERE id IN ({marks})", [req.get("label").strip()[:100], *ids])
    elif action in FOLDERS and action != "Sent":
        req.db.execute(f"UPDATE messages SET folder = ? WHERE id IN ({marks}) AND folder != 'Sent'", [action, *ids])
    return redirect(f"{req.base}/folder/{back}", f"{len(ids)} message(s) updated")


def handle(req: Request) -> Response:
    """The webmail's pages."""
    parts = req.path.strip("/").split("/")
    if req.method == "POST" and parts == ["send"]:
        return _send(req)
    if req.method == "POST" and parts == ["bulk"]:
        return _bulk(req)
    if parts == [""]:
        return redirect(f"{req.base}/folder/Inbox")
    if len(parts) == 2 and parts[0] == "folder" and parts[1] in FOLDERS:
        return _folder(req, parts[1])
    if len(parts) == 2 and parts[0] == "msg" and parts[1].isdigit():
        return _message(req, int(parts[1]))
    if parts == ["compose"]:
        return _compose(req)
    return not_found()


APP = App(name="mail", create=create, handle=handle)
"""The webmail."""
