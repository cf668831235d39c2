"""The registry of setup and evaluate functions, per gym type.

Functions are registered with a decorator and looked up by the names tasks use. Each function
takes a :class:`FunctionContext` first, then the task's arguments; the arguments are checked
against the signature (arity and type annotations, through pydantic) before anything runs, and
names are never evaluated as code.

Where a function runs (:mod:`hud_gym.evaluation.calls`): ``async def`` ones on the env's event
loop, sync ones never there: on a thread, or with ``isolated=True`` (a function that needs only
its arguments and the agent's response) in a worker process that a timeout can kill. An evaluate
function's rewards must lie in its ``reward_range`` (``[0, 1]`` unless it declares another).

Example:
    >>> from hud_gym.evaluation import evaluate_function, FunctionContext
    >>> @evaluate_function("qa")
    ... def answer_length_at_most(ctx: FunctionContext, limit: int) -> float:
    ...     return float(len(ctx.final_response or "") <= limit)
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from hud_gym.errors import HudGymError
from hud_gym.evaluation.grade import RewardRange, reward_range_of
from hud_gym.task import FunctionConfig, Task

__all__ = [
    "SHARED",
    "BoundCall",
    "FunctionArgumentError",
    "FunctionContext",
    "FunctionRegistry",
    "Phase",
    "REGISTRY",
    "RegisteredFunction",
    "UnknownFunctionError",
    "evaluate_function",
    "setup_function",
]

Phase = Literal["setup", "evaluate"]
SHARED = "*"
"""The gym name under which functions every gym type shares are registered."""


@dataclass
class FunctionContext:
    """What a setup or evaluate function can see.

    Attributes:
        gym: the gym type running the function (``"qa"``, ``"browser"``, ``"ubuntu"``).
        controller: the controller of the environment (drives the browser, desktop or QA state).
        task: the task being run, if any.
        final_response: the agent's final answer (from a ``ResponseAction``), if any.
        seed: the episode's seed (the reset seed, or one drawn from the env's seeded RNG), so
            setup functions can build the same instance for the same seed.
        instruction: set by a setup function that generates the episode's instruction (e.g.
            MiniWoB's utterance); it is then shown to the agent instead of the task's prompt.
        state: a per-episode scratch dict shared by the functions of one episode.
        info: facts a setup function reports to the agent (JSON-ready, e.g. MiniWoB's ``fields``):
            the env adds them to the reset's ``info`` and to every step's.
    """

    gym: str
    controller: Any = None
    task: Task | None = None
    final_response: str | None = None
    seed: int | None = None
    instruction: str | None = None
    state: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


class UnknownFunctionError(HudGymError, ValueError):
    """A task names a setup/evaluate function that is not registered for its gym."""


class FunctionArgumentError(HudGymError, ValueError):
    """A task's arguments do not fit the function's signature."""


@dataclass(frozen=True)
class RegisteredFunction:
    """A registered function, its signature and the validators of its parameters.

    ``isolated``: a sync function that needs only its arguments and the context's response, task,
    seed and instruction: it runs in a killable worker process. ``reward_range``: the rewards an
    evaluate function may give (``None``: the default ``[0, 1]``).
    """

    name: str
    phase: Phase
    gym: str
    func: Callable[..., Any]
    signature: inspect.Signature
    adapters: dict[str, TypeAdapter[Any]]
    isolated: bool = False
    reward_range: RewardRange | None = None

    @property
    def usage(self) -> str:
        """``name(param: type, ...)`` without the context parameter."""
        params = list(self.signature.parameters.values())[1:]
        return f"{self.name}({', '.join(str(p) for p in params)})"

    @property
    def summary(self) -> str:
        """The first paragraph of the function's docstring on one line (empty without one)."""
        doc = (inspect.getdoc(self.func) or "").strip()
        return " ".join(doc.split("\n\n", 1)[0].split())

    @property
    def is_async(self) -> bool:
        """True for ``async def`` functions."""
        return inspect.iscoroutinefunction(self.func)


@dataclass(frozen=True)
class BoundCall:
    """A resolved call with validated arguments, ready to run."""

    function: RegisteredFunction
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    config: FunctionConfig

    async def run(self, ctx: FunctionContext) -> Any:
        """Call the function with ``ctx`` and the validated arguments, off the event loop when it
        is sync (see :func:`hud_gym.evaluation.calls.call_function`)."""
        from hud_gym.evaluation.calls import call_function

        return await call_function(self.function.func, ctx, self.args, self.kwargs, isolated=self.function.isolated)


class FunctionRegistry:
    """Setup and evaluate functions by phase, gym and name."""

    def __init__(self, function_modules: dict[str, tuple[str, ...]] | None = None) -> None:
        self._functions: dict[tuple[Phase, str, str], RegisteredFunction] = {}
        self._function_modules = dict(function_modules or {})
        self._suite_modules: dict[str, dict[str, tuple[str, ...]]] = {}
        self._prefixes: dict[str, tuple[str, ...]] = {}
        self._loaded: set[str] = set()

    def add_gym(self, gym: str, *, prefixes: tuple[str, ...] = (), function_modules: tuple[str, ...] = ()) -> None:
        """Declare ``gym``'s namespace: the dotted ``prefixes`` of its names (``"chrome.maximize"``
        is ``maximize``; default: the gym's name) and the ``function_modules`` that register its
        functions, imported the first time its names are needed. Called by
        :func:`hud_gym.core.gym_type.register_gym` from the gym's descriptor."""
        self._prefixes[gym] = tuple(prefixes) or (gym,)
        self._function_modules[gym] = tuple(function_modules)
        self._loaded.discard(gym)

    def add_modules(self, gym: str, suite: str, function_modules: tuple[str, ...]) -> None:
        """Add the ``function_modules`` of ``suite`` to ``gym``'s (imported with the gym's own, the
        first time its names are needed). Called by :func:`hud_gym.core.suite.register_suite`."""
        self._suite_modules.setdefault(gym, {})[suite] = tuple(function_modules)
        self._loaded.discard(gym)

    def _load(self, gym: str) -> None:
        if gym in self._loaded:
            return
        self._loaded.add(gym)
        suites = self._suite_modules.get(gym, {}).values()
        for module in (*self._function_modules.get(gym, ()), *(m for modules in suites for m in modules)):
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if not module.startswith(exc.name or "\0"):
                    raise

    def register(
        self,
        phase: Phase,
        gym: str = SHARED,
        name: str | None = None,
        aliases: tuple[str, ...] = (),
        *,
        isolated: bool = False,
        reward_range: tuple[float, float] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: register ``func`` under ``name`` (default: its ``__name__``) and ``aliases``.

        Args:
            isolated: run the (sync, module-level) function in a worker process; it then sees no
                ``ctx.controller`` and an empty ``ctx.state``.
            reward_range: ``(low, high)`` of an evaluate function's rewards (default ``(0, 1)``).
        """
        if phase not in ("setup", "evaluate"):
            raise ValueError(f"phase must be 'setup' or 'evaluate', got {phase!r}")
        declared = reward_range_of(reward_range) if reward_range is not None else None

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            signature = inspect.signature(func)
            params = list(signature.parameters.values())
            if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
                raise TypeError(f"{func.__qualname__}: the first parameter must take the FunctionContext")
            if isolated and (inspect.iscoroutinefunction(func) or "<locals>" in func.__qualname__):
                raise TypeError(f"{func.__qualname__}: an isolated function must be a sync, module-level function")
            hints = typing.get_type_hints(func)
            adapters = {p.name: TypeAdapter(hints[p.name]) for p in params[1:] if p.name in hints}
            for registered_name in (name or func.__name__, *aliases):
                self._functions[(phase, gym, registered_name)] = RegisteredFunction(
                    registered_name, phase, gym, func, signature, adapters, isolated, declared
                )
            return func

        return decorator

    def names(self, phase: Phase, gym: str) -> list[str]:
        """The names a task for ``gym`` may use in ``phase`` (the gym's own and the shared ones)."""
        self._load(gym)
        return sorted({n for (p, g, n) in self._functions if p == phase and g in (gym, SHARED)})

    def functions(self, phase: Phase, gym: str) -> list[RegisteredFunction]:
        """The functions a task for ``gym`` may use in ``phase``, by name (the gym's own win over
        the shared ones of the same name; an alias is listed under its own name)."""
        self._load(gym)
        found = {n: f for (p, g, n), f in self._functions.items() if p == phase and g == SHARED}
        found.update({n: f for (p, g, n), f in self._functions.items() if p == phase and g == gym})
        return [found[name] for name in sorted(found)]

    def get(self, phase: Phase, gym: str, name: str) -> RegisteredFunction:
        """Look up a function by the name a task uses.

        Raises:
            UnknownFunctionError: no such function; the message lists the known names.
        """
        self._load(gym)
        candidates = [name]
        if "." in name:
            prefix, rest = name.split(".", 1)
            if prefix in self._prefixes.get(gym, (gym,)) or prefix == phase:
                candidates.append(rest)
        for candidate in candidates:
            for g in (gym, SHARED):
                found = self._functions.get((phase, g, candidate))
                if found is not None:
                    return found
        known = self.names(phase, gym)
        close = difflib.get_close_matches(name.rsplit(".", 1)[-1], known, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownFunctionError(
            f"unknown {phase} function {name!r} for gym {gym!r}.{hint} Known {phase} functions: {', '.join(known)}"
        )

    def resolve(self, phase: Phase, gym: str, config: FunctionConfig) -> BoundCall:
        """Look up ``config.function`` and check its arguments against the signature.

        Raises:
            UnknownFunctionError: the function is not registered for ``gym``.
            FunctionArgumentError: the arguments do not bind or do not match the annotations.
        """
        function = self.get(phase, gym, config.function)
        try:
            bound = function.signature.bind(None, *config.args, **config.kwargs)
        except TypeError as exc:
            raise FunctionArgumentError(f"{phase} function {function.usage}: {exc} (got {config})") from None
        params = function.signature.parameters
        for pname, value in list(bound.arguments.items())[1:]:
            adapter = function.adapters.get(pname)
            if adapter is None:
                continue
            kind = params[pname].kind
            try:
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    bound.arguments[pname] = tuple(adapter.validate_python(v) for v in value)
                elif kind is inspect.Parameter.VAR_KEYWORD:
                    bound.arguments[pname] = {k: adapter.validate_python(v) for k, v in value.items()}
                else:
                    bound.arguments[pname] = adapter.validate_python(value)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                raise FunctionArgumentError(
                    f"{phase} function {function.usage}: argument '{pname}' = {value!r}: {first['msg']}"
                ) from None
        return BoundCall(function, tuple(bound.args[1:]), dict(bound.kwargs), config)


REGISTRY = FunctionRegistry()
"""The process-wide registry every environment uses; each gym's descriptor declares its namespace
(:meth:`FunctionRegistry.add_gym`)."""


def setup_function(
    gym: str = SHARED, name: str | None = None, aliases: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a setup function for ``gym`` (default: every gym) in :data:`REGISTRY`."""
    return REGISTRY.register("setup", gym, name, aliases)


def evaluate_function(
    gym: str = SHARED,
    name: str | None = None,
    aliases: tuple[str, ...] = (),
    *,
    isolated: bool = False,
    reward_range: tuple[float, float] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an evaluate function for ``gym`` (default: every gym) in :data:`REGISTRY`; see
    :meth:`FunctionRegistry.register` for ``isolated`` and ``reward_range``."""
    return REGISTRY.register("evaluate", gym, name, aliases, isolated=isolated, reward_range=reward_range)
