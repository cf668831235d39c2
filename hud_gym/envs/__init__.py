"""The env classes of hud-gym's gym types (``hud/QA-v0``, ``hud/Browser-v0``, ``hud/Ubuntu-v0``),
each module ending with its gym's :class:`~hud_gym.core.gym_type.GymType` descriptor, ``GYM``
(registered by :mod:`hud_gym.gyms`). Importing one does not import its controller."""
