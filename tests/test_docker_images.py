"""The controller images (docker/browser, docker/qa, docker/ubuntu) and their compose file.

No Docker engine runs in CI, so the images are not built here. What can be checked without one is:
the Dockerfiles (parsed), the install scripts they run (run here for real: the apt script with the
images' package lists, which must all be installed on this host, and the venv script into a
temporary virtualenv built from a copy of exactly the files the images copy), the entrypoint and
the health check (run here in front of a real controller server an env then uses), the
``.dockerignore`` files and the compose file.
"""

from __future__ import annotations

import fnmatch
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium
import pytest
import yaml

import hud_gym  # noqa: F401  (registers the ids)
from hud_gym import ResponseAction, Task
from hud_gym.controllers.remote.launch import docker_image
from hud_gym.controllers.remote.server import DEFAULT_PORT, READY_PREFIX, TOKEN_ENV_VAR

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[1]
DOCKER = ROOT / "docker"
GYMS = ("browser", "qa", "ubuntu")
INSTALL_PACKAGES = "/opt/hud-gym/docker/install-packages.sh"
INSTALL_PYTHON = "/opt/hud-gym/docker/install-python.sh"
VENV = "/opt/hud-gym/venv"
SOURCE = "/opt/hud-gym/src"
HEALTHCHECK = ["python", "/opt/hud-gym/docker/healthcheck.py", str(DEFAULT_PORT)]
COMPOSE_TOKEN_VAR = "HUD_GYM_TOKEN"


class Image:
    """What the Dockerfile of one gym must say."""

    def __init__(
        self,
        gym: str,
        base: str,
        packages: bool,
        image_only: set[str],
        extras: str = "",
        entrypoint: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.gym, self.base, self.packages, self.image_only, self.extras = gym, base, packages, image_only, extras
        self.entrypoint = entrypoint or ["/usr/bin/tini", "--", "/usr/local/bin/hud-gym-entrypoint"]
        self.env = env or {}


IMAGES = {
    "browser": Image(
        "browser",
        "debian:bookworm-slim",
        True,
        {"ca-certificates", "python3", "python3-venv", "tini"},
        env={"HUD_GYM_CHROMIUM": "/usr/bin/chromium"},
    ),
    "qa": Image("qa", "python:3.11-slim-bookworm", False, set(), entrypoint=["/usr/local/bin/hud-gym-entrypoint"]),
    "ubuntu": Image(
        "ubuntu",
        "debian:bookworm-slim",
        True,
        {"ca-certificates", "python3", "python3-venv", "python3-tk", "tini", "x11vnc", "novnc", "websockify"},
        extras="ubuntu",
        entrypoint=["/usr/bin/tini", "--", "/usr/local/bin/hud-gym-live-view", "/usr/local/bin/hud-gym-entrypoint"],
        env={"HUD_GYM_IN_CONTAINER": "1"},
    ),
}


# ------------------------------------------------------------------------------- parsing helpers


def instructions(gym: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of docker/GYM/Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (DOCKER / gym / "Dockerfile").read_text())
    result = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def arguments(gym: str, keyword: str) -> list[str]:
    return [args for kw, args in instructions(gym) if kw == keyword]


def exec_form(args: str) -> list[str]:
    """The JSON (exec) form of a CMD/ENTRYPOINT/HEALTHCHECK CMD; a shell form fails the test."""
    assert args.startswith("["), f"use the exec form (JSON array), not the shell form: {args}"
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value)
    return value


def env_of(gym: str) -> dict[str, str]:
    env = {}
    for args in arguments(gym, "ENV"):
        for word in args.split():
            key, _, value = word.partition("=")
            env[key] = value
    return env


