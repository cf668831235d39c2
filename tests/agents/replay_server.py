"""A loopback HTTP server (aiohttp) that stands in for the model providers in tests: it speaks
Anthropic Messages (``POST /v1/messages``), OpenAI Responses (``POST /v1/responses``) and Chat
Completions (``POST /v1/chat/completions``; ``chat-tools`` scripts: the same API driven through
function tools, as HUD's ``OpenAIChatAgent`` drives MCP tools), replays scripted model turns, and checks every
request our agents send (:mod:`replay_checks`). A request that fails a check gets HTTP 400 with
the problems (so the run fails, quoting them) and is kept in :attr:`ReplayServer.problems`.

A :class:`Script` is found by a substring of the task prompt in the conversation's first user
turn. Its ``turns`` are replies (dicts) or callables ``turn(request) -> reply`` (run in a worker
thread, so they may read the env), taken in order: turn k answers the request that follows k
model turns. ``fail_first`` errors answer the script's first requests, ``fail_always`` every one.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from replay_checks import (
    anthropic_frame,
    check_anthropic,
    check_chat,
    check_chat_tools,
    check_responses,
    image_size,
    responses_frame,
)
from replay_replies import Fail

Turn = dict[str, Any] | Callable[["Request"], dict[str, Any]] | Fail


@dataclass
class Request:
    """One request of a conversation, as a turn callable sees it."""

    api: str
    body: dict[str, Any]
    turn: int
    frame: tuple[int, int] | None
    """The size of the newest screenshot the agent sent (the agent's frame)."""


@dataclass
class Script:
    """The scripted model of one conversation (see the module docstring)."""

    api: str
    match: str
    turns: list[Turn]
    fail_first: list[Fail] = field(default_factory=list)
    fail_always: Fail | None = None
    max_images: int | None = None
    frame: tuple[int, int] | None = None
    tools: set[str] = field(default_factory=set)
    """For ``api="chat-tools"`` (Chat Completions through function tools): the tools every request offers."""
    requests: list[Request] = field(default_factory=list)
    calls: int = 0


class ReplayServer:
    """See the module docstring; :meth:`start` it, then give agents :attr:`url`."""

    def __init__(self) -> None:
        self.scripts: list[Script] = []
        self.problems: list[str] = []
        self._conversations: dict[str, dict[str, Any]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="replay-server", daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (Anthropic's base URL; OpenAI's is ``url + "/v1"``)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ReplayServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    async def _start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def script(self, api: str, match: str, turns: list[Turn], **options: Any) -> Script:
        """Add the scripted model of the conversations whose task prompt contains ``match``."""
        script = Script(api, match, list(turns), **options)
        self.scripts.append(script)
        return script

    def clear(self) -> None:
        self.scripts.clear()
        self.problems.clear()
        self._conversations.clear()

    # ----------------------------------------------------------------- routing

    def _find(self, api: str, prompt: str) -> Script | None:
        return next((s for s in self.scripts if s.api == api and s.match in prompt), None)

    async def _reply(
        self,
        api: str,
        script: Script | None,
        body: dict[str, Any],
        turn: int,
        problems: list[str],
        frame: tuple[int, int] | None,
    ) -> tuple[web.Response, dict[str, Any] | None]:
        if script is None:
            problems = problems or ["no script matches this conversation's prompt"]
        if problems:
            self.problems.extend(problems)
            return web.json_response(Fail(400, "; ".join(problems)).body(api), status=400), None
        assert script is not None
        script.calls += 1
        failure = script.fail_always or (
            script.fail_first[script.calls - 1] if script.calls <= len(script.fail_first) else None
        )
        if failure is not None:
            return web.json_response(failure.body(api), status=failure.status, headers=failure.headers), None
        request = Request(api, body, turn, frame)
        script.requests.append(request)
        if turn >= len(script.turns):
            message = f"the script for {script.match!r} has {len(script.turns)} turns, turn {turn} was asked"
            self.problems.append(message)
            return web.json_response(Fail(400, message).body(api), status=400), None
        step = script.turns[turn]
        reply = await asyncio.to_thread(step, request) if callable(step) else step
        if isinstance(reply, Fail):
            return web.json_response(reply.body(api), status=reply.status, headers=reply.headers), None
        return web.json_response(reply), reply

    async def _anthropic(self, http: web.Request) -> web.Response:
        body = await http.json()
        messages = body.get("messages") or []
        first = messages[0].get("content") if messages else None
        prompt = (
            " ".join(b.get("text", "") for b in first if isinstance(b, dict)) if isinstance(first, list) else str(first)
        )
        script = self._find("anthropic", prompt)
        problems = check_anthropic(body, http.headers, script.max_images if script else None)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        response, _ = await self._reply("anthropic", script, body, turn, problems, _newest_anthropic_frame(body))
        return response

    async def _responses(self, http: web.Request) -> web.Response:
        body = await http.json()
        previous = body.get("previous_response_id")
        conversation = self._conversations.get(previous) if previous else None
        if conversation is None:
            parts = [p for i in body.get("input") or [] if i.get("role") == "user" for p in i.get("content") or []]
            script = self._find("responses", " ".join(p.get("text", "") for p in parts))
        else:
            script = conversation["script"]
        problems = check_responses(body, http.headers, conversation)
        turn = conversation["turn"] if conversation else 0
        response, reply = await self._reply("responses", script, body, turn, problems, responses_frame(body))
        if reply is not None:
            calls = [i for i in reply["output"] if i["type"] == "computer_call"]
            self._conversations[reply["id"]] = {
                "script": script,
                "turn": turn + 1,
                "last_id": reply["id"],
                "pending": [c["call_id"] for c in calls],
                "checks": {c["call_id"]: c["pending_safety_checks"] for c in calls},
            }
        return response

    async def _chat(self, http: web.Request) -> web.Response:
        body = await http.json()
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        content = users[0].get("content") if users else ""
        prompt = (
            " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            if isinstance(content, list)
            else str(content)
        )
        script = self._find("chat", prompt)
        if script is None and (script := self._find("chat-tools", prompt)) is not None:
            problems = check_chat_tools(body, http.headers, script.tools)
        else:
            problems = check_chat(
                body, http.headers, script.frame if script else None, script.max_images if script else None
            )
        turn = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        frame = None
        if users and isinstance(users[-1].get("content"), list):
            urls = [p["image_url"]["url"] for p in users[-1]["content"] if p.get("type") == "image_url"]
            size = image_size(urls[-1]) if urls else None
            frame = size if isinstance(size, tuple) else None
        response, _ = await self._reply("chat", script, body, turn, problems, frame)
        return response


def _newest_anthropic_frame(body: dict[str, Any]) -> tuple[int, int] | None:
    frame = anthropic_frame(body)
    if frame is not None:
        return frame
    for message in reversed(body.get("messages") or []):
        for block in reversed(message.get("content") or []) if isinstance(message.get("content"), list) else []:
            blocks = block.get("content") if block.get("type") == "tool_result" else [block]
            for inner in blocks if isinstance(blocks, list) else []:
                if inner.get("type") == "image":
                    size = image_size(inner["source"]["data"])
                    return size if isinstance(size, tuple) else None
    return None
