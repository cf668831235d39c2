"""hud-gym envs behind OpenEnv's server contract (``openenv-core``): :mod:`.models` (the typed
Action, Observation and State), :mod:`.environment` (an env as an OpenEnv ``Environment``),
:mod:`.serve` (the server, ``hud-gym serve GYM --openenv``) and :mod:`.client` (a typed
``EnvClient``). ``openenv-core`` pins packages the main venv does not take: ``make install`` puts
it in the overlay venv ``.venv-openenv``. Import the submodules directly (each needs openenv).
"""
