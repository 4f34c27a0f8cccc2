"""The exception classes of ``weighted`` and the one table that maps a status to a class.

Every failed call into the core reaches Python through :func:`from_status`, called by the
binding's single check (``bindings/python/src/errors.cc``) with the status and the core's own
message from ``wt_last_error()``. Nothing else in the package invents error classes.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Type

from . import _weighted

__all__ = [
    "WeightedError", "InvalidArgumentError", "ConfigError", "ConfigParseError",
    "ConfigInvalidError", "ConfigFileError", "NotFoundError", "NoEndpointError", "LimitError",
    "WrongClockError", "StaleEndpointError", "OutOfMemoryError", "DuplicateEndpointError",
    "BadLoadReportError", "InternalError", "ClosedError", "StateFileFormatError", "from_status",
]

# Status names as the core spells them (wt_status_name), for every status it defines; -1 is
# Python's own: a closed object.
STATUS_NAMES: Dict[int, str] = {-1: "CLOSED"}
STATUS_NAMES.update((s, _weighted.status_name(s)) for s in range(128)
                    if _weighted.status_name(s) != "WT_UNKNOWN_STATUS")


class WeightedError(Exception):
    """Base class of every error the engine reports.

    ``message`` is the core's message (what, where, why); ``status`` the ``wt_status`` number
    and ``status_name`` its name, e.g. ``"WT_ERR_CONFIG_INVALID"``.
    """

    status: int = 99
    status_name: str = STATUS_NAMES[99]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        # report_batch failures only: each entry's status and how many were recorded.
        self.entry_statuses: Optional[List[int]] = None
        self.recorded: Optional[int] = None

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(WeightedError, ValueError):
    """A bad argument: NaN, a negative or absurd value, an unknown outcome, a bad name."""


class ConfigError(WeightedError, ValueError):
    """The config was rejected; ``message`` is the core's (line and column, or JSON path)."""


class ConfigParseError(ConfigError):
    """The config is not JSON; the message gives line and column."""


class ConfigInvalidError(ConfigError):
    """The config is JSON but a key is unknown or a value has the wrong type or range."""


class ConfigFileError(WeightedError, OSError):
    """A config file could not be read."""


class NotFoundError(WeightedError, LookupError):
    """An unknown service or endpoint id or key."""


class NoEndpointError(WeightedError, LookupError):
    """pick() on a service whose endpoint set is empty."""


class LimitError(WeightedError, ValueError):
    """A configured limit was exceeded (config size, services, endpoints per service)."""


class WrongClockError(WeightedError):
    """A manual-clock call (advance) on a real-clock engine, or the reverse."""


class StaleEndpointError(WeightedError, LookupError):
    """A report on an endpoint removed meanwhile; the outcome was counted as stale, not lost."""


class OutOfMemoryError(WeightedError, MemoryError):
    """The engine could not allocate memory."""


class DuplicateEndpointError(WeightedError, ValueError):
    """The same endpoint id appears twice in one endpoint set."""


class StateFileFormatError(WeightedError, ValueError):
    """A state file this library does not understand: another format version, a bad magic, or
    sizes and contents that do not fit (the message says which check failed)."""


class BadLoadReportError(WeightedError, ValueError):
    """A server's load report header is malformed: the message names the entry, its offset and
    why. The outcome it came with was recorded all the same."""


class InternalError(WeightedError, RuntimeError):
    """A bug in the engine: please report it with the message."""


class ClosedError(WeightedError, ValueError):
    """The engine (or a service of it) was used after close()."""


_CLASSES: Dict[int, Type[WeightedError]] = {
    -1: ClosedError,
    1: InvalidArgumentError,
    2: ConfigParseError,
    3: ConfigInvalidError,
    4: NotFoundError,
    5: ConfigFileError,
    6: NoEndpointError,
    7: LimitError,
    8: WrongClockError,
    9: StaleEndpointError,
    10: OutOfMemoryError,
    11: DuplicateEndpointError,
    12: StateFileFormatError,
    13: BadLoadReportError,
    99: InternalError,
}


# Each class names its own status, so a subclass (weighted.breaker.AllOpenError) carries it too.
for _status, _cls in _CLASSES.items():
    _cls.status, _cls.status_name = _status, STATUS_NAMES[_status]
del _status, _cls


def from_status(status: int, message: str) -> WeightedError:
    """The exception for a failed call: the class for ``status``, carrying the core's message."""
    cls = _CLASSES.get(status, WeightedError)
    exc = cls(message)
    exc.status = status
    exc.status_name = STATUS_NAMES.get(status) or _weighted.status_name(status)
    return exc
