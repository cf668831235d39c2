"""Amplification in the browser (issue 23, item 11): a page's title, URL and element texts are
cut before they reach ``info`` (:mod:`hud_gym.bounds`)."""

from __future__ import annotations

import json
import urllib.parse

import gymnasium
import pytest

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym.actions import CustomAction
from hud_gym.bounds import TITLE_CHARS, URL_CHARS

PAGE = (
    "<body><a id='a' href='#FRAG'>link</a><script>"
    "document.title = 'T'.repeat(8 * 1024 * 1024);"
    "const a = document.getElementById('a'); a.id = 'i'.repeat(1024 * 1024);"
    "a.setAttribute('name', 'n'.repeat(1024 * 1024)); a.href = '#' + 'h'.repeat(1024 * 1024);"
    "</script></body>"
)


@pytest.mark.timeout(300)
def test_a_page_cannot_blow_up_info() -> None:
    env = gymnasium.make("hud/Browser-v0", screen_size=(320, 240), capture="cdp", elements=True, max_steps=100)
    try:
        env.reset(seed=0)
        url = "data:text/html," + urllib.parse.quote(PAGE) + "#" + "u" * 20_000
        _, _, _, _, info = env.step(CustomAction(action="goto", args={"url": url}))
        assert info["status"] == "ok", info
        assert info["title"].startswith("TTT") and len(info["title"]) < TITLE_CHARS + 40
        assert len(info["url"]) < URL_CHARS + 40 and all(len(tab["title"]) < TITLE_CHARS + 40 for tab in info["tabs"])
        (link,) = [e for e in info["elements"] if e["tag"] == "a"]
        assert len(link["id"]) <= 200 and len(link["name"]) <= 200 and len(link["href"]) <= URL_CHARS
        assert len(json.dumps(info, default=str)) < 200_000
    finally:
        env.close()