def copies(gym: str) -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY, options such as --chmod dropped."""
    result = []
    for args in arguments(gym, "COPY"):
        words = [w for w in args.split() if not w.startswith("--")]
        result.append((words[:-1], words[-1]))
    return result


def package_list(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        names.extend(line.split("#", 1)[0].split())
    return names


def package_lists() -> dict[str, list[str]]:
    return {path.parent.name: package_list(path) for path in sorted(DOCKER.glob("*/packages.txt"))}


def dockerignore(gym: str) -> list[str]:
    lines = (DOCKER / gym / "Dockerfile.dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def _matches(pattern: str, path: str) -> bool:
    if pattern.startswith("**/"):
        return any(fnmatch.fnmatchcase(part, pattern[3:]) for part in path.split("/"))
    parts = path.split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[:i]), pattern) for i in range(1, len(parts) + 1))


def ignored(patterns: list[str], path: str) -> bool:
    """Whether Docker leaves ``path`` (relative to the context) out: the last matching pattern wins."""
    result = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        if _matches(pattern.lstrip("!"), path):
            result = not negated
    return result


def context_files(source: str) -> list[str]:
    path = ROOT / source
    if path.is_file():
        return [source]
    return [str(p.relative_to(ROOT)) for p in path.rglob("*") if p.is_file()]


def run(
    *command: str | Path, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env, timeout=timeout)


# ------------------------------------------------------------------------------- the Dockerfiles


@pytest.mark.parametrize("gym", GYMS)
def test_system_packages_go_through_the_shared_script_with_the_image_list(gym: str) -> None:
    image = IMAGES[gym]
    assert instructions(gym)[0] == ("FROM", image.base)
    runs = arguments(gym, "RUN")
    assert not any(re.search(r"\bapt(-get)?\s+install\b", r) for r in runs), "packages go through install-packages.sh"
    installs = [r for r in runs if INSTALL_PACKAGES in r]
    if not image.packages:
        assert not installs and not (DOCKER / gym / "packages.txt").exists()
        return
    assert len(installs) == 1, runs
    words = installs[0].split()
    assert words[words.index(INSTALL_PACKAGES) - 1] == "bash"
    listed = f"/opt/hud-gym/docker/{gym}/packages.txt"
    assert words[words.index("-r") + 1] == listed
    assert "HUD_GYM_APT_CLEAN=1" in words
    named = set(words[words.index(listed) + 1 :])
    assert named == image.image_only, "packages only the image needs; the rest belong in packages.txt"
    assert ([f"docker/{gym}/packages.txt"], f"/opt/hud-gym/docker/{gym}/") in copies(gym)
    assert (["docker/install-packages.sh"], "/opt/hud-gym/docker/") in copies(gym)


@pytest.mark.parametrize("gym", GYMS)
def test_hud_gym_is_installed_in_a_venv_by_the_shared_script(gym: str) -> None:
    image = IMAGES[gym]
    env = env_of(gym)
    assert env["VIRTUAL_ENV"] == VENV and env["PATH"].startswith(f"{VENV}/bin:")
    runs = arguments(gym, "RUN")
    installs = [r for r in runs if INSTALL_PYTHON in r]
    assert len(installs) == 1, runs
    words = installs[0].split()
    expected = ["bash", INSTALL_PYTHON, "--gym", gym, '"$VIRTUAL_ENV"', SOURCE] + (
        [image.extras] if image.extras else []
    )
    assert words[: len(expected)] == expected, words
    assert not any("pip install" in r for r in runs), "pip runs in install-python.sh only"
    assert (["docker/install-python.sh"], "/opt/hud-gym/docker/") in copies(gym)
    sources = {s for srcs, dest in copies(gym) if dest.startswith(SOURCE) for s in srcs}
    assert sources == {"pyproject.toml", "setup.py", "README.md", "hud_gym", "controllers", "wrappers"}


@pytest.mark.parametrize("gym", GYMS)
def test_the_image_serves_its_gym_as_an_unprivileged_user(gym: str) -> None:
    image = IMAGES[gym]
    assert exec_form(arguments(gym, "CMD")[-1]) == [
        "hud-gym",
        "serve",
        gym,
        "--host",
        "0.0.0.0",
        "--port",
        str(DEFAULT_PORT),
    ]
    entrypoint = exec_form(arguments(gym, "ENTRYPOINT")[-1])
    assert entrypoint == image.entrypoint
    # Executable by a RUN, not COPY --chmod, which the Docker SDK's classic builder may not know.
    assert not any(args.startswith("--chmod") for args in arguments(gym, "COPY"))
    for script in (p for p in entrypoint if p.startswith("/usr/local/bin/")):
        assert any(re.search(rf"\bchmod 0755 [^&]*{re.escape(script)}\b", r) for r in arguments(gym, "RUN")), script
    assert (["docker/entrypoint.sh"], "/usr/local/bin/hud-gym-entrypoint") in copies(gym)
    users = arguments(gym, "USER")
    assert users and users[-1] not in ("root", "0")
    assert any(f"useradd --create-home --shell /bin/bash {users[-1]}" in r for r in arguments(gym, "RUN"))
    assert str(DEFAULT_PORT) in " ".join(arguments(gym, "EXPOSE")).split()
    healthchecks = arguments(gym, "HEALTHCHECK")
    assert len(healthchecks) == 1
    options, _, command = healthchecks[0].partition("CMD ")
    assert exec_form(command.strip()) == HEALTHCHECK and "--interval=" in options
    assert (["docker/healthcheck.py"], "/opt/hud-gym/docker/") in copies(gym)
    env = env_of(gym)
    for key, value in image.env.items():
        assert env.get(key) == value


@pytest.mark.parametrize("gym", GYMS)
def test_no_token_is_baked_into_an_image(gym: str) -> None:
    for keyword, args in instructions(gym):
        if keyword in ("ENV", "ARG", "LABEL"):
            assert "TOKEN" not in args.upper(), (keyword, args)
        assert "--token" not in args, (keyword, args)


@pytest.mark.parametrize("gym", GYMS)
def test_the_dockerignore_sends_exactly_what_the_dockerfile_copies(gym: str) -> None:
    patterns = dockerignore(gym)
    assert patterns[0] == "*", "send nothing by default"
    sources = [s for srcs, _ in copies(gym) for s in srcs]
    for source in sources:
        assert (ROOT / source).exists(), source
        files = [f for f in context_files(source) if "__pycache__" not in f]
        assert files, source
        left_out = [f for f in files if ignored(patterns, f)]
        assert not left_out, f"{gym}: COPY {source} but the .dockerignore leaves out {left_out[:5]}"
    included = [p[1:] for p in patterns if p.startswith("!")]
    assert sorted(included) == sorted(set(sources)), "the .dockerignore sends something the image does not copy"
    for path in (
        ".venv/bin/python",
        "tests/conftest.py",
        ".git/HEAD",
        "hud_gym/__pycache__/env.cpython-311.pyc",
        "docker/compose.yaml",
    ):
        assert ignored(patterns, path), path


def test_the_root_dockerignore_sends_what_any_image_copies_and_nothing_else() -> None:
    """The Docker SDK's builder (``controller="docker"``) reads only the root ``.dockerignore``."""
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    assert patterns[0] == "*"
    sources = {s for gym in GYMS for srcs, _ in copies(gym) for s in srcs}
    for source in sources:
        left_out = [f for f in context_files(source) if "__pycache__" not in f and ignored(patterns, f)]
        assert not left_out, f"COPY {source} but the root .dockerignore leaves out {left_out[:5]}"
    assert sorted(p[1:] for p in patterns if p.startswith("!")) == sorted(sources)
    for path in (".venv/bin/python", "tests/conftest.py", ".git/HEAD", "benchmarks/run.py"):
        assert ignored(patterns, path), path


