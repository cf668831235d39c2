"""Every CLA action through real X input, checked by what a real X application (the event-log Tk
window, xterm) received; with the controller in this process and in a controller server, except
the tests that open their own X connection to the env's display (``local_only``)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from desktop_helpers import HOME_TASK, desktop_home, open_display
from Xlib import X

from hud_gym.actions import (
    ClickAction,
    CustomAction,
    DragAction,
    KeyDownAction,
    KeyUpAction,
    MoveAction,
    PositionFetch,
    PressAction,
    ScreenshotFetch,
    ScrollAction,
    TypeAction,
    WaitAction,
)
from hud_gym.controllers.ubuntu import PIXELS_PER_WHEEL_CLICK, wheel_clicks
from hud_gym.controllers.ubuntu.keysyms import KEYSYM_NAMES
from hud_gym.keys import KEYS

pytestmark = pytest.mark.timeout(60)

SHIFT, LOCK, CONTROL, MOD1 = 1, 2, 4, 8
LOCAL_ONLY_X = pytest.mark.local_only("opens its own X connection to the in-process controller's display")


@pytest.fixture(scope="module")
def desktop(controlled_desktop: Any) -> Any:
    """The module's desktop, with the controller where the ``controller`` parameter says."""
    return controlled_desktop


def ok(env: Any, action: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    obs, _, _, _, info = env.step(action)
    assert info["status"] == "ok", info
    return obs, info


def key_events(eventlog: Any, mark: int, count: int) -> list[dict[str, Any]]:
    """Wait for ``count`` key records after ``mark`` and return them all."""
    return eventlog.wait(
        lambda rs: len(k := [r for r in rs[mark:] if r["type"] == "key"]) >= count and k, what=f"{count} key events"
    )


def releases(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "button" and r["event"] == "release"]


def presses(records: list[dict[str, Any]], num: int | None = None) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "button" and r["event"] == "press" and (num is None or r["num"] == num)]


# ----------------------------------------------------------------------------- click


def test_click_buttons_at_the_point(desktop: Any, eventlog: Any) -> None:
    x, y = eventlog.point("pad", 30, 40)
    for button, number in (("left", 1), ("middle", 2), ("right", 3), ("back", 8), ("forward", 9)):
        mark = eventlog.mark()
        ok(desktop, ClickAction(point=(x, y), button=button))
        records = eventlog.wait(
            lambda rs, mark=mark: [r for r in rs[mark:] if r["type"] == "button" and r["event"] == "release"],
            what=f"{button} release",
        )
        pressed = presses(eventlog.since(mark))
        assert [r["num"] for r in pressed] == [number], (button, eventlog.since(mark))
        assert (pressed[0]["x_root"], pressed[0]["y_root"], pressed[0]["x"], pressed[0]["y"]) == (x, y, 30, 40)
        assert records[0]["num"] == number


def test_click_without_point_clicks_where_the_pointer_is(desktop: Any, eventlog: Any) -> None:
    x, y = eventlog.point("pad", 50, 60)
    ok(desktop, MoveAction(point=(x, y)))
    mark = eventlog.mark()
    ok(desktop, ClickAction())
    pressed = eventlog.wait(lambda rs: presses(rs[mark:]), what="a press")
    assert (pressed[0]["x_root"], pressed[0]["y_root"]) == (x, y)


def test_double_and_triple_click_patterns(desktop: Any, eventlog: Any) -> None:
    point = eventlog.point("pad", 100, 100)
    mark = eventlog.mark()
    ok(desktop, ClickAction(point=point, pattern=[100]))
    eventlog.wait(lambda rs: [r for r in rs[mark:] if r["type"] == "double"], what="a double click")
    eventlog.wait(lambda rs: len(releases(rs[mark:])) == 2, what="2 releases")
    assert len(presses(eventlog.since(mark), 1)) == 2
    ok(desktop, WaitAction(time=600))  # longer than the double-click time
    mark = eventlog.mark()
    ok(desktop, ClickAction(point=point, pattern=[80, 80]))
    eventlog.wait(lambda rs: len(releases(rs[mark:])) == 3, what="3 releases")
    assert len(presses(eventlog.since(mark), 1)) == 3


