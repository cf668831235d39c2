"""The Docker engine side of ``controller="docker"``: the gym's image, its container, its ready line.

The image of a gym's controller server is ``hud-gym-GYM`` (or ``$HUD_GYM_<GYM>_IMAGE``), built
from ``docker/GYM/Dockerfile`` when it is missing and this is a source checkout, else pulled. The
container runs the server on :data:`CONTAINER_PORT`, published on a random loopback port, with the
token in its environment. Every call here blocks (Docker SDK calls): the launcher
(:class:`~hud_gym.controllers.remote.launch.DockerLauncher`) runs them in threads. With no
reachable engine they fail with a :class:`~hud_gym.controllers.base.ControllerError` that says so
and how to fix it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from hud_gym.controllers.base import ControllerError
from hud_gym.controllers.remote.server import READY_PREFIX, SERVER_MODULE, TOKEN_ENV_VAR

__all__ = [
    "CONTAINER_PORT",
    "NO_ENGINE",
    "docker_client",
    "docker_image",
    "ensure_image",
    "remove_container",
    "run_container",
    "wait_ready",
]

CONTAINER_PORT = 8765
"""The port the server listens on inside its container."""
STOP_TIMEOUT = 20.0

NO_ENGINE = (
    "controller='docker': no Docker engine is reachable ({error}). Start Docker (or set DOCKER_HOST to a "
    "reachable engine and check that this user may use it), or run the controller server as a local process "
    "with controller='subprocess'."
)


def docker_image(gym: str) -> str:
    """The image of ``gym``'s controller server: ``$HUD_GYM_<GYM>_IMAGE`` or ``hud-gym-<gym>``."""
    return os.environ.get(f"HUD_GYM_{gym.upper()}_IMAGE", f"hud-gym-{gym}")


def _source_root() -> Path | None:
    """The repository root when running from a source checkout (it holds ``docker/``)."""
    import hud_gym

    root = Path(hud_gym.__file__).resolve().parent.parent
    return root if (root / "docker").is_dir() else None


def docker_client() -> Any:
    """A Docker SDK client for the engine in the environment (``DOCKER_HOST`` or the local socket).

    Raises:
        ControllerError: the SDK is missing or no engine answers.
    """
    try:
        from docker.errors import DockerException

        import docker
    except ImportError:
        raise ControllerError("controller='docker' needs the Docker SDK: pip install 'hud-gym[docker]'") from None
    try:
        client = docker.from_env(timeout=10)
        client.ping()
    except DockerException as exc:
        raise ControllerError(NO_ENGINE.format(error=exc)) from None
    except Exception as exc:  # noqa: BLE001  (requests/urllib3 errors from a half-configured DOCKER_HOST)
        raise ControllerError(NO_ENGINE.format(error=f"{type(exc).__name__}: {exc}")) from None
    return client


def ensure_image(client: Any, gym: str) -> str:
    from docker.errors import DockerException, ImageNotFound

    image = docker_image(gym)
    try:
        client.images.get(image)
        return image
    except ImageNotFound:
        pass
    root = _source_root()
    dockerfile = f"docker/{gym}/Dockerfile"
    try:
        if root is not None and (root / dockerfile).is_file():
            client.images.build(path=str(root), dockerfile=dockerfile, tag=image, rm=True)
        else:
            client.images.pull(image)
    except DockerException as exc:
        raise ControllerError(
            f"controller='docker': the image {image!r} is not there and could not be built or pulled: {exc}. "
            f"Build it with `docker build -f {dockerfile} -t {image} .` from the repository root, or set "
            f"HUD_GYM_{gym.upper()}_IMAGE to an image that has hud-gym installed."
        ) from None
    return image


def run_container(gym: str, token: str) -> Any:
    """Start the server's container (blocking; Docker SDK calls)."""
    client = docker_client()
    image = ensure_image(client, gym)
    return client.containers.run(
        image,
        command=[
            "python",
            "-m",
            SERVER_MODULE,
            gym,
            "--host",
            "0.0.0.0",
            "--port",
            str(CONTAINER_PORT),
            "--trust-client-options",
        ],
        environment={TOKEN_ENV_VAR: token},
        ports={f"{CONTAINER_PORT}/tcp": ("127.0.0.1", None)},
        detach=True,
        auto_remove=True,
        shm_size="1g",
        labels={"hud-gym.controller": gym},
    )


def wait_ready(container: Any) -> str:
    """Follow the container's output until the server's ready line; return its loopback URL.

    Raises:
        ControllerError: the container exited first (the message ends with its output).
    """
    seen: list[str] = []
    for chunk in container.logs(stream=True, follow=True):
        text = chunk.decode(errors="replace")
        seen.extend(text.splitlines())
        if READY_PREFIX in text:
            container.reload()
            port = container.attrs["NetworkSettings"]["Ports"][f"{CONTAINER_PORT}/tcp"][0]["HostPort"]
            return f"ws://127.0.0.1:{port}"
    tail = "\n".join(seen[-20:]) or "(no output)"
    raise ControllerError(f"the controller container {container.short_id} exited before it was ready:\n{tail}")


def remove_container(container: Any, timeout: float = STOP_TIMEOUT) -> None:
    with contextlib.suppress(Exception):
        container.stop(timeout=int(timeout))
    with contextlib.suppress(Exception):
        container.remove(force=True)
