"""Functions registered in a module a controller server can import (``HUD_GYM_SERVER_IMPORTS``)."""

from hud_gym import evaluate_function
from hud_gym.evaluation import FunctionContext


@evaluate_function("qa", name="remote_test_answer_length")
def answer_length(ctx: FunctionContext, length: int) -> float:
    """1.0 when the final response has ``length`` characters."""
    return float(len(ctx.final_response or "") == length)


@evaluate_function("qa", name="remote_test_kill_server")
def kill_server(ctx: FunctionContext) -> float:
    """SIGKILLs the process running it (the controller server) before grading anything."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
    return 1.0
