"""The benchmarked agents, by name.

Each module has a ``factory(**options)`` that loads what its agents share (a model, a
policy) and returns a zero-argument constructor; the runner makes one agent per env
slot. Modules are imported only when their agent is asked for, so the light agents run
without torch. A new agent is one module and one line here.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Mapping

from webshop_gym.agents.protocol import Agent, AgentFactory, BatchActing

AGENTS: dict[str, str] = {
    "random": "benchmarks.harness.agents.random_agent",
    "rule": "benchmarks.harness.agents.rule",
    "heuristic": "benchmarks.harness.agents.heuristic",
    "llm": "benchmarks.harness.agents.llm",
    "sb3": "benchmarks.harness.agents.sb3",
    "apo": "benchmarks.harness.agents.apo",
}

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _coerce(name: str, value: str, annotation: object) -> object:
    if annotation is bool:
        if value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise ValueError(f"option {name}={value!r}: expected true or false")
    if annotation in (int, float):
        try:
            return annotation(value)  # type: ignore[operator]
        except ValueError:
            raise ValueError(f"option {name}={value!r}: expected a number") from None
    return value


def make_factory(name: str, options: Mapping[str, str] | None = None) -> AgentFactory:
    """The factory of agent ``name`` with string ``options`` converted to its parameter types.

    >>> agent = make_factory("heuristic", {"max_visits": "3"})()
    >>> agent.max_visits
    3
    """
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; choose from {', '.join(AGENTS)}")
    build = importlib.import_module(AGENTS[name]).factory
    hints = typing.get_type_hints(build)
    parameters = inspect.signature(build).parameters
    kwargs = {}
    for key, value in (options or {}).items():
        if key not in parameters:
            raise ValueError(
                f"agent {name!r} has no option {key!r}; its options: {', '.join(parameters) or 'none'}"
            )
        kwargs[key] = _coerce(key, value, hints.get(key, str))
    return build(**kwargs)


__all__ = ["AGENTS", "Agent", "AgentFactory", "BatchActing", "make_factory"]
