"""HUD's ``hud.adapters.common``: the adapter base and the CLA types (:mod:`.types`)."""

from hud_gym.adapters import Adapter

__all__ = ["Adapter"]
