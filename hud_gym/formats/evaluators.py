"""The benchmarks' evaluators, now :mod:`hud_gym.evaluation.benchmarks` (registered with the
function registry whatever is imported); kept here so that old imports work."""

from hud_gym.evaluation.benchmarks import (
    gaia_match,
    gaia_score,
    normalize_gaia_number,
    normalize_gaia_text,
    ungraded,
    webvoyager_answer,
)

__all__ = ["gaia_match", "gaia_score", "normalize_gaia_number", "normalize_gaia_text", "ungraded", "webvoyager_answer"]
