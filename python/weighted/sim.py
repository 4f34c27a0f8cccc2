"""The simulator from Python: ``weighted.sim.run(scenario)`` returns the results as a dict.

The simulator (``sim/``) replays a scenario (backends, load, faults) against this engine and the
load balancers users run instead, deterministically: the same scenario, options and seed give the
same results. The result's layout is documented in ``sim/include/weighted_sim/sim.h`` and
docs/benchmark.md.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import WeightedError

__all__ = ["run", "run_with_table", "scenario_path", "scenarios", "engine_variants", "policies",
           "ScenarioError"]

ScenarioLike = Union[str, bytes, os.PathLike, Mapping[str, Any]]

_SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"


class ScenarioError(WeightedError, ValueError):
    """A bad scenario, options or policy name; the message names the JSON path."""

    status = -2
    status_name = "SCENARIO"


def _sim_module() -> Any:
    try:
        from . import _sim
    except ImportError as e:  # built without the simulator
        raise ImportError("weighted was built without the simulator (weighted._sim); rebuild "
                          "from a checkout that has sim/ (pip install ./python)") from e
    return _sim


def scenarios() -> List[str]:
    """Names of the scenarios shipped with the package (``"seed"`` is the article's experiment)."""
    names = []
    for p in _SCENARIO_DIR.glob("*.json"):
        try:
            if "backends" in json.loads(p.read_text(encoding="utf-8")):
                names.append(p.stem)
        except ValueError:
            pass
    return sorted(names)


def engine_variants() -> Dict[str, Any]:
    """The engine rule variants shipped beside the scenarios (``make demo``'s trade-off run):
    ``{"engine_name": {config}, ...}``; empty if the package has none."""
    path = _SCENARIO_DIR / "engine_variants.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def scenario_path(name: str) -> Path:
    """The file of a shipped scenario."""
    path = _SCENARIO_DIR / f"{name}.json"
    if name not in scenarios():
        raise ScenarioError(f"no shipped scenario named {name!r}; shipped: {', '.join(scenarios())}")
    return path


def _scenario_text(scenario: ScenarioLike) -> str:
    if isinstance(scenario, Mapping):
        return json.dumps(scenario)
    if isinstance(scenario, bytes):
        return scenario.decode("utf-8")
    if isinstance(scenario, os.PathLike):
        return Path(scenario).read_text(encoding="utf-8")
    if isinstance(scenario, str):
        if scenario.lstrip().startswith("{"):
            return scenario
        if scenario in scenarios():
            return scenario_path(scenario).read_text(encoding="utf-8")
        return Path(scenario).read_text(encoding="utf-8")
    raise TypeError("scenario must be a dict, JSON text, a path or a shipped scenario's name")


def _options(policies: Optional[Sequence[str]], seed: Optional[int], series: bool,
             engine_configs: Optional[Mapping[str, Any]]) -> str:
    options: Dict[str, Any] = {"series": series}
    if engine_configs:
        options["engine_configs"] = dict(engine_configs)
    if policies is not None:
        options["policies"] = list(policies)
    if seed is not None:
        options["seed"] = seed
    return json.dumps(options)


def run_with_table(scenario: ScenarioLike = "seed", *, policies: Optional[Sequence[str]] = None,
                   seed: Optional[int] = None, series: bool = True,
                   engine_configs: Optional[Mapping[str, Any]] = None) -> Tuple[Dict[str, Any], str]:
    """Like :func:`run`, and also the Markdown results table that ``weighted-sim`` prints."""
    sim = _sim_module()
    try:
        text, table = sim.run(_scenario_text(scenario),
                              _options(policies, seed, series, engine_configs))
    except (ValueError, RuntimeError) as e:
        # The simulator throws std::invalid_argument for a bad scenario or option, and
        # std::runtime_error when an engine variant's config is refused by the engine.
        raise ScenarioError(str(e)) from None
    return json.loads(text), table


def run(scenario: ScenarioLike = "seed", *, policies: Optional[Sequence[str]] = None,
        seed: Optional[int] = None, series: bool = True,
        engine_configs: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Runs a scenario and returns the results (``scenario``, ``policies``, ``summary``,
    ``series``) as plain dicts and lists.

    ``scenario`` is a dict, JSON text, a path, or a shipped scenario's name (default ``"seed"``,
    the article's experiment). ``policies`` defaults to the scenario's list; ``seed`` to the
    scenario's; ``series=False`` leaves the per-second series out; ``engine_configs`` adds engine
    variants ``{"engine_name": {config}}`` (see :func:`engine_variants`). Bad input raises
    :class:`ScenarioError` naming the JSON path.
    """
    return run_with_table(scenario, policies=policies, seed=seed, series=series,
                          engine_configs=engine_configs)[0]


def policies() -> Dict[str, str]:
    """The simulator's policies, name to description."""
    sim = _sim_module()
    return {name: sim.policy_description(name) for name in sim.policy_names()}
