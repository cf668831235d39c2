"""The gym types: ``hud/QA-v0`` now; ``hud/Browser-v0`` and ``hud/Ubuntu-v0`` follow."""
