"""The shared response evaluators, the function registry and grade handling (hud_gym.evaluation)."""

from __future__ import annotations

import asyncio
import itertools

import pytest

import hud_gym.controllers.qa  # noqa: F401  (registers the qa setup functions)
from hud_gym.evaluation import (
    REGISTRY,
    FunctionArgumentError,
    FunctionContext,
    FunctionRegistry,
    Grade,
    SetupError,
    UnknownFunctionError,
    combine_grades,
    resolve_calls,
    run_evaluate,
    run_setup,
    to_grade,
)
from hud_gym.task import FunctionConfig, Task, expand_config
from hud_gym.tasksets import load_taskset

_unique = itertools.count()


def call(function: str, *args, registry: FunctionRegistry = REGISTRY, gym: str = "qa", **kwargs):
    return registry.resolve("evaluate", gym, FunctionConfig(function=function, args=list(args), kwargs=kwargs))


def evaluate(calls, response: str | None, task: Task | None = None, gym: str = "qa", combine: str = "mean") -> Grade:
    task = task or Task(prompt="question?")
    ctx = FunctionContext(gym=gym, task=task, final_response=response)
    return asyncio.run(run_evaluate(list(calls), ctx, combine))


def grade(function: str, *args, response: str | None, task: Task | None = None, **kwargs) -> Grade:
    return evaluate([call(function, *args, **kwargs)], response, task)


def reward(function: str, *args, response: str | None, task: Task | None = None, **kwargs) -> float:
    result = grade(function, *args, response=response, task=task, **kwargs)
    assert not result.is_error, result.content
    return result.reward


# ----------------------------------------------------------------------------- shared evaluators


def test_response_is():
    assert reward("response_is", "Tokyo", response="Tokyo") == 1.0
    assert reward("response_is", "Tokyo", response="  Tokyo\n") == 1.0  # stripped
    assert reward("response_is", "Tokyo", response="tokyo") == 0.0  # case-sensitive by default
    assert reward("response_is", "Tokyo", response="tokyo", case_sensitive=False) == 1.0
    assert reward("response_is", "Tokyo", response="Tokyo, Japan") == 0.0
    assert reward("response_is", "Tokyo", response=" Tokyo", strip=False) == 0.0
    g = grade("response_is", "Tokyo", response="Kyoto")
    assert "'Tokyo'" in g.content


def test_response_includes():
    assert reward("response_includes", "Jupiter", response="It is jupiter.") == 1.0  # case-insensitive by default
    assert reward("response_includes", "Jupiter", response="Saturn") == 0.0
    assert reward("response_includes", "Jupiter", response="jupiter", case_sensitive=True) == 0.0
    assert reward("response_includes", ["red", "green", "blue"], response="Blue, green and red") == 1.0
    g = grade("response_includes", ["red", "green", "blue"], response="red and blue")
    assert g.reward == 0.0 and g.info["missing"] == ["green"]
    assert reward("response_includes", "4", response="it is 14", whole_word=True) == 0.0
    assert reward("response_includes", "4", response="it is 4.", whole_word=True) == 1.0
    assert reward("response_includes", "ありがとう", response="ありがとう!") == 1.0


def test_response_match():
    assert reward("response_match", r"^\s*1969-07-20\s*$", response=" 1969-07-20 ") == 1.0
    assert reward("response_match", r"^\s*1969-07-20\s*$", response="20 July 1969") == 0.0
    assert reward("response_match", "H2O|H₂O", response="It's H₂O") == 1.0


def test_match_regex():
    assert reward("match_regex", "^#(?:FFFFFF|ffffff)$", response=" #FFFFFF ", full=True) == 1.0
    assert reward("match_regex", "#FFFFFF", response="white is #FFFFFF", full=True) == 0.0
    assert reward("match_regex", "#FFFFFF", response="white is #FFFFFF") == 1.0  # search
    assert reward("match_regex", "paris", response="PARIS") == 0.0
    assert reward("match_regex", "paris", response="PARIS", ignore_case=True) == 1.0
    assert reward("match_regex", "a.b", response="a\nb") == 1.0  # DOTALL


def test_invalid_regex_is_a_grading_error():
    for function in ("match_regex", "response_match"):
        g = grade(function, "([", response="anything")
        assert g.is_error and g.reward == 0.0
        assert "invalid regex" in g.content and "'(['" in g.content


