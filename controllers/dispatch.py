"""One CLA dispatcher for every controller: a table from action type to handler.

As MiniWoB++'s action table, a controller says once which handler executes each CLA action type
(:class:`ActionTable`) and which handler each of its custom actions (:class:`CustomActions`);
its ``step`` looks the action up and awaits the handler. An action the gym does not execute
raises :class:`~hud_gym.actions.ActionError` naming the action and the gym (the env reports
``status="action_error"`` and the episode goes on).

Handlers are functions of ``(controller, action)``: the controller's own methods, taken from its
class, or calls of its collaborators' (the browser's ``{ClickAction: lambda c, action:
c.input.click(action), ...}``). A custom action's handler gets
``(controller, args)``, ``args`` being a fresh dict of the action's ``args``. A subclass of a CLA
type runs with the handler of that type, as an ``isinstance`` test would have it.

Example:
    >>> from hud_gym.actions import WaitAction
    >>> async def wait(controller, action): return action.time
    >>> table = ActionTable("demo", {WaitAction: wait})
    >>> table.names
    ('wait',)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

from hud_gym.actions import ActionError, CLAAction, CustomAction

__all__ = ["ActionTable", "CustomActions"]

C = TypeVar("C")
"""The controller a table's handlers drive."""
R = TypeVar("R")
"""What a table's handlers return (the step's outcome)."""


class ActionTable(Generic[C, R]):
    """The handler of each CLA action type a gym executes.

    Args:
        gym: the gym's name, for error messages (``Controller.gym``).
        handlers: CLA action class -> ``handler(controller, action)``.
    """

    def __init__(self, gym: str, handlers: Mapping[type[CLAAction], Callable[[C, Any], Awaitable[R]]]) -> None:
        self.gym = gym
        self._handlers: dict[type[CLAAction], Callable[[C, Any], Awaitable[R]]] = dict(handlers)
        self.names: tuple[str, ...] = tuple(_type_name(cls) for cls in handlers)
        """The action types executed, in the table's order (``"click"``, ``"press"``, ...)."""

    def handler(self, action_type: type[CLAAction]) -> Callable[[C, Any], Awaitable[R]]:
        """The handler of ``action_type`` (or of the nearest CLA class it derives from).

        Raises:
            ActionError: the gym does not execute that type.
        """
        handler = self._handlers.get(action_type)
        if handler is None:
            handler = next((self._handlers[base] for base in action_type.__mro__ if base in self._handlers), None)
            if handler is None:
                raise ActionError(
                    f"the {self.gym} gym cannot execute {_type_name(action_type)!r} actions "
                    f"(it executes: {', '.join(self.names)})"
                )
            self._handlers[action_type] = handler
        return handler

    def run(self, controller: C, action: CLAAction) -> Awaitable[R]:
        """Start the handler of ``action`` on ``controller`` (await the result).

        Raises:
            ActionError: the gym does not execute actions of that type.
        """
        handler = self._handlers.get(type(action))
        if handler is None:
            handler = self.handler(type(action))
        return handler(controller, action)


class CustomActions(Generic[C, R]):
    """The handler of each custom action (``CustomAction(action=name, args={...})``) of a gym.

    Args:
        gym: the gym's name, for error messages.
        handlers: custom action name -> ``handler(controller, args)``.
    """

    def __init__(self, gym: str, handlers: Mapping[str, Callable[[C, dict[str, Any]], Awaitable[R]]]) -> None:
        self.gym = gym
        self._handlers = dict(handlers)
        self.names: tuple[str, ...] = tuple(handlers)
        """The custom actions, in the table's order."""

    def extended(self, handlers: Mapping[str, Callable[[C, dict[str, Any]], Awaitable[R]]]) -> CustomActions[C, R]:
        """This table with ``handlers`` added after its own (a suite's custom actions).

        Raises:
            ValueError: a name is one of this table's.
        """
        taken = sorted(set(handlers) & set(self._handlers))
        if taken:
            raise ValueError(f"the {self.gym} gym's custom actions {', '.join(taken)} cannot be redefined")
        return CustomActions(self.gym, {**self._handlers, **handlers})

    def run(self, controller: C, action: CustomAction) -> Awaitable[R]:
        """Start the handler of ``action.action`` with a copy of ``action.args``.

        Raises:
            ActionError: not a custom action of this gym; the message lists the ones it has.
        """
        handler = self._handlers.get(action.action)
        if handler is None:
            raise ActionError(
                f"unknown custom action {action.action!r}; the {self.gym} gym supports: {', '.join(self.names)}"
            )
        return handler(controller, dict(action.args or {}))


def _type_name(cls: type[CLAAction]) -> str:
    """The ``type`` literal of a CLA class (``ClickAction`` -> ``"click"``)."""
    field = cls.model_fields.get("type")
    default = field.default if field is not None else None
    return default if isinstance(default, str) else cls.__name__