# ------------------------------------------------------------------------------- the package lists on this host


def test_every_listed_package_is_installed_here() -> None:
    """The host CI tests on has every image's packages: `make test` installed the same lists."""
    lists = package_lists()
    assert set(lists) == {"browser", "ubuntu"}
    assert {"xvfb", "openbox", "xterm", "xdotool", "xclip", "x11-utils"} <= set(lists["ubuntu"])
    assert {"chromium", "fonts-liberation", "fonts-noto-cjk"} <= set(lists["browser"])
    names = sorted({n for names in lists.values() for n in names})
    result = run("dpkg-query", "-W", "-f=${Package} ${Status}\n", *names)
    status = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    missing = [n for n in names if status.get(n) != "install ok installed"]
    assert not missing, f"not installed: {missing}; run `bash scripts/install-system.sh`"


def test_the_host_installs_the_union_of_the_image_lists_through_the_same_script() -> None:
    lists = package_lists()
    host = run("bash", ROOT / "scripts" / "install-system.sh", "--list").stdout.split()
    union = list(dict.fromkeys(lists["ubuntu"] + lists["browser"]))
    assert host[: len(union)] == union
    assert set(host) - set(union) == {"scrot"}, "host-only extras"
    for gym, names in lists.items():
        listed = run("bash", DOCKER / "install-packages.sh", "--list", "-r", DOCKER / gym / "packages.txt")
        assert listed.returncode == 0 and listed.stdout.split() == names
    assert run("bash", ROOT / "scripts" / "install-system.sh", "--check").returncode == 0
    stamp = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("$(STAMP):"))
    for prerequisite in [
        "scripts/install-system.sh",
        "docker/install-packages.sh",
        *(f"docker/{gym}/packages.txt" for gym in lists),
    ]:
        assert prerequisite in stamp.split(), prerequisite