def test_match_fuzzy():
    assert reward("match_fuzzy", "necessary", response="neccessary") == 1.0
    assert reward("match_fuzzy", "necessary", response="banana") == 0.0
    assert reward("match_fuzzy", "necessary", response="NECESSARY ") == 1.0
    assert reward("match_fuzzy", "necessary", response="necesary", threshold=0.99) == 0.0
    partial = grade("match_fuzzy", "necessary", response="necessity", threshold=None)
    assert 0.0 < partial.reward < 1.0
    assert partial.reward == pytest.approx(partial.info["similarity"])


def test_match_all():
    assert reward("match_all", ["banana", "apple"], response="banana, apple, cherry") == 1.0
    g = grade("match_all", ["banana", "apple"], response="Banana and kiwi")
    assert g.reward == 0.5 and g.info == {"found": ["banana"], "missing": ["apple"]}
    assert reward("match_all", ["banana", "apple"], response="kiwi") == 0.0
    assert reward("match_all", ["Banana"], response="banana", case_sensitive=True) == 0.0
    assert reward("match_all", [], response="anything") == 0.0


def test_match_diff():
    assert reward("match_diff", "3.14", response="pi is 3.14") == 1.0
    assert reward("match_diff", 100, response="90") == pytest.approx(0.9)
    assert reward("match_diff", 100, response="-100") == 0.0
    assert reward("match_diff", 0, response="0") == 1.0
    assert reward("match_diff", "hello", response="hello") == 1.0
    text = reward("match_diff", "hello", response="help")
    assert 0.0 < text < 1.0
    assert reward("match_diff", "3.14", response="no number here") < 0.5


def test_numeric_match():
    assert reward("numeric_match", 12, response="The answer is 12.") == 1.0
    assert reward("numeric_match", 12, response="13") == 0.0
    assert reward("numeric_match", 1000, response="1,000 exactly") == 1.0
    assert reward("numeric_match", 3.14159, response="3.1416", tolerance=0.001) == 1.0
    assert reward("numeric_match", 3.14159, response="3.15", tolerance=0.001) == 0.0
    assert reward("numeric_match", 299792, response="about 300,000 km/s", tolerance=0.01, relative=True) == 1.0
    assert reward("numeric_match", 299792, response="about 350,000 km/s", tolerance=0.01, relative=True) == 0.0
    assert reward("numeric_match", -5, response="minus: -5") == 1.0
    assert reward("numeric_match", "12", response="12") == 1.0  # a numeric string fits a float parameter
    g = grade("numeric_match", 12, response="twelve")
    assert g.reward == 0.0 and "no number" in g.content


MC = Task(prompt="Which is a noble gas?", choices=["Oxygen", "Neon", "Nitrogen"], target="Neon")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("B", 1.0),
        ("b", 1.0),
        ("Neon", 1.0),
        (" neon. ", 1.0),
        ("2", 1.0),
        ("(B) Neon", 1.0),
        ("Answer: B", 1.0),
        ("The answer is Neon", 1.0),
        ("A", 0.0),
        ("Oxygen", 0.0),
        ("1", 0.0),
        ("Z", 0.0),
        ("I don't know", 0.0),
    ],
)
def test_choice_match(response, expected):
    assert reward("choice_match", response=response, task=MC) == expected


def test_choice_match_with_answer_argument():
    assert reward("choice_match", "C", response="Nitrogen", task=MC) == 1.0
    assert reward("choice_match", 0, response="A", task=MC) == 1.0  # a 0-based index
    assert reward("choice_match", "Oxygen", response="B", task=MC) == 0.0
    no_choices = grade("choice_match", response="A", task=Task(prompt="q"))
    assert no_choices.is_error and "choices" in no_choices.content
    bad_answer = grade("choice_match", "Argon", response="A", task=MC)
    assert bad_answer.is_error and "Argon" in bad_answer.content


def test_default_evaluate_string_target():
    task = Task(prompt="Capital of France?", target="Paris")
    assert evaluate([], "It's Paris.", task).reward == 1.0
    assert evaluate([], "paris", task).reward == 1.0
    assert evaluate([], "Parisian food", task).reward == 0.0  # a whole word or phrase
    assert evaluate([], "London", task).reward == 0.0
    assert evaluate([], "It is 14", Task(prompt="2+2?", target="4")).reward == 0.0
    assert evaluate([], "It is 4", Task(prompt="2+2?", target="4")).reward == 1.0


