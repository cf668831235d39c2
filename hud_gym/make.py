"""``hud_gym.make``: an environment for a task, a task reference or a gym name, as HUD's ``gym.make``."""

from __future__ import annotations

import os
from typing import Any

import gymnasium

from hud_gym.core.options import check_env_options
from hud_gym.gyms import GymType, get_gym
from hud_gym.task import Task
from hud_gym.tasksets import resolve_task

__all__ = ["make"]


def make(env_src: Task | dict[str, Any] | str, *, job: Any = None, **kwargs: Any) -> gymnasium.Env:
    """Make the environment for ``env_src``.

    ``env_src`` is a :class:`Task` (or task dict, or ``"<taskset>/<task id>"`` reference), whose
    ``gym`` picks the environment (a gym's name or alias: ``"qa"``, ``"hud-browser"``,
    ``"hud-ubuntu"``, ...; ``qa`` when unset, see :func:`hud_gym.gyms.get_gym`), or a gym name /
    Gymnasium id for an environment with no task yet. ``kwargs`` go to
    ``gymnasium.make``; ``max_episode_steps`` becomes the env's own ``max_steps``, so the final
    step is graded and the returned env is not wrapped. ``job`` (a :class:`hud_gym.jobs.Job` or
    job id) records every episode of the env in that job; by default the current job
    (``@register_job``), if any.

    Example:
        >>> env = make(Task(prompt="2+2?", target="4", gym="qa"))
    """
    if job is not None:
        kwargs["job"] = job
    if "max_episode_steps" in kwargs:
        kwargs["max_steps"] = kwargs.pop("max_episode_steps")
    if isinstance(env_src, str) and "/" not in env_src:
        return gymnasium.make(_checked(get_gym(env_src), kwargs), **kwargs)
    if isinstance(env_src, str) and env_src in gymnasium.registry:
        return gymnasium.make(env_src, **kwargs)
    task = resolve_task(env_src)
    gym = get_gym(task.gym)
    docker = (task.config or {}).get("docker")
    if isinstance(docker, dict) and kwargs.get("controller", "docker") == "docker":
        kwargs["controller"] = "docker"
        _use_image(gym.served_as, docker)
    return gymnasium.make(_checked(gym, kwargs), task=task, **kwargs)


def _use_image(gym: str, docker: dict[str, Any]) -> None:
    """Serve ``gym`` from a HUD CustomGym's image (``$HUD_GYM_<GYM>_IMAGE``, which the docker
    placement reads): one image per gym and process.

    Raises:
        ValueError: a build context without an image name, or another image for the same gym.
    """
    image = docker.get("image")
    if not image:
        context = docker.get("build_context")
        raise ValueError(
            f"a CustomGym build context ({context}) must be built first: `docker build -t NAME {context}`, "
            "then give the image name as image_or_build_context"
        )
    variable = f"HUD_GYM_{gym.upper()}_IMAGE"
    current = os.environ.get(variable)
    if current not in (None, image):
        raise ValueError(f"the {gym} gym already runs image {current!r} in this process ({variable}); got {image!r}")
    os.environ[variable] = image


def _checked(gym: GymType, kwargs: dict[str, Any]) -> str:
    """The gym's Gymnasium id, once ``kwargs`` are known options of its env class."""
    check_env_options(gym.env, kwargs, gym.id)
    return gym.id