def test_pattern_delays_are_kept(desktop: Any, eventlog: Any) -> None:
    started = time.perf_counter()
    ok(desktop, ClickAction(point=eventlog.point("pad"), pattern=[150, 150]))
    assert time.perf_counter() - started >= 0.3


def test_click_with_held_keys(desktop: Any, eventlog: Any) -> None:
    mark = eventlog.mark()
    ok(desktop, ClickAction(point=eventlog.point("pad"), hold_keys=["shift", "ctrl"]))
    pressed = eventlog.wait(lambda rs: presses(rs[mark:]), what="a press")
    assert pressed[0]["state"] & SHIFT and pressed[0]["state"] & CONTROL
    keys = [(r["event"], r["keysym"]) for r in eventlog.since(mark, "key")]
    assert keys == [("press", "Shift_L"), ("press", "Control_L"), ("release", "Control_L"), ("release", "Shift_L")]
    # Released afterwards: the next click has no modifier.
    mark = eventlog.mark()
    ok(desktop, ClickAction(point=eventlog.point("pad")))
    assert eventlog.wait(lambda rs: presses(rs[mark:]))[0]["state"] & (SHIFT | CONTROL) == 0


# ----------------------------------------------------------------------------- keys


def test_press_hotkey_order_and_state(desktop: Any, eventlog: Any) -> None:
    mark = eventlog.mark()
    ok(desktop, PressAction(keys=["ctrl", "a"]))
    keys = key_events(eventlog, mark, 4)
    assert [(r["event"], r["keysym"]) for r in keys] == [
        ("press", "Control_L"),
        ("press", "a"),
        ("release", "a"),
        ("release", "Control_L"),
    ]
    assert keys[1]["state"] & CONTROL


def test_press_shifted_symbol_and_aliases(desktop: Any, eventlog: Any) -> None:
    mark = eventlog.mark()
    ok(desktop, PressAction(keys=["!"]))
    ok(desktop, PressAction(keys=["Return"]))
    ok(desktop, PressAction(keys=["PageDown"]))
    keys = [r["keysym"] for r in key_events(eventlog, mark, 8) if r["event"] == "press"]
    assert keys == ["Shift_L", "exclam", "Return", "Next"]


def test_every_key_name_reaches_the_app_as_its_keysym(desktop: Any, eventlog: Any) -> None:
    toggles = {"capslock", "numlock", "scrolllock"}
    keys = [k for k in KEYS if k not in toggles]
    mark = eventlog.mark()
    ok(desktop, [PressAction(keys=[k]) for k in keys])
    expected = [KEYSYM_NAMES[k] for k in keys]

    def all_in(records: list[dict[str, Any]]) -> list[str] | None:
        got = [r["keysym"] for r in records[mark:] if r["type"] == "key" and r["event"] == "press"]
        return got if len([g for g in got if g != "Shift_L"]) >= len([e for e in expected if e != "Shift_L"]) else None

    got = eventlog.wait(all_in, timeout=10, what="every key")
    # In order; a Shift_L may precede a key the keymap has on its shifted level only.
    i = 0
    for key, name in zip(keys, expected, strict=True):
        while got[i] != name and got[i] == "Shift_L":
            i += 1
        assert got[i] == name, (key, name, got[i - 2 : i + 3])
        i += 1


def test_keydown_keyup(desktop: Any, eventlog: Any) -> None:
    mark = eventlog.mark()
    ok(desktop, KeyDownAction(keys=["shift"]))
    ok(desktop, ClickAction(point=eventlog.point("pad")))
    pressed = eventlog.wait(lambda rs: presses(rs[mark:]))
    assert pressed[0]["state"] & SHIFT
    assert [(r["event"], r["keysym"]) for r in eventlog.since(mark, "key")] == [("press", "Shift_L")]
    ok(desktop, KeyUpAction(keys=["shift"]))
    eventlog.wait(lambda rs: [r for r in rs[mark:] if r["type"] == "key" and r["event"] == "release"])
    mark = eventlog.mark()
    ok(desktop, ClickAction(point=eventlog.point("pad")))
    assert eventlog.wait(lambda rs: presses(rs[mark:]))[0]["state"] & SHIFT == 0