def test_default_evaluate_list_target_and_choices():
    colours = Task(prompt="Colours?", target=["red", "green"])
    assert evaluate([], "red and green", colours).reward == 1.0
    assert evaluate([], "red only", colours).reward == 0.5
    assert evaluate([], "B", MC).reward == 1.0
    assert evaluate([], "C", MC).reward == 0.0
    letter_target = Task(prompt="Ocean?", choices=["Atlantic", "Pacific"], target="B")
    assert evaluate([], "Pacific", letter_target).reward == 1.0


def test_default_evaluate_without_target_is_an_error():
    g = evaluate([], "anything", Task(prompt="no target"))
    assert g.is_error and "neither" in g.content
    no_task = asyncio.run(run_evaluate([], FunctionContext(gym="qa", final_response="x")))
    assert no_task.reward == 0.0


@pytest.mark.parametrize(
    ("function", "args"),
    [
        ("response_is", ["x"]),
        ("response_includes", ["x"]),
        ("response_match", ["x"]),
        ("match_regex", ["x"]),
        ("match_fuzzy", ["x"]),
        ("match_all", [["x"]]),
        ("match_diff", ["x"]),
        ("numeric_match", [1]),
        ("choice_match", []),
    ],
)
def test_no_response_gives_zero(function, args):
    g = grade(function, *args, response=None, task=MC)
    assert g.reward == 0.0
    assert g.content == "no response"
    assert not g.is_error
    assert not g.done  # without a response the task is not complete


def test_default_evaluate_no_response():
    g = evaluate([], None, Task(prompt="q", target="x"))
    assert g.reward == 0.0 and g.content == "no response"


# every bundled qa task, with a right and a wrong answer, through the registry
QA_ANSWERS = {
    "capital-france": ("Paris", "Lyon"),
    "capital-japan": ("Tokyo", "Tokyo, Japan"),
    "largest-planet": ("Jupiter", "Saturn"),
    "primary-colors": ("red, green and blue", "red and green"),
    "iso-date": ("1969-07-20", "20/07/1969"),
    "hex-color": ("#FFFFFF", "#FFFFFE"),
    "spell-necessary": ("neccessary", "needed"),
    "fruits": ("banana, apple and cherry", "banana and kiwi"),
    "pi-digits": ("3.14", "31.4"),
    "sqrt-144": ("12", "14"),
    "speed-of-light": ("300,000", "200000"),
    "boiling-point": ("100", "1000"),
    "mc-noble-gas": ("B", "A"),
    "mc-triangle": ("Three", "Four"),
    "mc-ocean": ("Pacific", "Atlantic"),
    "opposite-hot": ("cold", "warm"),
    "binary-ten": ("1010", "10"),
    "shakespeare": ("William Shakespeare", "Marlowe"),
    "h2o": ("H2O", "HO2"),
    "days-in-leap-year": ("366 days", "365"),
    "passage-color": ("green", "red"),
    "multi-check": ("The blue whale lives in the ocean.", "The elephant lives on land."),
    "unicode-greeting": ("ありがとう", "arigatou"),
}


@pytest.mark.parametrize("task", list(load_taskset("qa-basic")), ids=lambda t: t.id)
def test_qa_basic_tasks_grade_right_and_wrong_answers(task):
    setup = resolve_calls("setup", "qa", task.setup)
    assert len(setup) == len(task.setup or [])
    calls = resolve_calls("evaluate", "qa", task.evaluate)
    right, wrong = QA_ANSWERS[task.id]
    combine = (task.config or {}).get("evaluate_combine", "mean")
    good = evaluate(calls, right, task, combine=combine)
    bad = evaluate(calls, wrong, task, combine=combine)
    assert not good.is_error and not bad.is_error
    assert good.reward == 1.0, good.content
    assert bad.reward < 1.0, bad.content


def test_every_qa_basic_task_has_an_answer_here():
    assert {t.id for t in load_taskset("qa-basic")} == set(QA_ANSWERS)


# ----------------------------------------------------------------------------- failures


def test_evaluator_that_raises_is_a_grading_error():
    registry = FunctionRegistry()

    @registry.register("evaluate", "test-gym")
    def boom(ctx: FunctionContext) -> float:
        raise RuntimeError("kaboom")

    g = evaluate([call("boom", registry=registry, gym="test-gym")], "x", gym="test-gym")
    assert g.is_error and g.reward == 0.0
    assert "kaboom" in g.content and "RuntimeError" in g.content and "boom" in g.content