def test_the_package_script_reports_bad_input_and_missing_packages() -> None:
    script = DOCKER / "install-packages.sh"
    result = run("bash", script, "--frobnicate")
    assert result.returncode == 2 and "unknown option --frobnicate" in result.stderr
    result = run("bash", script, "--list", "-r", "/nonexistent/packages.txt")
    assert result.returncode == 2 and "/nonexistent/packages.txt" in result.stderr
    result = run("bash", script, "--check", "-r", DOCKER / "browser" / "packages.txt", "hud-gym-no-such-package")
    assert result.returncode == 1 and "missing system packages: hud-gym-no-such-package" in result.stderr
    result = run("bash", script, "--list", "xterm", "-r", DOCKER / "ubuntu" / "packages.txt", "xterm")
    assert result.stdout.split().count("xterm") == 1 and result.stdout.split()[0] == "xterm"


# ------------------------------------------------------------------------------- the venv script


def build_context_source(gym: str, destination: Path) -> None:
    """Copy what docker/GYM/Dockerfile copies into /opt/hud-gym/src, as the build would."""
    patterns = dockerignore(gym)
    for sources, dest in copies(gym):
        if not dest.startswith(SOURCE):
            continue
        target = destination / dest[len(SOURCE) :].strip("/")
        for source in sources:
            for file in context_files(source):
                if ignored(patterns, file):
                    continue
                if (ROOT / source).is_dir():
                    out = target / Path(file).relative_to(source)
                else:
                    out = target / Path(file).name if dest.endswith("/") else target
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / file, out)


