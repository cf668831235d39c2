"""The shop's families: fill the cart, find the cheapest well-rated product per category, and check
out with an address (difficulty = products or categories).

Each check reads the episode's ``cart``, ``orders`` and ``order_items`` tables.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hud_gym.suites.webapps.data import FIRST, LAST, rng
from hud_gym.suites.webapps.functions import family_task
from hud_gym.suites.webapps.oracle import Op, click, fill, press
from hud_gym.suites.webapps.shop import ADDRESS_FIELDS, CATEGORIES, shop_dataset
from hud_gym.task import Task

__all__ = ["cart_task", "check_cart", "check_checkout", "check_cheapest", "checkout_task", "cheapest_task"]

_CITIES = ("Lyon", "Porto", "Graz", "Malmo", "Ghent", "Turku", "Brno", "Cork")


def _add(name: str) -> list[Op]:
    """Search for the product ``name``, open it, add it to the cart."""
    return [fill("q", name), press("enter"), click(name, "a"), click("Add to cart", "button")]


def _cart_is(db: sqlite3.Connection, targets: list[int]) -> tuple[bool, str]:
    cart = dict(db.execute("SELECT product_id, qty FROM cart").fetchall())
    if cart != dict.fromkeys(targets, 1):
        return (
            False,
            f"the cart holds {len(cart)} product(s), {sum(cart.values())} item(s), not the {len(targets)} asked for",
        )
    return True, "the cart holds exactly the products asked for"


def cart_task(seed: int, difficulty: int) -> Task:
    """Add ``difficulty`` named products to the cart, one of each."""
    targets = rng(seed, "shop-cart").sample(shop_dataset(seed), difficulty)
    plan = [op for t in targets for op in _add(t["name"])]
    names = "; ".join(t["name"] for t in targets)
    prompt = f"In the shop, add one of each of these products to the cart (and nothing else): {names}."
    return family_task("shop-cart", "shop", seed, difficulty, prompt, {"targets": [t["id"] for t in targets]}, plan)


def check_cart(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """The cart holds one of each target, nothing else."""
    return _cart_is(db, params["targets"])


def cheapest_task(seed: int, difficulty: int) -> Task:
    """In each of ``difficulty`` categories, add the cheapest product rated at least a threshold."""
    r = rng(seed, "shop-cheapest")
    catalog = shop_dataset(seed)
    categories = r.sample(CATEGORIES, difficulty)
    threshold = r.choice((3.0, 3.5, 4.0))
    targets, plan = [], []
    for category in categories:
        good = [p for p in catalog if p["category"] == category and p["rating"] >= threshold]
        if not good:
            good = [max((p for p in catalog if p["category"] == category), key=lambda p: p["rating"])]
        best = min(good, key=lambda p: p["price"])
        targets.append(best["id"])
        plan += [
            click("Catalog", "a"),
            click(category, "a"),
            click("Price: low to high", "a"),
            click(best["name"], "a"),
            click("Add to cart", "button"),
        ]
    prompt = (
        f"In the shop, for each of these categories: {', '.join(categories)}, add to the cart the cheapest product "
        f"rated {threshold:.1f} stars or more (if none is, the best rated one). Add nothing else."
    )
    return family_task("shop-cheapest", "shop", seed, difficulty, prompt, {"targets": targets}, plan)


def check_cheapest(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """The cart holds one of each right product, nothing else."""
    return _cart_is(db, params["targets"])


def checkout_task(seed: int, difficulty: int) -> Task:
    """Buy ``difficulty`` named products and check out with a given address."""
    r = rng(seed, "shop-checkout")
    targets = r.sample(shop_dataset(seed), difficulty)
    address = {
        "name": f"{r.choice(FIRST)} {r.choice(LAST)}",
        "street": f"{r.randint(1, 199)} {r.choice(LAST)} Street",
        "city": r.choice(_CITIES),
        "zip": f"{r.randint(10000, 99999)}",
    }
    plan = [op for t in targets for op in _add(t["name"])]
    plan += [click("Checkout", "a"), *(fill(f, address[f]) for f in ADDRESS_FIELDS), click("Place order", "button")]
    names = "; ".join(t["name"] for t in targets)
    where = ", ".join(f"{f}: {address[f]}" for f in ADDRESS_FIELDS)
    prompt = f"In the shop, buy one of each of these products: {names}. Ship the order to {where}."
    params = {"targets": [t["id"] for t in targets], "address": address}
    return family_task("shop-checkout", "shop", seed, difficulty, prompt, params, plan)


def check_checkout(db: sqlite3.Connection, params: dict[str, Any]) -> tuple[bool, str]:
    """Exactly one order, of exactly the targets (one each), to exactly the address."""
    orders = db.execute("SELECT id, name, street, city, zip FROM orders").fetchall()
    if len(orders) != 1:
        return False, f"{len(orders)} orders placed, not 1"
    order_id, *address = orders[0]
    items = dict(db.execute("SELECT product_id, qty FROM order_items WHERE order_id = ?", (order_id,)).fetchall())
    if items != dict.fromkeys(params["targets"], 1):
        return False, "the order's items are not the products asked for"
    if address != [params["address"][f] for f in ADDRESS_FIELDS]:
        return False, "the order's address is not the one asked for"
    return True, "the order is placed as asked"
