"""An admin panel: users (search, pagination, bulk actions on checked rows), a moderation queue of
posts (approve, or reject after a confirmation page), and a settings form with validation.

The state is the ``users``, ``posts`` and ``settings`` tables of the episode's database.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from typing import Any

from hud_gym.suites.webapps.data import NOUNS, TOPICS, people, rng
from hud_gym.suites.webapps.pages import PAGE_SIZE, Response, esc, layout, not_found, page_number, pager, redirect
from hud_gym.suites.webapps.server import App, Request

__all__ = ["APP", "SETTINGS", "admin_dataset"]

SETTINGS: dict[str, str] = {
    "site_name": "Site name",
    "support_email": "Support email",
    "max_upload_mb": "Max upload (MB)",
}
"""The text settings: key to label."""
_STATUSES = ("pending", "approved", "rejected")
_BULK = {"Deactivate": ("active", 0), "Activate": ("active", 1), "Make editor": ("role", "editor")}
_SCHEMA = (
    "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, email TEXT, role TEXT, active INTEGER)",
    "CREATE TABLE posts (id INTEGER PRIMARY KEY, author TEXT, title TEXT, status TEXT)",
    "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT)",
)


@lru_cache(maxsize=256)
def admin_dataset(seed: int) -> dict[str, Any]:
    """The panel of ``seed``: 24 users (some inactive), 8 pending and 8 approved posts, the settings."""
    r = rng(seed, "admin")
    users = [
        {
            "id": i + 1,
            "name": n,
            "email": e,
            "role": r.choice(("member", "member", "editor")),
            "active": int(r.random() > 0.15),
        }
        for i, (n, e) in enumerate(people(r, 24))
    ]
    titles = r.sample([f"{t} {n}" for t in TOPICS for n in NOUNS], 16)
    posts = [
        {"id": i + 1, "author": r.choice(users)["name"], "title": t, "status": "pending" if i < 8 else "approved"}
        for i, t in enumerate(titles)
    ]
    word = r.choice(TOPICS)
    settings = {"site_name": f"{word} Community", "support_email": f"help@{word.lower()}.example.com",
                "max_upload_mb": str(r.choice((5, 10, 20)))}  # fmt: skip
    return {"users": tuple(users), "posts": tuple(posts), "settings": settings}


def create(conn: sqlite3.Connection, seed: int) -> None:
    """The episode's database: the schema and the seed's users, posts and settings."""
    data = admin_dataset(seed)
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.executemany("INSERT INTO users VALUES (:id, :name, :email, :role, :active)", data["users"])
    conn.executemany("INSERT INTO posts VALUES (:id, :author, :title, :status)", data["posts"])
    conn.executemany("INSERT INTO settings VALUES (?, ?)", data["settings"].items())


def _page(req: Request, content: str) -> Response:
    nav = [("Users", f"{req.base}/users"), ("Posts", f"{req.base}/posts"), ("Settings", f"{req.base}/settings")]
    return layout("Admin", nav, content, req.get("flash"))


def _users(req: Request) -> Response:
    query, page = req.get("q").strip(), page_number(req.get("page"))
    where, args = ("name LIKE ? OR email LIKE ?", [f"%{query}%"] * 2) if query else ("1", [])
    total = req.db.execute(f"SELECT count(*) FROM users WHERE {where}", args).fetchone()[0]
    rows = req.db.execute(
        f"SELECT id, name, email, role, active FROM users WHERE {where} ORDER BY name LIMIT ? OFFSET ?",
        [*args, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    ).fetchall()
    lines = "".join(
        f'<tr><td><input type="checkbox" name="id" value="{i}" form="bulk" aria-label="Select {esc(n)}"></td>'
        f"<td>{esc(n)}</td><td>{esc(e)}</td><td>{esc(role)}</td><td>{'Active' if a else 'Inactive'}</td></tr>"
        for i, n, e, role, a in rows
    )
    search = (
        f'<form method="get" action="{req.base}/users"><input type="text" name="q" value="{esc(query)}" '
        'placeholder="Search users"> <button>Search</button></form>'
    )
    bulk = (
        f'<form id="bulk" method="post" action="{req.base}/users/bulk">'
        + "".join(f'<button name="action" value="{a}">{a}</button>' for a in _BULK)
        + "</form>"
    )
    table = f"<table><tr><th></th><th>Name</th><th>Email</th><th>Role</th><th>Status</th></tr>{lines}</table>"
    return _page(req, f"<h2>Users</h2>{search}{bulk}{table}{pager(f'{req.base}/users', page, total, {'q': query})}")


def _bulk(req: Request) -> Response:
    ids = [int(i) for i in req.all("id") if i.isdigit()]
    change = _BULK.get(req.get("action"))
    if not ids or change is None:
        return redirect(f"{req.base}/users", "Select users and an action")
    column, value = change
    req.db.execute(f"UPDATE users SET {column} = ? WHERE id IN ({', '.join('?' * len(ids))})", [value, *ids])
    return redirect(f"{req.base}/users", f"{len(ids)} user(s) updated")


def _posts(req: Request) -> Response:
    status = req.get("status", "pending")
    status = status if status in _STATUSES else "pending"
    rows = req.db.execute("SELECT id, author, title FROM posts WHERE status = ? ORDER BY id", (status,)).fetchall()
    tabs = " | ".join(f'<a href="{req.base}/posts?status={s}">{s.capitalize()}</a>' for s in _STATUSES)
    lines = "".join(
        f'<tr><td><a href="{req.base}/posts/{i}">{esc(t)}</a></td><td>{esc(a)}</td></tr>' for i, a, t in rows
    )
    return _page(req, f"<p>{tabs}</p><h2>{status.capitalize()} posts</h2><table>{lines}</table>")


def _post(req: Request, post_id: int) -> Response:
    row = req.db.execute("SELECT author, title, status FROM posts WHERE id = ?", (post_id,)).fetchone()
    if row is None:
        return not_found()
    author, title, status = row
    actions = (
        f'<form class="inline" method="post" action="{req.base}/posts/{post_id}/approve"><button>Approve</button></form>'
        f'<a class="btn" href="{req.base}/posts/{post_id}/reject">Reject</a>'
        if status == "pending"
        else ""
    )
    body = f"<p>By {esc(author)} &middot; {esc(status)}</p><p>A post about {esc(title.lower())}.</p>"
    return _page(req, f"<h2>{esc(title)}</h2>{body}{actions}")


def _moderate(req: Request, post_id: int, action: str) -> Response:
    row = req.db.execute("SELECT title, status FROM posts WHERE id = ?", (post_id,)).fetchone()
    if row is None or action not in ("approve", "reject"):
        return not_found()
    if req.method == "GET" and action == "reject":
        form = (
            f'<h2>Reject "{esc(row[0])}"?</h2><p>The author is told the post was rejected.</p>'
            f'<form method="post" action="{req.base}/posts/{post_id}/reject"><button>Confirm</button></form>'
            f'<a class="btn" href="{req.base}/posts">Cancel</a>'
        )
        return _page(req, form)
    if req.method != "POST" or row[1] != "pending":
        return redirect(f"{req.base}/posts", "Only a pending post can be moderated")
    req.db.execute(
        "UPDATE posts SET status = ? WHERE id = ?", ("approved" if action == "approve" else "rejected", post_id)
    )
    return redirect(f"{req.base}/posts", f"Post {action}d")


def _settings(req: Request) -> Response:
    if req.method == "POST":
        values = {k: req.get(k).strip()[:200] for k in SETTINGS}
        if "@" not in values["support_email"] or not values["site_name"]:
            return redirect(f"{req.base}/settings", "Give a site name and a valid support email")
        if not values["max_upload_mb"].isdigit() or not 1 <= int(values["max_upload_mb"]) <= 1000:
            return redirect(f"{req.base}/settings", "Max upload is a number of MB from 1 to 1000")
        req.db.executemany("UPDATE settings SET value = ? WHERE key = ?", [(v, k) for k, v in values.items()])
        return redirect(f"{req.base}/settings", "Settings saved")
    current = dict(req.db.execute("SELECT key, value FROM settings").fetchall())
    fields = "".join(
        f'<p>{label} <input type="text" name="{k}" value="{esc(current.get(k, ""))}"></p>'
        for k, label in SETTINGS.items()
    )
    form = f'<h2>Settings</h2><form method="post" action="{req.base}/settings">{fields}<button>Save settings</button></form>'
    return _page(req, form)


def handle(req: Request) -> Response:
    """The admin panel's pages."""
    parts = req.path.strip("/").split("/")
    if parts == [""]:
        return redirect(f"{req.base}/users")
    if parts == ["users"] and req.method == "GET":
        return _users(req)
    if parts == ["users", "bulk"] and req.method == "POST":
        return _bulk(req)
    if parts == ["posts"] and req.method == "GET":
        return _posts(req)
    if len(parts) == 2 and parts[0] == "posts" and parts[1].isdigit() and req.method == "GET":
        return _post(req, int(parts[1]))
    if len(parts) == 3 and parts[0] == "posts" and parts[1].isdigit():
        return _moderate(req, int(parts[1]), parts[2])
    if parts == ["settings"]:
        return _settings(req)
    return not_found()


APP = App(name="admin", create=create, handle=handle)
"""The admin panel."""
