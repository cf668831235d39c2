"""Write ``docs/options.md``: every registered gym's options, from its options model's fields
(:func:`hud_gym.core.gym_options.options_table`), so that an option is documented once, in its
``Field(description=...)``. ``tests/test_gym_options.py`` checks the page is up to date.

Usage: ``python scripts/options_doc.py`` (writes the page) or ``python scripts/options_doc.py --check``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hud_gym.core.gym_options import options_table
from hud_gym.gyms import BUILTIN_GYMS

PAGE = Path(__file__).resolve().parent.parent / "docs" / "options.md"

INTRO = """# Gym options

Each gym has one options model (a frozen pydantic model, `hud_gym.GymOptions`): the env's keywords,
its controller's options and what a controller server is sent are that model, declared once. Give
them as keywords or whole:

```python
import gymnasium, hud_gym

env = gymnasium.make("hud/Browser-v0", headless=True, reset_mode="fresh")
env = gymnasium.make("hud/Browser-v0", options=hud_gym.BrowserOptions(reset_mode="fresh"), jpeg_quality=90)
env.unwrapped.options.reset_mode  # 'fresh'
```

A misspelt keyword is an `UnknownEnvOptionError` naming the closest options; a bad value an
`InvalidOptionError` naming the option. Keywords override the fields of `options=`. A suite's own
options (MiniWoB++'s `reward_processor`, ...) are the suite's ([Adding a suite](adding-a-suite.md)); the env's
own arguments (`task`, `screen_size`, `controller`, ...) are `HudEnv`'s.

A new gym declares its options the same way (the counter gym of [Adding a gym](adding-a-gym.md),
`tests/counter_gym.py`): a `GymOptions` subclass whose fields are typed, bounded and described,
named by the descriptor; the controller takes it as its second argument; the env class declares
no option of its own.

```python
class CounterOptions(hud_gym.GymOptions):
    step_size: int = Field(default=1, ge=1, description="How much a click adds.")

class CounterController(Controller):
    def __init__(self, screen_size=(64, 32), options: CounterOptions | None = None): ...

GYM = hud_gym.GymType(name="counter", ..., controller=CounterController, options=CounterOptions)
```

A controller server reads a client's options (`env.options.to_json()`) with the same model, then
its trust policy (`hud_gym.controllers.remote.trust`). This page is generated from the models
(`python scripts/options_doc.py`).
"""


def render() -> str:
    """The page."""
    parts = [INTRO]
    for gym in BUILTIN_GYMS:
        fields = gym.options.model_fields
        body = options_table(gym.options) if fields else "No options."
        parts.append(f"## `{gym.id}`: `{gym.options.__name__}`\n\n{body}\n")
    return "\n".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if PAGE.read_text() != text:
            print(f"{PAGE} is out of date: run python scripts/options_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
