"""One typed options object per gym (issue 24, point 3): declared once in its options model, read by
the env's keywords, the controller, ``controller_options()``, a controller server's JSON and the
docs (``docs/options.md``)."""

from __future__ import annotations

import inspect
import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import gymnasium
import pytest
from pydantic import ValidationError

import hud_gym
from hud_gym import BrowserOptions, GymOptions, InvalidOptionError, QAOptions, UbuntuOptions
from hud_gym.controllers.remote.protocol import ProtocolError
from hud_gym.controllers.remote.trust import HOST_OPTIONS, validate_options
from hud_gym.controllers.sandbox.limits import ResourceLimits
from hud_gym.core.env import HudEnv
from hud_gym.core.gym_options import LimitName
from hud_gym.core.options import UnknownEnvOptionError, env_option_names
from hud_gym.core.suite import Suite, register_suite
from hud_gym.core.suite_hooks import suite_option_names
from hud_gym.gyms import BUILTIN_GYMS, get_gym

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent

# Every field of every built-in gym's options, set to a value that is not its default.
NOT_DEFAULT: dict[str, GymOptions] = {
    "qa": QAOptions(),
    "browser": BrowserOptions(
        elements=True,
        headless=True,
        executable_path="/usr/bin/chromium",
        launch_args=("--mute-audio",),
        context_options={"locale": "fr-FR"},
        reset_mode="fresh",
        fresh_context_every=7,
        screenshot_format="png",
        jpeg_quality=42,
        navigation_timeout=3.5,
        max_elements=9,
        axtree=True,
        som=True,
        max_nodes=7,
        allow_file_urls=Path("/tmp"),
        capture="auto",
        warm_pages=0,
        limits={"memory_mb": 512, "cpu_seconds": None},
    ),
    "ubuntu": UbuntuOptions(
        allow_shell=True,
        allow_absolute_paths=True,
        window_manager=None,
        in_container=False,
        sandbox=True,
        allow_network=True,
        first_paint=0.1,
        quiet=0.01,
        settle_limit=2.0,
        kill_grace=0.25,
        launch_timeout=5.0,
        limits={"pids": 64},
    ),
}


