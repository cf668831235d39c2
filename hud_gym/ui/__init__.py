"""``hud-gym ui``: a local, read-only web app over the job store (aiohttp, the ``ui`` extra).

Jobs (sortable, filterable, two compared per task), a job's tables and charts, a run's step
player with each action drawn on the frame the agent saw, a GRPO group side by side with its
advantages, and runs in progress, updated as other processes write the store. See
:mod:`hud_gym.ui.app` for what a client may and may not do.

Example:
    >>> from hud_gym.ui.server import serve_ui
    >>> serve_ui(Path("~/.local/share/hud-gym").expanduser(), port=8000)   # doctest: +SKIP
"""