def test_one_raising_evaluator_among_several():
    registry = FunctionRegistry()

    @registry.register("evaluate", "test-gym")
    def ok(ctx: FunctionContext) -> float:
        return 1.0

    @registry.register("evaluate", "test-gym")
    def boom(ctx: FunctionContext) -> float:
        raise ValueError("bad state")

    g = evaluate(
        [call("ok", registry=registry, gym="test-gym"), call("boom", registry=registry, gym="test-gym")],
        "x",
        gym="test-gym",
    )
    assert g.is_error and g.reward == 0.5
    assert "bad state" in g.content


def test_unknown_evaluate_function():
    with pytest.raises(UnknownFunctionError) as info:
        call("respons_is", "x")
    message = str(info.value)
    assert "'respons_is'" in message
    assert "Did you mean 'response_is'" in message
    assert "Known evaluate functions:" in message
    for known in ("response_is", "match_regex", "numeric_match", "choice_match"):
        assert known in message


def test_unknown_function_without_close_match_and_wrong_phase():
    with pytest.raises(UnknownFunctionError, match="'zzzz'"):
        call("zzzz")
    # show_passage is a qa *setup* function, not an evaluate function
    with pytest.raises(UnknownFunctionError, match="show_passage"):
        call("show_passage", "text")
    setup = REGISTRY.resolve("setup", "qa", FunctionConfig(function="show_passage", args=["text"]))
    assert setup.function.name == "show_passage"


def test_dotted_names():
    assert call("qa.response_is", "x").function.name == "response_is"
    assert call("evaluate.response_is", "x").function.name == "response_is"
    with pytest.raises(UnknownFunctionError):
        call("browser.response_is", "x")  # another gym's namespace


@pytest.mark.parametrize(
    ("function", "args", "kwargs", "expected"),
    [
        ("response_is", [], {}, "missing a required argument"),
        ("response_is", ["a", True, True, 5], {}, "too many positional arguments"),
        ("response_is", ["a"], {"foo": 1}, "unexpected keyword argument"),
        ("numeric_match", ["abc"], {}, "argument 'expected'"),
        ("numeric_match", [1], {"tolerance": "wide"}, "argument 'tolerance'"),
        ("response_is", [5], {}, "argument 'expected'"),
        ("match_all", ["not-a-list"], {}, "argument 'answers'"),
        ("response_is", ["x"], {"case_sensitive": "maybe"}, "argument 'case_sensitive'"),
    ],
)
def test_wrong_arguments(function, args, kwargs, expected):
    with pytest.raises(FunctionArgumentError) as info:
        call(function, *args, **kwargs)
    message = str(info.value)
    assert expected in message
    assert f"evaluate function {function}(" in message  # the usage, naming the function and its parameters


def test_arguments_are_validated_and_converted():
    bound = call("numeric_match", "12", tolerance="0.5")
    assert bound.args == (12.0, 0.5) and bound.kwargs == {}
    assert all(isinstance(a, float) for a in bound.args)


def test_registry_signature_checks_and_async_functions():
    registry = FunctionRegistry()
    with pytest.raises(TypeError, match="FunctionContext"):
        registry.register("evaluate", "g")(lambda: 1.0)
    with pytest.raises(ValueError, match="phase"):
        registry.register("grade", "g")  # type: ignore[arg-type]

    @registry.register("evaluate", "g", aliases=("same_length",))
    async def length_is(ctx: FunctionContext, n: int, *extra: int, **options: bool) -> float:
        await asyncio.sleep(0)
        return float(len(ctx.final_response or "") == n + sum(extra))

    assert registry.names("evaluate", "g") == ["length_is", "same_length"]
    assert registry.names("evaluate", "other") == []
    bound = registry.resolve(
        "evaluate", "g", FunctionConfig(function="same_length", args=[2, "1"], kwargs={"x": "yes"})
    )
    assert bound.function.is_async
    assert bound.args == (2, 1) and bound.kwargs == {"x": True}
    assert evaluate([bound], "abc", gym="g").reward == 1.0
    with pytest.raises(FunctionArgumentError, match="'extra'"):
        registry.resolve("evaluate", "g", FunctionConfig(function="length_is", args=[1, "many"]))
    with pytest.raises(FunctionArgumentError, match="'options'"):
        registry.resolve("evaluate", "g", FunctionConfig(function="length_is", args=[1], kwargs={"x": "perhaps"}))
    # a gym's functions are invisible to other gyms; shared ones are visible to all
    with pytest.raises(UnknownFunctionError):
        registry.resolve("evaluate", "other", FunctionConfig(function="length_is", args=[1]))

    @registry.register("evaluate")
    def everywhere(ctx: FunctionContext) -> bool:
        return True

    assert registry.resolve("evaluate", "other", FunctionConfig(function="everywhere")).function.gym == "*"


