"""A shop: a catalog with search, category filters, sorting and pagination, product pages, a cart,
and a checkout form with a shipping address.

The state is the ``cart``, ``orders`` and ``order_items`` tables of the episode's database.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from hud_gym.suites.webapps.data import rng
from hud_gym.suites.webapps.pages import PAGE_SIZE, Response, esc, layout, not_found, page_number, pager, redirect
from hud_gym.suites.webapps.server import App, Request

__all__ = ["ADDRESS_FIELDS", "APP", "CATEGORIES", "shop_dataset"]

CATEGORIES = ("Laptops", "Phones", "Headphones", "Cameras", "Monitors")
_ITEMS = {"Laptops": "Laptop", "Phones": "Phone", "Headphones": "Headset", "Cameras": "Camera", "Monitors": "Display"}
_BRANDS = ("Acme", "Nimbus", "Orion", "Vertex", "Zephyr", "Lumen", "Kestrel", "Polar")
_MODELS = ("Air", "Pro", "Max", "Mini", "Plus", "Neo", "Ultra", "Lite", "One", "Edge")
ADDRESS_FIELDS = ("name", "street", "city", "zip")
_SCHEMA = (
    "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price INTEGER, rating REAL)",
    "CREATE TABLE cart (product_id INTEGER PRIMARY KEY, qty INTEGER NOT NULL)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, name TEXT, street TEXT, city TEXT, zip TEXT, total INTEGER)",
    "CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, qty INTEGER)",
)
_SORTS = {"price": "price ASC, id", "rating": "rating DESC, id", "": "id"}


@lru_cache(maxsize=256)
def shop_dataset(seed: int) -> tuple[dict[str, Any], ...]:
    """The catalog of ``seed``: 8 products per category, distinct names, distinct prices per category."""
    r = rng(seed, "shop")
    rows = []
    for category in CATEGORIES:
        names = r.sample([f"{b} {_ITEMS[category]} {m}" for b in _BRANDS for m in _MODELS], 8)
        prices = r.sample(range(49, 1999), 8)
        for name, price in zip(names, prices, strict=True):
            rows.append({"name": name, "category": category, "price": price, "rating": r.randint(20, 50) / 10})
    r.shuffle(rows)
    return tuple({"id": i + 1, **row} for i, row in enumerate(rows))


def create(conn: sqlite3.Connection, seed: int) -> None:
    """The episode's database: the schema and the seed's catalog, an empty cart."""
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO products VALUES (?, ?, ?, ?, ?)",
        [(p["id"], p["name"], p["category"], p["price"], p["rating"]) for p in shop_dataset(seed)],
    )


def _page(req: Request, content: str) -> Response:
    count = req.db.execute("SELECT coalesce(sum(qty), 0) FROM cart").fetchone()[0]
    nav = [("Catalog", f"{req.base}/"), (f"Cart ({count})", f"{req.base}/cart"), ("Orders", f"{req.base}/orders")]
    search = (
        f'<form method="get" action="{req.base}/"><input type="text" name="q" placeholder="Search products"> '
        "<button>Search</button></form>"
    )
    return layout("Shop", nav, search + content, req.get("flash"))


def _catalog(req: Request) -> Response:
    query, category, sort = req.get("q").strip(), req.get("category"), req.get("sort")
    page, sort = page_number(req.get("page")), sort if sort in _SORTS else ""
    where, args = "1", list[str]()
    if query:
        where, args = where + " AND name LIKE ?", [*args, f"%{query}%"]
    if category in CATEGORIES:
        where, args = where + " AND category = ?", [*args, category]
    total = req.db.execute(f"SELECT count(*) FROM products WHERE {where}", args).fetchone()[0]
    rows = req.db.execute(
        f"SELECT id, name, category, price, rating FROM products WHERE {where} ORDER BY {_SORTS[sort]} LIMIT ? OFFSET ?",
        [*args, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    ).fetchall()
    keep = {"q": query, "category": category}
    filters = (
        " | ".join(f'<a href="{req.base}/?{esc(urlencode({"category": c}))}">{c}</a>' for c in CATEGORIES)
        + f' | <a href="{req.base}/">All</a>'
    )
    sorts = (
        f'Sort: <a href="{req.base}/?{esc(urlencode({**keep, "sort": "price"}))}">Price: low to high</a> '
        f'<a href="{req.base}/?{esc(urlencode({**keep, "sort": "rating"}))}">Best rated</a>'
    )
    lines = "".join(
        f'<tr><td><a href="{req.base}/p/{i}">{esc(n)}</a></td><td>{esc(c)}</td><td>${p}</td><td>{r:.1f} stars</td></tr>'
        for i, n, c, p, r in rows
    )
    table = f"<table><tr><th>Product</th><th>Category</th><th>Price</th><th>Rating</th></tr>{lines}</table>"
    title = f"<h2>{esc(category) if category in CATEGORIES else 'All products'}</h2>"
    return _page(
        req, f"<p>{filters}</p>{title}<p>{sorts}</p>{table}{pager(f'{req.base}/', page, total, {**keep, 'sort': sort})}"
    )


def _product(req: Request, product_id: int) -> Response:
    row = req.db.execute(
        "SELECT id, name, category, price, rating FROM products WHERE id = ?", (product_id,)
    ).fetchone()
    if row is None:
        return not_found()
    i, name, category, price, rating = row
    content = (
        f"<h2>{esc(name)}</h2><p>{esc(category)} &middot; ${price} &middot; {rating:.1f} stars</p>"
        f'<form method="post" action="{req.base}/cart/add"><input type="hidden" name="id" value="{i}">'
        "<button>Add to cart</button></form>"
    )
    return _page(req, content)


def _cart(req: Request) -> Response:
    rows = req.db.execute(
        "SELECT p.id, p.name, p.price, c.qty FROM cart c JOIN products p ON p.id = c.product_id ORDER BY p.name"
    ).fetchall()
    lines = "".join(
        f"<tr><td>{esc(n)}</td><td>{q}</td><td>${p * q}</td><td>"
        f'<form class="inline" method="post" action="{req.base}/cart/remove"><input type="hidden" name="id" value="{i}">'
        f'<button aria-label="Remove {esc(n)}">Remove</button></form></td></tr>'
        for i, n, p, q in rows
    )
    total = sum(p * q for _, _, p, q in rows)
    checkout = (
        f'<p><a class="btn" href="{req.base}/checkout">Checkout</a></p>' if rows else "<p>Your cart is empty.</p>"
    )
    return _page(req, f"<h2>Cart</h2><table>{lines}</table><p>Total: ${total}</p>{checkout}")


def _checkout(req: Request) -> Response:
    if req.method == "POST":
        address = {f: req.get(f).strip()[:200] for f in ADDRESS_FIELDS}
        items = req.db.execute(
            "SELECT c.product_id, c.qty, p.price FROM cart c JOIN products p ON p.id = c.product_id"
        ).fetchall()
        if not items or not all(address.values()):
            return redirect(
                f"{req.base}/checkout", "Fill in every field of the address" if items else "The cart is empty"
            )
        cursor = req.db.execute(
            "INSERT INTO orders (name, street, city, zip, total) VALUES (?, ?, ?, ?, ?)",
            (*address.values(), sum(q * p for _, q, p in items)),
        )
        req.db.executemany("INSERT INTO order_items VALUES (?, ?, ?)", [(cursor.lastrowid, i, q) for i, q, _ in items])
        req.db.execute("DELETE FROM cart")
        return redirect(f"{req.base}/orders", f"Order #{cursor.lastrowid} placed")
    fields = "".join(f'<p>{f.capitalize()} <input type="text" name="{f}"></p>' for f in ADDRESS_FIELDS)
    return _page(
        req,
        f'<h2>Shipping address</h2><form method="post" action="{req.base}/checkout">{fields}<button>Place order</button></form>',
    )


def _orders(req: Request) -> Response:
    rows = req.db.execute("SELECT id, name, city, total FROM orders ORDER BY id DESC").fetchall()
    lines = "".join(f"<tr><td>#{i}</td><td>{esc(n)}</td><td>{esc(c)}</td><td>${t}</td></tr>" for i, n, c, t in rows)
    return _page(req, f"<h2>Orders</h2><table>{lines}</table>")


def _cart_change(req: Request, add: bool) -> Response:
    product = req.get("id")
    if (
        not product.isdigit()
        or req.db.execute("SELECT 1 FROM products WHERE id = ?", (int(product),)).fetchone() is None
    ):
        return not_found()
    if add:
        req.db.execute(
            "INSERT INTO cart VALUES (?, 1) ON CONFLICT(product_id) DO UPDATE SET qty = qty + 1", (int(product),)
        )
    else:
        req.db.execute("DELETE FROM cart WHERE product_id = ?", (int(product),))
    return redirect(f"{req.base}/cart", "Added to cart" if add else "Removed from cart")


def handle(req: Request) -> Response:
    """The shop's pages."""
    parts = req.path.strip("/").split("/")
    if req.method == "POST" and parts[0] == "cart" and len(parts) == 2 and parts[1] in ("add", "remove"):
        return _cart_change(req, parts[1] == "add")
    if parts == ["checkout"]:
        return _checkout(req)
    if req.method != "GET":
        return not_found()
    if parts == [""]:
        return _catalog(req)
    if len(parts) == 2 and parts[0] == "p" and parts[1].isdigit():
        return _product(req, int(parts[1]))
    pages = {"cart": _cart, "orders": _orders}
    return pages[parts[0]](req) if len(parts) == 1 and parts[0] in pages else not_found()


APP = App(name="shop", create=create, handle=handle)
"""The shop."""
