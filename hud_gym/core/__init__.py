"""The env core every gym type shares: :mod:`~hud_gym.core.env` (``HudEnv``, the sync facade),
:mod:`~hud_gym.core.episode` (the async episode logic the env owns, over :mod:`~hud_gym.core.episode_state` and :mod:`~hud_gym.core.episode_step`), :mod:`~hud_gym.core.gym_type` (the
``GymType`` descriptor and its registry), :mod:`~hud_gym.core.listeners` and
:mod:`~hud_gym.core.placement` (the hooks through which the layers above are reached),
:mod:`~hud_gym.core.loop`, :mod:`~hud_gym.core.observation`, :mod:`~hud_gym.core.scaling`,
:mod:`~hud_gym.core.step_status` (a step's statuses and what each does), :mod:`~hud_gym.core.timings`."""
