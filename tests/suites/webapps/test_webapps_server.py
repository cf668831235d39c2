"""The web apps' server: a real SQLite database per episode, isolated per env, restored at every
reset, reachable only under the episode's live token, requests bounded."""

from __future__ import annotations

import contextlib
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

from hud_gym.core.gym_type import import_path
from hud_gym.suites.webapps.functions import APPS
from hud_gym.suites.webapps.mail import APP as MAIL
from hud_gym.suites.webapps.server import MAX_BODY, EpisodeDB, base_url, end_episode, get_episode, start_episode

pytestmark = pytest.mark.timeout(120)


def _post(episode: EpisodeDB, path: str, fields: dict[str, str] | bytes) -> int:
    data = fields if isinstance(fields, bytes) else urlencode(fields).encode()
    request = urllib.request.Request(f"{base_url()}/e/{episode.token}/{episode.app.name}{path}", data=data)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _archived(episode: EpisodeDB) -> int:
    with episode.connect(readonly=True) as db:
        return int(db.execute("SELECT count(*) FROM messages WHERE folder = 'Archive'").fetchone()[0])


def test_two_envs_episodes_are_isolated_and_a_reset_restores_the_seeds_state() -> None:
    a, b = start_episode(MAIL, 11, owner=-101), start_episode(MAIL, 11, owner=-102)
    assert a.path != b.path and a.token != b.token
    assert _post(a, "/bulk", {"id": "1", "action": "Archive", "back": "Inbox"}) == 200  # the redirect followed
    assert (_archived(a), _archived(b)) == (1, 0)
    again = start_episode(MAIL, 11, owner=-101)  # the env's next episode: the seed's state again
    assert _archived(again) == 0
    assert get_episode(a.token) is None and not a.path.exists()
    assert _post(a, "/bulk", {"id": "2", "action": "Archive"}) == 404  # the ended episode's pages are gone
    assert _archived(again) == 0 and _archived(b) == 0
    for episode in (again, b):
        end_episode(episode.token)


def test_the_database_is_a_real_sqlite_file_in_the_episodes_own_private_folder() -> None:
    episode = start_episode(MAIL, 3, owner=-103)
    try:
        assert episode.path.parent.name == episode.token
        assert episode.path.parent.stat().st_mode & 0o077 == 0
        with sqlite3.connect(episode.path) as db:
            assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 30
    finally:
        end_episode(episode.token)
    assert not episode.path.parent.exists()


def test_unknown_tokens_apps_and_oversized_bodies_are_refused() -> None:
    episode = start_episode(MAIL, 4, owner=-104)
    try:
        assert _post(episode, "/bulk", b"x" * (MAX_BODY + 1)) == 413
        forged = EpisodeDB(token="0" * 32, app=MAIL, path=episode.path)
        assert _post(forged, "/bulk", {"id": "1", "action": "Archive"}) == 404
        with urllib.request.urlopen(
            f"{base_url()}/e/{episode.token}/mail/folder/Inbox?q=" + "%27" * 5000, timeout=30
        ) as r:
            assert r.status == 200  # a long, quote-laden query is bounded and bound as a parameter
        assert _archived(episode) == 0
    finally:
        end_episode(episode.token)


def _dump(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return list(db.iterdump())


@pytest.mark.parametrize("name", sorted(APPS))
def test_an_episode_is_a_copy_of_the_seeds_template_and_its_writes_never_reach_the_next(name: str) -> None:
    app = import_path(APPS[name])
    with contextlib.closing(sqlite3.connect(":memory:")) as seeded:
        app.create(seeded, 21)  # the seed's data made the slow way: what the template must hold
        expected = list(seeded.iterdump())
    first = start_episode(app, 21, owner=-105)
    assert _dump(first.path) == expected
    with contextlib.closing(sqlite3.connect(first.path)) as db, db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            db.execute(f"DELETE FROM {table}")  # the episode wipes every table of its copy
    assert _dump(first.path) != expected
    second = start_episode(app, 21, owner=-105)  # the env's next episode of the same seed
    assert second.path != first.path and not first.path.exists()
    assert _dump(second.path) == expected
    other = start_episode(app, 22, owner=-106)  # another seed: other data
    try:
        assert _dump(other.path) != expected
    finally:
        end_episode(second.token)
        end_episode(other.token)