def test_setup_runs_in_order_and_failures_name_the_call():
    registry = FunctionRegistry()
    seen = []

    @registry.register("setup", "g")
    def record(ctx: FunctionContext, value: str) -> str:
        seen.append(value)
        ctx.state.setdefault("values", []).append(value)
        return value

    @registry.register("setup", "g")
    def explode(ctx: FunctionContext) -> None:
        raise OSError("disk gone")

    ctx = FunctionContext(gym="g")
    calls = resolve_calls(
        "setup", "g", expand_config([FunctionConfig(function="record", args=["a"]), ("record", "b")]), registry
    )
    assert asyncio.run(run_setup(calls, ctx)) == ["a", "b"]
    assert seen == ["a", "b"] and ctx.state["values"] == ["a", "b"]
    failing = resolve_calls("setup", "g", [FunctionConfig(function="explode")], registry)
    with pytest.raises(SetupError) as info:
        asyncio.run(run_setup(failing, ctx))
    assert "explode()" in str(info.value) and "disk gone" in str(info.value)


# ----------------------------------------------------------------------------- combining and normalising


def test_combine_modes_through_run_evaluate():
    calls = [
        call("response_includes", "red"),
        call("match_all", ["red", "blue"]),
        call("match_all", ["red", "green", "blue", "cyan"]),
    ]
    response = "red and green"
    assert evaluate(calls, response, combine="mean").reward == pytest.approx(2 / 3)
    assert evaluate(calls, response, combine="min").reward == 0.5
    assert evaluate(calls, response, combine="max").reward == 1.0
    assert evaluate(calls, response, combine="product").reward == 0.25
    combined = evaluate(calls, response)
    assert combined.info["combine"] == "mean"
    assert [g["reward"] for g in combined.info["grades"]] == [1.0, 0.5, 0.5]
    assert "all found" in combined.content


def test_combine_grades_edge_cases():
    single = Grade(reward=0.3)
    assert combine_grades([single]) is single
    empty = combine_grades([])
    assert empty.reward == 0.0 and empty.content == "nothing to evaluate"
    mixed = combine_grades([Grade(reward=1.0), Grade.error("broken")], "max")
    assert mixed.reward == 1.0 and mixed.is_error and not mixed.done
    with pytest.raises(ValueError, match="median"):
        combine_grades([Grade(), Grade()], "median")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected_reward", "is_error", "done"),
    [
        (0.5, 0.5, False, False),
        (1, 1.0, False, True),
        (1.0, 1.0, False, True),
        (0, 0.0, False, False),
        (True, 1.0, False, True),
        (False, 0.0, False, False),
        ({"reward": 0.7, "logs": "checked"}, 0.7, False, False),
        ({"reward": 1, "logs": "checked"}, 1.0, False, True),
        ({"reward": 0.2, "done": True}, 0.2, False, True),
        ({"score": 0.3, "reason": "partly"}, 0.3, False, False),
        ({"reward": 1.0, "error": "oops"}, 1.0, True, True),
        ({"reward": "high"}, 0.0, True, False),
        ({"foo": 1}, 0.0, True, False),
        ("great", 0.0, True, False),
        (None, 0.0, True, False),
    ],
)
def test_to_grade(value, expected_reward, is_error, done):
    g = to_grade(value)
    assert g.reward == expected_reward
    assert g.is_error is is_error
    assert g.done is done  # a bare score is done only at full reward


def test_to_grade_details():
    g = Grade(reward=0.2, content="x")
    assert to_grade(g) is g
    assert to_grade(True).raw is True
    from_dict = to_grade({"reward": 0.7, "logs": "checked", "done": False, "extra": 1})
    assert from_dict.content == "checked" and from_dict.done is False and from_dict.info == {"done": False, "extra": 1}
    assert to_grade({"score": 0.3, "reason": "partly"}).content == "partly"


def test_return_values_are_normalised_through_the_registry():
    registry = FunctionRegistry()
    gym = f"test-gym-{next(_unique)}"
    values = {"as_float": 0.25, "as_bool": True, "as_reward": {"reward": 0.5}, "as_score": {"score": 0.75}}
    for name, value in values.items():
        registry.register("evaluate", gym, name=name)(lambda ctx, _v=value: _v)
    expected = {"as_float": 0.25, "as_bool": 1.0, "as_reward": 0.5, "as_score": 0.75}
    for name, want in expected.items():
        assert evaluate([call(name, registry=registry, gym=gym)], "x", gym=gym).reward == want
