"""Setup functions of the QA gym (the shared response evaluators grade it)."""

from __future__ import annotations

from hud_gym.evaluation import FunctionContext, setup_function


@setup_function("qa")
def set_question(ctx: FunctionContext, question: str) -> None:
    """Show ``question`` instead of the task's prompt on the page."""
    ctx.controller.question = question


@setup_function("qa")
def show_passage(ctx: FunctionContext, passage: str) -> None:
    """Show a passage (context for the question) on the page and in the observation text."""
    ctx.controller.passage = passage


@setup_function("qa")
def prefill_answer(ctx: FunctionContext, text: str) -> None:
    """Start the answer box with ``text``."""
    ctx.controller.answer = text