def test_type_unicode_lands_exactly(desktop: Any, eventlog: Any) -> None:
    text = "héllo ü 日本 Ω"
    ok(desktop, TypeAction(text=text))
    assert eventlog.wait(lambda rs: eventlog.text() == text or None, what=repr(text))
    # Upper case and shifted ASCII, then characters remapped earlier, typed again.
    ok(desktop, TypeAction(text=" AbC!@#~ Ωé"))
    full = text + " AbC!@#~ Ωé"
    assert eventlog.wait(lambda rs: eventlog.text() == full or None, what=repr(full)), eventlog.text()


def test_type_enter_after(desktop: Any, eventlog: Any) -> None:
    ok(desktop, TypeAction(text="done", enter_after=True))
    returned = eventlog.wait(lambda rs: [r for r in rs if r["type"] == "return"], what="Return")
    assert returned[-1]["value"] == "done"
    mark = eventlog.mark()
    ok(desktop, TypeAction(text="", enter_after=True))
    assert eventlog.wait(lambda rs: [r for r in rs[mark:] if r["type"] == "return"])[-1]["value"] == "done"


def test_type_into_xterm(desktop: Any) -> None:
    desktop.reset(options={"task": HOME_TASK})
    _, info = ok(desktop, CustomAction(action="launch", args={"app": "xterm", "args": ["-title", "term"]}))
    assert info["window"] == "term" and info["focused_window"] == "term"
    target = "out.txt"
    ok(desktop, TypeAction(text=f"echo 'ünï 日本' > {target}", enter_after=True))
    home = desktop_home(desktop)
    deadline = time.monotonic() + 5
    while not (home / target).exists() or not (home / target).read_text():
        assert time.monotonic() < deadline, "xterm did not run the typed command"
        time.sleep(0.02)
    assert (home / target).read_text(encoding="utf-8") == "ünï 日本\n"


# ----------------------------------------------------------------------------- scroll, move, drag


def test_wheel_clicks_rounding() -> None:
    assert PIXELS_PER_WHEEL_CLICK == 100
    assert [wheel_clicks(p) for p in (0, 1, 49, 50, 149, 150, 250, 251, -1, -300)] == [0, 1, 1, 1, 1, 2, 3, 3, -1, -3]


@pytest.mark.parametrize(
    ("scroll", "buttons"),
    [
        ((0, 300), [5, 5, 5]),
        ((0, -100), [4]),
        ((200, 0), [7, 7]),
        ((-10, 0), [6]),
        ((100, 100), [5, 7]),
    ],
)
def test_scroll_axes_and_signs(desktop: Any, eventlog: Any, scroll: tuple[int, int], buttons: list[int]) -> None:
    x, y = eventlog.point("pad", 200, 100)
    mark = eventlog.mark()
    ok(desktop, ScrollAction(point=(x, y), scroll=scroll))
    pressed = eventlog.wait(lambda rs: len(presses(rs[mark:])) >= len(buttons) and presses(rs[mark:]))
    # Tk 8.6 reports the horizontal wheel (X buttons 6/7) as Shift + buttons 4/5.
    as_tk = [(b - 2, SHIFT) if b in (6, 7) else (b, 0) for b in buttons]
    assert [(r["num"], r["state"] & SHIFT) for r in pressed] == as_tk
    assert {(r["x_root"], r["y_root"]) for r in pressed} == {(x, y)}