def _own_parameters(cls: type[Any]) -> set[str]:
    """The named keyword parameters of ``cls.__init__`` (not ``*args`` / ``**kwargs``)."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    return {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"}


@pytest.mark.parametrize("gym", BUILTIN_GYMS, ids=lambda gym: gym.name)
def test_each_option_is_declared_once(gym: hud_gym.GymType) -> None:
    fields = set(gym.options.model_fields)
    # The env takes exactly HudEnv's own arguments, the gym's options and its suites' options ...
    assert env_option_names(gym.env) == _own_parameters(HudEnv) | fields | suite_option_names(gym.name)
    # ... and names none of them itself; nor does its controller, which takes the options object.
    assert gym.env is HudEnv or "__init__" not in vars(gym.env) or _own_parameters(gym.env) == set()
    controller = gym.controller_factory()
    assert list(inspect.signature(controller.__init__).parameters) == ["self", "screen_size", "options"]
    assert not fields & _own_parameters(HudEnv) and not fields & suite_option_names(gym.name)
    # Each field is documented once, in its Field(description=...).
    assert all(field.description for field in gym.options.model_fields.values()), gym.options


def test_the_shared_names_match_what_they_name() -> None:
    assert set(get_args(LimitName)) == set(ResourceLimits.model_fields)
    every_field = {name for gym in BUILTIN_GYMS for name in gym.options.model_fields}
    assert set(HOST_OPTIONS) <= every_field  # the trust policy names real options
    assert set(NOT_DEFAULT) == {gym.name for gym in BUILTIN_GYMS}
    for name, options in NOT_DEFAULT.items():
        model = get_gym(name).options
        assert isinstance(options, model)
        different = {f for f in model.model_fields if getattr(options, f) != model.model_fields[f].get_default()}
        assert different == set(model.model_fields) - {"headless"}, name  # headless=False needs capture != headed


@pytest.mark.parametrize("gym", sorted(NOT_DEFAULT))
def test_the_options_round_trip_through_the_server_json(gym: str) -> None:
    options = NOT_DEFAULT[gym]
    wire = json.loads(json.dumps(options.to_json()))  # what the client sends
    assert validate_options(gym, wire, trusted=True) == options  # what the server builds its controller with
    assert type(options).model_validate(wire) == options


@pytest.mark.parametrize("gym", ["browser", "ubuntu"])
def test_the_env_sends_its_options_as_json(gym: str) -> None:
    options = NOT_DEFAULT[gym].model_copy(update={"allow_file_urls": None} if gym == "browser" else {})
    env = gymnasium.make(get_gym(gym).id, options=options)
    try:
        assert env.unwrapped.options == options
        sent = env.unwrapped.controller_options()
        assert json.loads(json.dumps(sent)) == sent and validate_options(gym, sent, trusted=True) == options
    finally:
        env.close()


def test_keywords_build_the_options_and_override_options() -> None:
    env = gymnasium.make("hud/Browser-v0", headless=True, reset_mode="fresh", jpeg_quality=70)
    try:
        assert env.unwrapped.options == BrowserOptions(reset_mode="fresh", jpeg_quality=70)
    finally:
        env.close()
    base = BrowserOptions(elements=True, jpeg_quality=50)
    env = gymnasium.make("hud/Browser-v0", options=base, jpeg_quality=90, reward_processor="binary")
    try:
        assert env.unwrapped.options == BrowserOptions(elements=True, jpeg_quality=90)
        assert env.unwrapped.suites["miniwob"].options["reward_processor"] == "binary"  # the suite's, not the gym's
        copy = pickle.loads(pickle.dumps(env.unwrapped))
        try:
            assert copy.options == env.unwrapped.options
        finally:
            copy.close()
    finally:
        env.close()
    with pytest.raises(TypeError, match=r"hud/Browser-v0 takes options=BrowserOptions\(...\), got UbuntuOptions"):
        gymnasium.make("hud/Browser-v0", options=UbuntuOptions())


def test_the_options_are_frozen() -> None:
    options = BrowserOptions()
    with pytest.raises(ValidationError, match="frozen"):
        options.headless = False  # type: ignore[misc]


@pytest.mark.parametrize(
    ("gym_id", "option", "value", "message"),
    [
        ("hud/Browser-v0", "jpeg_quality", 0, "greater than or equal to 1"),
        ("hud/Browser-v0", "reset_mode", "warm", "'clear' or 'fresh'"),
        ("hud/Browser-v0", "navigation_timeout", -1, "greater than 0"),
        ("hud/Browser-v0", "warm_pages", True, "valid integer"),
        ("hud/Browser-v0", "launch_args", "--x", "valid tuple"),
        ("hud/Ubuntu-v0", "first_paint", -0.5, "greater than or equal to 0"),
        ("hud/Ubuntu-v0", "window_manager", "twm", "'openbox'"),
        ("hud/Ubuntu-v0", "allow_shell", "maybe", "valid boolean"),
    ],
)
def test_a_bad_value_is_one_error_naming_the_option(gym_id: str, option: str, value: Any, message: str) -> None:
    with pytest.raises(InvalidOptionError, match=rf"^{gym_id} option '{option}': .*{message}.*\(got {value!r}\)$"):
        gymnasium.make(gym_id, **{option: value})
    gym = get_gym(gym_id).name
    with pytest.raises(ProtocolError, match=rf"option '{option}': .*{message}.*known options: "):
        validate_options(gym, {option: value}, trusted=True)


def test_a_bad_limit_is_named() -> None:
    with pytest.raises(InvalidOptionError, match=r"option 'limits\.memroy_mb.*'memory_mb', 'pids'"):
        gymnasium.make("hud/Browser-v0", limits={"memroy_mb": 256})
    with pytest.raises(ValueError, match="pids"):  # a value past its bound: the controller's check, at make time
        gymnasium.make("hud/Browser-v0", limits={"pids": 2})


def test_headed_capture_needs_headless() -> None:
    with pytest.raises(InvalidOptionError, match=r"option 'capture': 'headed' .* needs headless=True"):
        BrowserOptions.build({"capture": "headed", "headless": False}, "hud/Browser-v0")


def test_an_unknown_keyword_names_the_close_options() -> None:
    with pytest.raises(
        UnknownEnvOptionError, match=r"hud/Browser-v0 has no option 'headles' \(did you mean 'headless'"
    ):
        gymnasium.make("hud/Browser-v0", headles=True)
    with pytest.raises(UnknownEnvOptionError, match=r"hud/Ubuntu-v0 has no option 'allow_shel' \(did you mean"):
        gymnasium.make("hud/Ubuntu-v0", allow_shel=True)
    with pytest.raises(UnknownEnvOptionError, match="hud/QA-v0 has no option 'headless'"):
        gymnasium.make("hud/QA-v0", headless=True)
    with pytest.raises(ProtocolError, match="option 'headles': Extra inputs are not permitted"):
        validate_options("browser", {"headles": True}, trusted=True)


def test_a_suite_cannot_take_a_name_of_the_gyms_options() -> None:
    with pytest.raises(ValueError, match="suite 'shadow': headless already name options of gym 'browser'"):
        register_suite(Suite(name="shadow", gym="browser", options={"headless": False}))


def test_the_options_page_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "options_doc.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    page = (ROOT / "docs" / "options.md").read_text()
    for gym in BUILTIN_GYMS:
        for name, field in gym.options.model_fields.items():
            assert f"| `{name}` |" in page and " ".join((field.description or "").split())[:40] in page


@pytest.mark.e2e
def test_a_subprocess_browser_gets_the_options() -> None:
    env = gymnasium.make(
        "hud/Browser-v0", screen_size=(320, 240), controller="subprocess", elements=True, max_elements=1
    )
    try:
        env.reset(seed=0)
        page = "data:text/html,<button>a</button><button>b</button><button>c</button>"
        _, _, _, _, info = env.step(hud_gym.CustomAction(action="goto", args={"url": page}))
        assert info["status"] == "ok", info
        assert len(info["elements"]) == 1  # elements=True and max_elements=1 reached the server's controller
    finally:
        env.close()


def test_a_clients_bad_option_is_named_in_a_bounded_message() -> None:
    # A controller server's client chooses the names and values it sends: the message that names
    # them is bounded (before: the whole name, as long as the request).
    for options in ({"A" * 100_000: 1}, {"limits": {"B" * 100_000: 1}}, {"executable_path": "x" * 100_000}):
        with pytest.raises(ProtocolError) as caught:
            validate_options("browser", options, trusted=False)
        assert len(str(caught.value)) < 1000 and "option " in str(caught.value)
