"""The gym types: ``hud/QA-v0``, ``hud/Browser-v0`` and ``hud/Ubuntu-v0``."""