@LOCAL_ONLY_X
def test_scroll_and_side_buttons_are_x_buttons(desktop: Any, run: Any) -> None:
    """The exact X buttons, seen by a bare X client: 4/5 up/down, 6/7 left/right, 8/9 back/forward."""
    desktop.reset()
    display = open_display(desktop.unwrapped.controller.state.display)
    try:
        screen = display.screen()
        window = screen.root.create_window(
            0, 0, 300, 200, 0, screen.root_depth, event_mask=X.ButtonPressMask | X.StructureNotifyMask
        )
        window.set_wm_name("probe")
        window.map()
        display.sync()
        run(desktop, lambda c: c.desktop.wait_for_window("^probe$"))
        origin = screen.root.translate_coords(window, 0, 0)
        point = (origin.x + 50, origin.y + 50)
        ok(desktop, ScrollAction(point=point, scroll=(0, 150)))
        ok(desktop, ScrollAction(point=point, scroll=(0, -100)))
        ok(desktop, ScrollAction(point=point, scroll=(250, 0)))
        ok(desktop, ScrollAction(point=point, scroll=(-1, 0)))
        ok(desktop, ClickAction(point=point, button="back"))
        ok(desktop, ClickAction(point=point, button="forward"))
        buttons: list[int] = []
        deadline = time.monotonic() + 5
        while len(buttons) < 9 and time.monotonic() < deadline:
            while display.pending_events():
                event = display.next_event()
                if event.type == X.ButtonPress:
                    buttons.append(event.detail)
            time.sleep(0.01)
        assert buttons == [5, 5, 4, 7, 7, 7, 6, 8, 9]
    finally:
        display.close()


def test_scroll_with_held_key(desktop: Any, eventlog: Any) -> None:
    mark = eventlog.mark()
    ok(desktop, ScrollAction(point=eventlog.point("pad"), scroll=(0, 100), hold_keys=["ctrl"]))
    pressed = eventlog.wait(lambda rs: presses(rs[mark:]))
    assert pressed[0]["num"] == 5 and pressed[0]["state"] & CONTROL


def _query_pointer(display_name: str) -> tuple[int, int]:
    """XQueryPointer on a connection of our own."""
    d = open_display(display_name)
    try:
        reply = d.screen().root.query_pointer()
        return reply.root_x, reply.root_y
    finally:
        d.close()


@LOCAL_ONLY_X
def test_move_point_offset_and_position(desktop: Any, eventlog: Any) -> None:
    display = desktop.unwrapped.controller.state.display
    x, y = eventlog.point("pad", 120, 80)
    mark = eventlog.mark()
    ok(desktop, MoveAction(point=(x, y)))
    motion = eventlog.wait(lambda rs: [r for r in rs[mark:] if r["type"] == "motion"])
    assert (motion[-1]["x_root"], motion[-1]["y_root"], motion[-1]["x"], motion[-1]["y"]) == (x, y, 120, 80)
    ok(desktop, MoveAction(offset=(-20, 15)))
    _, info = ok(desktop, PositionFetch())
    assert info["position"] == (x - 20, y + 15) == _query_pointer(display)
    eventlog.wait(lambda rs: [r for r in rs if r["type"] == "motion" and (r["x"], r["y"]) == (100, 95)])
    # Clamped to the screen; the position is the real pointer position.
    ok(desktop, MoveAction(point=(5000, -40)))
    _, info = ok(desktop, PositionFetch())
    assert info["position"] == (1279, 0) == _query_pointer(display)


def test_drag_path_with_held_key(desktop: Any, eventlog: Any) -> None:
    x, y = eventlog.point("pad", 20, 20)
    path = [(x, y), (x + 150, y + 30), (x + 300, y + 120)]
    mark = eventlog.mark()
    started = time.perf_counter()
    ok(desktop, DragAction(path=path, pattern=[60], hold_keys=["shift"]))
    assert time.perf_counter() - started >= 0.12
    released = eventlog.wait(lambda rs: [r for r in rs[mark:] if r["type"] == "button" and r["event"] == "release"])
    records = eventlog.since(mark)
    pressed = presses(records)
    assert [(r["num"], r["x_root"], r["y_root"]) for r in pressed] == [(1, x, y)]
    assert pressed[0]["state"] & SHIFT
    assert (released[0]["num"], released[0]["x_root"], released[0]["y_root"]) == (1, x + 300, y + 120)
    motions = [(r["x_root"], r["y_root"]) for r in records if r["type"] == "motion"]
    assert (x + 150, y + 30) in motions  # (Tk collapses the motion events it has queued)
    dragged = [r for r in records[records.index(pressed[0]) :] if r["type"] == "motion"]
    assert dragged and all(r["state"] & 0x100 and r["state"] & SHIFT for r in dragged)  # Button1 and Shift held


