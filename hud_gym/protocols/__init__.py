"""The wire protocols other harnesses speak, served from hud-gym envs without their packages.

- :mod:`hud_gym.protocols.hud_control`: HUD 0.6's control channel (``hud-gym serve --protocol hud``).
"""
