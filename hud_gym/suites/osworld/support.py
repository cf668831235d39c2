"""What of OSWorld's task format runs here: every ``config`` / ``postconfig`` step type, getter
and metric function the task files use, supported or not and why (the table of
``docs/osworld.md``), and :func:`why_not`: the reasons one example cannot run here.

Example:
    >>> why_not({"config": [{"type": "googledrive", "parameters": {}}],
    ...          "evaluator": {"func": "exact_match", "result": {"type": "rule"}}})
    ['config step googledrive: needs a Google account and the network']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hud_gym.suites.osworld import metrics_apps, metrics_office, metrics_slides, metrics_text

__all__ = ["GETTERS", "METRICS", "SETUP_STEPS", "UNSUPPORTED_GETTERS", "UNSUPPORTED_STEPS", "why_not"]

SETUP_STEPS = frozenset(
    {"download", "launch", "open", "execute", "command", "sleep", "activate_window", "close_window"}
)
"""The step types supported (in ``config`` and in the evaluator's ``postconfig``)."""

UNSUPPORTED_STEPS: Mapping[str, str] = {
    "googledrive": "needs a Google account and the network",
    "login": "needs an account login and the network",
    "chrome_open_tabs": "Chromium's tabs over CDP are not wired to the suite yet",
    "chrome_close_tabs": "Chromium's tabs over CDP are not wired to the suite yet",
    "update_browse_history": "writes Chromium's history database: not yet",
    "upload_file": "a VM file upload: not used by the supported domains",
    "tidy_desktop": "not yet",
}
"""Step types the task files use that do not run here, with why."""

GETTERS = frozenset({"vm_file", "cloud_file", "cache_file", "rule", "vm_command_line", "gimp_config_file"})
"""The getters supported (``result`` / ``expected`` types)."""

UNSUPPORTED_GETTERS: Mapping[str, str] = {
    "accessibility_tree": "the desktop has no AT-SPI accessibility tree exported yet",
    "vm_terminal_output": "reads OSWorld's VM terminal server: not yet",
    "vlc_config": "not yet",
    "vlc_playing_info": "VLC's HTTP interface: not yet",
    "googledrive_file": "needs a Google account and the network",
    "list_directory": "not yet",
}
"""Getters that do not run here, with why (any other is Chromium's CDP or an app-specific one: not yet)."""

Metric = Callable[..., float]

METRICS: Mapping[str, Metric] = {
    "exact_match": metrics_text.exact_match,
    "is_in_list": metrics_text.is_in_list,
    "check_include_exclude": metrics_text.check_include_exclude,
    "literal_match": metrics_text.literal_match,
    "check_direct_json_object": metrics_text.check_direct_json_object,
    "diff_text_file": metrics_text.diff_text_file,
    "compare_csv": metrics_text.compare_csv,
    "check_csv": metrics_text.check_csv,
    "check_list": metrics_text.check_list,
    "check_image_size": metrics_text.check_image_size,
    "compare_table": metrics_office.compare_table,
    "compare_docx_files": metrics_office.compare_docx_files,
    "compare_pptx_files": metrics_slides.compare_pptx_files,
    "check_transition": metrics_apps.check_transition,
    "check_config_status": metrics_apps.check_config_status,
}
"""The metric functions supported, by OSWorld's name (``infeasible`` is graded by the agent's answer)."""

_DOMAIN_REASONS: Mapping[str, str] = {
    "vs_code": "VS Code is not in Debian (not installed on the desktop)",
    "Windows": "Windows tasks need a Windows VM",
}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _uses_sudo(step: dict[str, Any]) -> bool:
    command = (step.get("parameters") or {}).get("command")
    words = command if isinstance(command, list) else str(command or "").split()
    return any(str(w) == "sudo" or str(w).endswith("/sudo") for w in words) or " sudo " in f" {command} "


def _step_reasons(steps: Any, where: str) -> list[str]:
    reasons = []
    for step in steps if isinstance(steps, list) else []:
        kind = step.get("type") if isinstance(step, dict) else None
        if kind in ("execute", "command") and _uses_sudo(step):
            reasons.append(f"{where} step {kind}: runs sudo (the sandbox's user has no root)")
        elif kind not in SETUP_STEPS:
            why = UNSUPPORTED_STEPS.get(str(kind), "not yet")
            reasons.append(f"{where} step {kind}: {why}")
    return reasons


def _getter_reasons(evaluator: Mapping[str, Any]) -> list[str]:
    reasons = []
    for key in ("result", "expected"):
        for getter in _as_list(evaluator.get(key)):
            kind = getter.get("type") if isinstance(getter, dict) else None
            if kind == "vm_command_line" and _uses_sudo({"parameters": getter}):
                reasons.append("getter vm_command_line: runs sudo (the sandbox's user has no root)")
            elif getter is not None and kind not in GETTERS:
                why = UNSUPPORTED_GETTERS.get(str(kind), "Chromium's CDP or app-specific getter: not yet")
                reasons.append(f"getter {kind}: {why}")
    return reasons


def _metric_reasons(evaluator: Mapping[str, Any]) -> list[str]:
    funcs = _as_list(evaluator.get("func"))
    options = evaluator.get("options")
    options_list = options if isinstance(options, list) else [options] * len(funcs)
    reasons = []
    for func, opts in zip(funcs, options_list, strict=False):
        if func == "infeasible":
            continue
        if func not in METRICS:
            reasons.append(f"metric {func}: not yet")
        elif func == "compare_table":
            kinds = {r.get("type") for r in (opts or {}).get("rules", []) if isinstance(r, dict)}
            for kind in sorted(str(k) for k in kinds - metrics_office.TABLE_RULES):
                reasons.append(f"compare_table rule {kind}: not yet")
    return reasons


def why_not(example: Mapping[str, Any], domain: str | None = None) -> list[str]:
    """The reasons ``example`` (an OSWorld task) cannot run here; ``[]``: it can."""
    if domain is not None and domain in _DOMAIN_REASONS:
        return [_DOMAIN_REASONS[domain]]
    evaluator = example.get("evaluator")
    if not isinstance(evaluator, dict):
        return ["the evaluator is not an object"]
    reasons = _step_reasons(example.get("config"), "config")
    reasons += _step_reasons(evaluator.get("postconfig"), "postconfig")
    reasons += _getter_reasons(evaluator)
    reasons += _metric_reasons(evaluator)
    return list(dict.fromkeys(reasons))