@pytest.mark.timeout(180)
def test_the_venv_script_installs_hud_gym_from_the_image_sources(tmp_path: Path) -> None:
    """Runs install-python.sh as the ubuntu image does (its gym, its extras) on a copy of the files
    the image copies. Offline and fast: pip installs hud-gym itself (built from that copy, with the
    test venv's setuptools) but not its dependencies, which the new venv finds on PYTHONPATH."""
    setuptools = tuple(int(part) for part in importlib.metadata.version("setuptools").split(".")[:2])
    assert setuptools >= (70, 1) or importlib.util.find_spec("wheel"), (
        "building hud-gym offline needs setuptools >= 70.1 (or the wheel package) in the test venv"
    )
    source = tmp_path / "src"
    build_context_source("ubuntu", source)
    assert (source / "controllers" / "remote" / "server.py").is_file() and not list(source.rglob("__pycache__"))
    venv = tmp_path / "venv"
    run_line = next(r for r in arguments("ubuntu", "RUN") if INSTALL_PYTHON in r).split("&&")[0].split()
    command = [
        str(DOCKER / "install-python.sh")
        if w == INSTALL_PYTHON
        else str(venv)
        if w == '"$VIRTUAL_ENV"'
        else str(source)
        if w == SOURCE
        else w
        for w in run_line
    ]
    dependencies = sysconfig.get_paths()["purelib"]
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "PYTHONPATH": dependencies,
        "PIP_NO_DEPS": "1",
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
    }  # pip's inverted boolean: "0" turns build isolation off
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=170, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"installed in {venv} (serves 'ubuntu')" in result.stdout
    assert (venv / "bin" / "hud-gym").is_file()
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import hud_gym; print(hud_gym.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where


def test_the_venv_script_reports_bad_arguments(tmp_path: Path) -> None:
    script = DOCKER / "install-python.sh"
    result = run("bash", script, tmp_path / "venv")
    assert result.returncode == 2 and "VENV SOURCE" in result.stderr
    result = run("bash", script, tmp_path / "venv", tmp_path / "no-source")
    assert result.returncode == 2 and "no hud-gym source" in result.stderr
    result = run("bash", script, tmp_path / "venv", ROOT, "ubuntu;rm")
    assert result.returncode == 2 and "bad EXTRAS" in result.stderr
    assert not (tmp_path / "venv").exists()


# ------------------------------------------------------------------------------- entrypoint and health check


def test_the_entrypoints_run_the_command() -> None:
    env = {"PATH": "/usr/bin:/bin", "HUD_GYM_LIVE_VIEW": "0"}
    result = run("bash", DOCKER / "entrypoint.sh", "echo", "entrypoint-ok", env=env, timeout=10)
    assert result.returncode == 0 and result.stdout.strip() == "entrypoint-ok"
    chained = run(
        "bash",
        DOCKER / "ubuntu" / "live-view.sh",
        "bash",
        DOCKER / "entrypoint.sh",
        "echo",
        "chain-ok",
        env=env,
        timeout=10,
    )
    assert chained.returncode == 0 and chained.stdout.strip() == "chain-ok"
    assert run("bash", DOCKER / "entrypoint.sh", env=env, timeout=10).returncode == 64


@pytest.mark.parametrize(
    "command",
    [
        ["hud-gym", "serve", "qa", "--host", "0.0.0.0", "--port", "0"],
        [sys.executable, "-m", "hud_gym.controllers.remote.server", "qa", "--host", "127.0.0.1", "--port", "0"],
    ],
)
def test_the_entrypoint_refuses_a_server_without_a_token(command: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV_VAR}
    result = run("bash", DOCKER / "entrypoint.sh", *command, env=env, timeout=20)
    assert result.returncode == 64 and TOKEN_ENV_VAR in result.stderr and "HUD_GYM_TOKEN" in result.stderr
    assert READY_PREFIX not in result.stdout


class Server:
    """docker/entrypoint.sh running a controller server, as a container would, on a free loopback port."""

    def __init__(self, command: list[str], token: str) -> None:
        env = {**os.environ, TOKEN_ENV_VAR: token}
        self.process = subprocess.Popen(
            ["bash", str(DOCKER / "entrypoint.sh"), *command],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.url = ""
        ready = threading.Event()

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                if line.startswith(READY_PREFIX):
                    self.url = line[len(READY_PREFIX) :].strip()
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(45) or not self.url:
            self.stop()
            raise AssertionError(
                f"the server did not start: {self.process.stderr.read() if self.process.stderr else ''}"
            )

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self) -> int:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            return self.process.wait(10)


def cli_serves() -> bool:
    """Whether the `hud-gym` command has the `serve` subcommand (the images' CMD)."""
    cli = Path(sys.executable).parent / "hud-gym"
    return cli.is_file() and run(cli, "serve", "--help", timeout=30).returncode == 0


@pytest.fixture
def qa_server() -> Iterator[Server]:
    """The qa image's CMD through its entrypoint, on loopback and a free port instead of 0.0.0.0:8765.
    Until `hud-gym serve` exists it runs the module that command runs."""
    command = exec_form(arguments("qa", "CMD")[-1])
    command[command.index("--host") + 1] = "127.0.0.1"
    command[command.index("--port") + 1] = "0"
    if cli_serves():
        command[0] = str(Path(sys.executable).parent / "hud-gym")
    else:
        command = [sys.executable, "-m", "hud_gym.controllers.remote.server", *command[2:]]
    server = Server(command, token="docker-images-test-token")
    yield server
    server.stop()


@pytest.mark.timeout(90)
def test_the_health_check_and_an_env_reach_the_server_the_entrypoint_starts(qa_server: Server) -> None:
    healthcheck = [sys.executable, str(DOCKER / "healthcheck.py"), str(qa_server.port)]
    assert run(*healthcheck, timeout=20).returncode == 0
    task = Task(
        prompt="What is the capital of France?",
        setup=[("show_passage", "Paris is the capital.")],
        evaluate=("response_includes", "Paris"),
        gym="qa",
    )
    env = gymnasium.make("hud/QA-v0", task=task, controller=qa_server.url, controller_token="docker-images-test-token")
    try:
        obs, info = env.reset(seed=0)
        assert info["status"] == "ok" and obs["screenshot"].any()
        obs, reward, terminated, _, info = env.step(ResponseAction(text="Paris"))
        assert info["status"] == "ok" and terminated and reward == 1.0
    finally:
        env.close()
    assert qa_server.stop() == 0, "the server exits cleanly on SIGTERM (docker stop)"
    result = run(*healthcheck, timeout=20)
    assert result.returncode == 1 and f"port {qa_server.port}" in result.stderr
    assert run(sys.executable, DOCKER / "healthcheck.py", "not-a-port", timeout=20).returncode == 2


# ------------------------------------------------------------------------------- compose


_VARIABLE = re.compile(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?error}``, ``${VAR?error}``."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        name, operator, argument = match.group(1), match.group(2) or "", match.group(3) or ""
        current = env.get(name)
        missing = current is None or (operator.startswith(":") and current == "")
        if operator.endswith("?") and missing:
            raise ValueError(f"required variable {name} is missing a value: {argument}")
        if operator.endswith("-") and missing:
            return argument
        return current or ""

    return _VARIABLE.sub(substitute, value)


def compose(env: dict[str, str]) -> dict[str, Any]:
    document = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    return {k: v for k, v in interpolate(document, env).items() if not k.startswith("x-")}


def host_ports(mapping: str) -> tuple[str, range, int]:
    """``127.0.0.1:8765-8772:8765`` -> ("127.0.0.1", range(8765, 8773), 8765)."""
    address, ports, container = mapping.rsplit(":", 2)
    first, _, last = ports.partition("-")
    return address, range(int(first), int(last or first) + 1), int(container)


def test_compose_requires_the_token() -> None:
    with pytest.raises(ValueError, match=COMPOSE_TOKEN_VAR):
        compose({})
    with pytest.raises(ValueError, match=COMPOSE_TOKEN_VAR):
        compose({COMPOSE_TOKEN_VAR: ""})
    assert "TOKEN" not in re.sub(r"\$\{[^}]*\}|#.*", "", (DOCKER / "compose.yaml").read_text()).replace(
        f"{TOKEN_ENV_VAR}:", ""
    ), "no literal token in the compose file"


def test_compose_starts_n_browsers_a_qa_and_a_desktop_on_loopback() -> None:
    config = compose({COMPOSE_TOKEN_VAR: "compose-token"})
    services = config["services"]
    assert set(services) == set(GYMS)
    used: set[int] = set()
    for gym, service in services.items():
        assert service["image"] == docker_image(gym), "controller='docker' finds the image compose built"
        assert (DOCKER / service["build"]["context"]).resolve() == ROOT
        assert service["build"]["dockerfile"] == f"docker/{gym}/Dockerfile"
        assert service["environment"][TOKEN_ENV_VAR] == "compose-token"
        assert service["restart"] == "unless-stopped"
        assert service["healthcheck"]["test"] == ["CMD", *HEALTHCHECK]
        ports = [host_ports(p) for p in service["ports"]]
        assert any(container == DEFAULT_PORT for _, _, container in ports)
        for address, hosts, _ in ports:
            assert address == "127.0.0.1", f"{gym}: publish on loopback only"
            assert not used & set(hosts), f"{gym}: host ports overlap another service's"
            used |= set(hosts)
    browser = services["browser"]
    assert int(browser["deploy"]["replicas"]) == 4
    replicas = host_ports(browser["ports"][0])[1]
    assert len(replicas) >= 4 and replicas.start == DEFAULT_PORT
    assert browser["shm_size"] == "1gb"
    assert services["qa"]["init"] is True, "the qa image has no tini"
    many = compose({COMPOSE_TOKEN_VAR: "t", "HUD_GYM_BROWSERS": "12", "HUD_GYM_BROWSER_PORTS": "9000-9011"})
    assert int(many["services"]["browser"]["deploy"]["replicas"]) == 12
    assert len(host_ports(many["services"]["browser"]["ports"][0])[1]) == 12


@pytest.mark.skipif(
    run("docker", "compose", "version").returncode != 0 if shutil.which("docker") else True,
    reason="the docker compose plugin is not installed (the YAML is checked by the tests above)",
)
def test_docker_compose_accepts_the_file() -> None:
    env = {**os.environ, COMPOSE_TOKEN_VAR: "t"}
    result = run("docker", "compose", "-f", DOCKER / "compose.yaml", "config", "--quiet", env=env)
    assert result.returncode == 0, result.stderr
    env.pop(COMPOSE_TOKEN_VAR)
    result = run("docker", "compose", "-f", DOCKER / "compose.yaml", "config", "--quiet", env=env)
    assert result.returncode != 0 and COMPOSE_TOKEN_VAR in result.stderr
