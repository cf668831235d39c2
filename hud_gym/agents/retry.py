"""Retries with exponential backoff for model calls, shared by the provider agents.

Retried: HTTP 408, 409, 429 and every 5xx (Anthropic's 529 "overloaded" included), and
connection failures and timeouts. The wait doubles from ``initial_delay`` up to ``max_delay``
with +-``jitter``, and a ``Retry-After`` (or ``retry-after-ms``) header of the response wins
when it asks for longer. Anything else (400, 401, 403, 404, ...) fails at once. The SDKs' own
retries are turned off by the agents, so this is the one policy.

Example:
    >>> RetryPolicy(attempts=3, initial_delay=0.5).delay(2)
    1.0
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from hud_gym.agents.errors import ModelCallError

__all__ = ["RETRY_STATUSES", "RetryPolicy", "call_with_retries", "describe_failure"]

T = TypeVar("T")

RETRY_STATUSES: frozenset[int] = frozenset({408, 409, 429})
"""Statuses below 500 worth retrying (every 5xx is)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a model call is retried.

    Args:
        attempts: calls in all (1 = no retry).
        initial_delay: seconds before the first retry.
        max_delay: the longest wait between calls (a longer ``Retry-After`` is capped to it).
        jitter: the wait varies by up to this fraction either way.
    """

    attempts: int = 5
    initial_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be at least 1, got {self.attempts}")
        if self.initial_delay < 0 or self.max_delay < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("RetryPolicy delays must be >= 0 and jitter within [0, 1]")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based), without jitter."""
        wait = min(self.initial_delay * 2 ** (retry - 1), self.max_delay)
        if retry_after is not None:
            wait = min(max(wait, retry_after), self.max_delay)
        return wait


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _is_connection_error(exc: BaseException) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"APIConnectionError", "APITimeoutError"}) or isinstance(exc, (ConnectionError, TimeoutError))


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def provider_message(exc: BaseException) -> str:
    """The provider's own error text (``error.message`` of the body), else the exception's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
            return error["message"]
    cause = exc.__cause__ or exc.__context__
    text = str(getattr(exc, "message", None) or exc).strip() or type(exc).__name__
    if _is_connection_error(exc) and cause is not None and str(cause):
        text = f"{text.rstrip('.')}: {cause}"
    return " ".join(text.split())


def describe_failure(exc: BaseException, what: str, attempts: int) -> ModelCallError:
    """One :class:`ModelCallError` line for a failed call: status, the provider's message, tries."""
    status = _status(exc)
    message = provider_message(exc)
    tries = f" (after {attempts} attempts)" if attempts > 1 else ""
    if status is not None:
        line = f"{what} failed with HTTP {status}{tries}: {message}"
    elif _is_connection_error(exc):
        line = f"{what} failed, the server is unreachable{tries}: {message}"
    else:
        line = f"{what} failed{tries}: {type(exc).__name__}: {message}"
    return ModelCallError(line[:1000], status=status, provider_message=message, attempts=attempts)


def is_retryable(exc: BaseException) -> bool:
    """A rate limit, a server error, or a connection failure."""
    status = _status(exc)
    if status is not None:
        return status in RETRY_STATUSES or status >= 500
    return _is_connection_error(exc)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str,
    on_retry: Callable[[int, BaseException, float], Any] | None = None,
) -> tuple[T, int]:
    """Await ``call()`` until it succeeds, retrying per ``policy``; returns ``(result, attempts)``.

    Raises:
        ModelCallError: the last failure (or a non-retryable one), described in one line that
            names ``what``, the HTTP status and the provider's message.
    """
    for attempt in range(1, policy.attempts + 1):
        try:
            return await call(), attempt
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if attempt == policy.attempts or not is_retryable(exc):
                raise describe_failure(exc, what, attempt) from exc
            wait = policy.delay(attempt, _retry_after(exc))
            wait *= 1 + random.uniform(-policy.jitter, policy.jitter)
            if on_retry is not None:
                on_retry(attempt, exc, wait)
            await asyncio.sleep(wait)
    raise AssertionError("unreachable")