# ----------------------------------------------------------------------------- wait, screenshot, position


def test_wait_screenshot_position(desktop: Any, eventlog: Any) -> None:
    started = time.perf_counter()
    ok(desktop, WaitAction(time=200))
    assert time.perf_counter() - started >= 0.2
    mark = eventlog.mark()
    obs, info = ok(desktop, ScreenshotFetch())
    assert obs["screenshot"].shape == (720, 1280, 3)
    ok(desktop, MoveAction(point=(300, 200)))
    _, info = ok(desktop, PositionFetch())
    assert info["position"] == (300, 200)
    assert not presses(eventlog.since(mark))


# ----------------------------------------------------------------------------- custom actions


def test_key_sequence(desktop: Any, eventlog: Any) -> None:
    ok(desktop, TypeAction(text="abcd"))
    ok(
        desktop,
        CustomAction(action="key_sequence", args={"keys": ["BackSpace", "backspace", "shift+x", "ctrl+a", "y"]}),
    )
    # Tk's Entry: Ctrl+A goes to the line start.
    assert eventlog.wait(lambda rs: eventlog.text() == "yabX" or None, what="'yabX'"), eventlog.text()
    _, _, _, _, info = desktop.step(CustomAction(action="key_sequence", args={"keys": ["ctrl+nokey"]}))
    assert info["status"] == "action_error" and "nokey" in info["action_error"]


def test_clipboard_set_then_paste(desktop: Any, eventlog: Any) -> None:
    ok(desktop, CustomAction(action="clipboard_set", args={"text": "pasted ü 日本"}))
    ok(desktop, PressAction(keys=["ctrl", "v"]))
    assert eventlog.wait(lambda rs: eventlog.text() == "pasted ü 日本" or None, what="the paste"), eventlog.text()


def test_launch_by_name_and_refusals(desktop: Any) -> None:
    desktop.reset(options={"task": HOME_TASK})
    _, info = ok(desktop, CustomAction(action="launch", args={"app": "eventlog", "args": ["--title", "launched"]}))
    assert info["window"] == "launched" and info["pid"] > 0
    assert info["focused_window"] == "launched" and info["windows"] == ["launched"]
    assert (desktop_home(desktop) / "eventlog.jsonl").exists()
    refusals = [
        ({"app": "bash", "args": ["-c", "true"]}, "allow_shell=True"),
        ({"app": "xterm", "args": ["-e", "sh"]}, "'-e' is not allowed"),
        ({"app": "editor", "args": ["/etc/passwd"]}, "allow_absolute_paths=True"),
        ({"app": "eventlog", "args": ["--log", "../../escape"]}, "leaves the env's home"),
        ({"app": "xclock", "args": ["-update", "1"]}, "no arguments"),
        ({}, "needs args"),
    ]
    for args, message in refusals:
        _, _, _, _, info = desktop.step(CustomAction(action="launch", args=args))
        assert info["status"] == "action_error" and message in info["action_error"], (args, info["action_error"])
    _, _, _, _, info = desktop.step(CustomAction(action="nope"))
    assert info["status"] == "action_error"
    assert "launch, key_sequence, clipboard_set" in info["action_error"]


def test_launch_any_program_with_shell_allowed(make_controller_env: Any) -> None:
    env = make_controller_env("hud/Ubuntu-v0", allow_shell=True, screen_size=(640, 480))
    env.reset()
    _, _, _, _, info = env.step(
        CustomAction(action="launch", args={"app": "xterm", "args": ["-T", "shell ok", "-e", "sh"]})
    )
    assert info["status"] == "ok" and info["window"] == "shell ok"
    _, _, _, _, info = env.step(CustomAction(action="launch", args={"app": "xlogo"}))
    assert info["status"] == "ok" and info["window"]
