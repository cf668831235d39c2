"""hud-gym envs spoken through the protocols other harnesses use.

- :mod:`hud_gym.protocols.session`: one served env, the typed report of its reset, step and grade
  (:class:`~hud_gym.protocols.session.StepReport`), and the task a client may pick; shared by
  every protocol.
- :mod:`hud_gym.protocols.mcp`: an env as an MCP server (stdio and streamable HTTP), with the
  official ``mcp`` SDK (the ``mcp`` extra).
- :mod:`hud_gym.protocols.openenv`: an env behind OpenEnv's server contract (reset / step / state
  over HTTP and WebSocket), with ``openenv-core``.
- :mod:`hud_gym.protocols.hud_control`: HUD 0.6's control channel (``hud-gym serve --protocol hud``),
  served without HUD's package.

Each protocol module imports its SDK lazily, so the core install needs neither.
"""
