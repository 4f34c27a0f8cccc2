"""weighted: health-aware, dynamically weighted load balancing, from Python.

A thin layer over ``libweighted.so`` (the C API) through the ``weighted._weighted`` binding: the
engine owns all state and all decisions; this package converts arguments and results. ::

    import weighted

    engine = weighted.Engine.from_dict({"profile": "default"}, clock="manual")
    orders = engine.service("orders")
    orders.set_endpoints({"a:80": 100, "b:80": 100, "c:80": 100})
    with orders.call() as call:          # picks, times the block, reports the outcome
        send(call.endpoint)
    print(engine.snapshot())

See docs/python.md.
"""
from __future__ import annotations

__version__ = "2.3.0"


def _check_version(built: int, loaded: int) -> None:
    """Refuses a libweighted of another major version, or an older one than the binding was
    built for (it may lack functions the binding calls). Versions are MAJOR*10000+MINOR*100+PATCH."""
    if built // 10000 != loaded // 10000 or loaded < built:
        def fmt(v: int) -> str:
            return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
        raise ImportError(
            f"weighted: the loaded libweighted is version {fmt(loaded)}, but this binding was "
            f"built for {fmt(built)}; reinstall the package (pip install ./python) so both match")


from . import _weighted  # noqa: E402  (the binding; loads libweighted.so beside it)

_check_version(_weighted.BUILT_VERSION, _weighted.version_number())

from ._errors import (  # noqa: E402
    BadLoadReportError, ClosedError, ConfigError, ConfigFileError, ConfigInvalidError, ConfigParseError,
    DuplicateEndpointError, InternalError, InvalidArgumentError, LimitError, NoEndpointError,
    NotFoundError, OutOfMemoryError, StaleEndpointError, StateFileFormatError, WeightedError,
    WrongClockError)
from ._config import (  # noqa: E402
    default_client_id, fleet_place, resolve_config, validate_config, validate_config_file)
from ._engine import Engine  # noqa: E402
from ._events import EndpointState, Event, EventType  # noqa: E402
from ._outcome import Outcome, classify_exception  # noqa: E402
from ._service import Call, Pick, Service  # noqa: E402
from ._monitor import StateView, attach, find_state_files  # noqa: E402


def library_version() -> str:
    """The version of the loaded libweighted.so, e.g. ``"2.3.0"``."""
    return _weighted.version_string()


__all__ = [
    "Engine", "Service", "Pick", "Call", "Outcome", "Event", "EventType", "EndpointState",
    "classify_exception",
    "validate_config", "validate_config_file", "resolve_config", "library_version",
    "default_client_id", "fleet_place",
    "WeightedError", "InvalidArgumentError", "ConfigError", "ConfigParseError",
    "ConfigInvalidError", "ConfigFileError", "NotFoundError", "NoEndpointError", "LimitError",
    "WrongClockError", "StaleEndpointError", "OutOfMemoryError", "DuplicateEndpointError",
    "BadLoadReportError", "InternalError", "ClosedError", "StateFileFormatError", "StateView",
    "attach", "find_state_files",
]
