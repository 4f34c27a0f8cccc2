"""The Pythonic layer over ``weighted._weighted``: the Engine (config, clock, services, events).

The service, call, outcome and event types live in ``_service``, ``_outcome`` and ``_events``;
this module re-exports them. All state lives in the engine; these classes only convert
arguments and results.
"""
from __future__ import annotations

import atexit
import json
import math
import threading
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from . import _errors, _weighted
from ._config import (DEFAULT_LIMITS, ConfigLike, Limits, PathLike, config_bytes,
                      default_client_id, read_config_file, resolve_config, validate_config,
                      validate_config_file, with_client_id)
from ._events import Event, EventType
from ._outcome import Outcome, classify_exception
from ._service import Call, Pick, Service

__all__ = ["Engine", "Service", "Pick", "Outcome", "EventType", "Event", "Call",
           "classify_exception", "validate_config", "validate_config_file", "resolve_config"]

_INT64_MAX = (1 << 63) - 1


# ------------------------------------------------------------------------------------------------
# Clocks
# ------------------------------------------------------------------------------------------------

_CLOCKS = {"real": _weighted.CLOCK_REAL, "manual": _weighted.CLOCK_MANUAL}


def _clock_mode(clock: str) -> int:
    try:
        return _CLOCKS[clock]
    except (KeyError, TypeError):
        raise _errors.from_status(1, f"clock must be 'real' or 'manual', not {clock!r}") from None


# ------------------------------------------------------------------------------------------------
# Engine
# ------------------------------------------------------------------------------------------------

_live_engines: "weakref.WeakSet[Engine]" = weakref.WeakSet()


@atexit.register
def _close_live_engines() -> None:
    # Stop every controller thread while the interpreter is still whole.
    for engine in list(_live_engines):
        try:
            engine.close()
        except Exception:
            pass


class Engine(_weighted.Engine):
    """One engine: config, services, the controller, events and observability.

    Create it from JSON text, a dict or a file, with ``clock="real"`` (a controller thread runs
    every health-check cycle) or ``clock="manual"`` (time moves only through :meth:`advance`;
    tests and simulations are deterministic). Use it as a context manager or call
    :meth:`close`; any call after close raises :class:`weighted.ClosedError`.
    """

    def __init__(self, config: ConfigLike = None, *, clock: str = "real",
                 path: Optional[PathLike] = None, client_id: Optional[str] = None) -> None:
        mode = _clock_mode(clock)
        if path is not None:
            if config is not None:
                raise TypeError("pass either config or path, not both")
            text = read_config_file("Engine", path, DEFAULT_LIMITS.max_config_bytes)
        else:
            text = config_bytes(config)
        # Subsetting needs this client's identity: the one given, else the process's own.
        self._client_id = client_id
        text = with_client_id(text, client_id)
        super().__init__(text, mode, False)
        self._limits = Limits(text)
        self._services: Dict[str, Service] = {}
        self._listeners: List[Callable[[Event], Any]] = []
        self._listeners_lock = threading.Lock()
        self._dispatcher_installed = False
        _live_engines.add(self)

    @classmethod
    def from_json(cls, text: Union[str, bytes], *, clock: str = "real",
                  client_id: Optional[str] = None) -> "Engine":
        """An engine from config JSON text (a str, or bytes of UTF-8)."""
        return cls(text, clock=clock, client_id=client_id)

    @classmethod
    def from_dict(cls, config: Mapping[str, Any], *, clock: str = "real",
                  client_id: Optional[str] = None) -> "Engine":
        """An engine from a config dict (the same document as the JSON file). ``client_id``
        (default: :func:`weighted.default_client_id` where the config has a ``subset``
        without one) becomes ``subset.client_id``."""
        return cls(dict(config), clock=clock, client_id=client_id)

    @classmethod
    def from_file(cls, path: PathLike, *, clock: str = "real",
                  client_id: Optional[str] = None) -> "Engine":
        """An engine from a config file: :class:`weighted.ConfigFileError` if it cannot be read,
        :class:`weighted.LimitError` if it is larger than ``limits.max_config_bytes`` (1 MiB)."""
        return cls(read_config_file("Engine.from_file", path, DEFAULT_LIMITS.max_config_bytes),
                   clock=clock, client_id=client_id)

    # -- lifetime --------------------------------------------------------------------------------
    def __enter__(self) -> "Engine":
        self.now_ns()  # a closed engine raises ClosedError here, through the binding's one check
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"clock={self.clock!r}"
        return f"<weighted.Engine {state}>"

    @property
    def clock(self) -> str:
        """``"real"`` or ``"manual"``."""
        return "manual" if self.clock_mode == _weighted.CLOCK_MANUAL else "real"

    # -- config ----------------------------------------------------------------------------------
    def reload(self, config: ConfigLike) -> None:
        """Replaces the config at run time; an invalid one raises ConfigError and the old stays."""
        text = with_client_id(config_bytes(config), self._client_id)
        with self._limits.replacing(text):
            self._reload(text)

    def reload_from_file(self, path: PathLike) -> None:
        """:meth:`reload` with a file's text, read up to the running config's
        ``limits.max_config_bytes`` (more is a :class:`weighted.LimitError`)."""
        self.now_ns()  # closed: ClosedError before the file is touched
        self.reload(read_config_file("reload_from_file", path, self._limits.max_config_bytes))

    # -- time ------------------------------------------------------------------------------------
    def now(self) -> float:
        """Engine time in seconds (0 at creation on the manual clock)."""
        return self.now_ns() / 1e9

    def advance(self, seconds: float) -> None:
        """Manual clock: moves time forward by ``seconds`` and runs every cycle that falls due.

        Event callbacks run on this thread; an exception a callback raises is re-raised here.
        ``seconds`` is an int or a float (TypeError otherwise), finite and in
        [0, 9223372036.854775807] (the clock counts int64 nanoseconds).
        """
        if not isinstance(seconds, (int, float)):
            raise TypeError(f"advance: seconds must be a number (int or float), not "
                            f"{type(seconds).__name__}")
        if not math.isfinite(seconds):
            raise _errors.from_status(1, f"advance: seconds must be a finite number, not {seconds!r}")
        ns = seconds * 1_000_000_000 if isinstance(seconds, int) else round(seconds * 1e9)
        if not -_INT64_MAX - 1 <= ns <= _INT64_MAX:
            raise _errors.from_status(
                1, f"advance: seconds must be in [0, 9223372036.854775807] (the manual clock "
                   f"counts int64 nanoseconds), got {seconds!r}")
        self.advance_ns(ns)

    def advance_ns(self, delta_ns: int) -> None:
        """:meth:`advance` in nanoseconds: an int in [0, 2**63)."""
        if not hasattr(delta_ns, "__index__"):
            raise TypeError(f"advance_ns: delta_ns must be an int, not {type(delta_ns).__name__}")
        delta_ns = delta_ns.__index__()
        if delta_ns > _INT64_MAX or delta_ns < -_INT64_MAX - 1:
            raise _errors.from_status(
                1, f"advance_ns: delta_ns must be an int in [0, 2**63), got {delta_ns!r}")
        super().advance_ns(delta_ns)

    # -- services --------------------------------------------------------------------------------
    def service(self, name: str) -> "Service":
        """The service called ``name``, created (with no endpoints) on first use, or again after
        :meth:`Service.remove`."""
        try:
            svc = self._services.get(name)
        except TypeError:  # unhashable: Service() below names what a name must be
            svc = None
        if svc is None or svc.closed:
            svc = Service(self, name)
            self._services[name] = svc
        return svc

    # -- observability ---------------------------------------------------------------------------
    def snapshot(self) -> Dict[str, Any]:
        """All state as plain dicts and lists (weights, targets, penalties with per-rule
        contributions, states, window statistics, totals), parsed from the core's JSON."""
        return json.loads(self._snapshot_json())

    def snapshot_json(self) -> str:
        """The core's snapshot JSON text, unparsed."""
        return self._snapshot_json()

    # -- events ----------------------------------------------------------------------------------
    def events(self) -> Iterator[Event]:
        """Drains the engine's event queue: yields each queued event, oldest first, and stops
        when the queue is empty. Independent of :meth:`on_event` callbacks."""
        while True:
            raw = self._poll_event()
            if raw is None:
                return
            yield Event._from_raw(raw)

    def poll_event(self) -> Optional[Event]:
        """The oldest queued event, or None."""
        raw = self._poll_event()
        return None if raw is None else Event._from_raw(raw)

    def on_event(self, fn: Callable[[Event], Any]) -> Callable[[], None]:
        """Calls ``fn(event)`` for every event from now on; returns a function that unsubscribes.

        Real clock: ``fn`` runs on the engine's controller thread. Manual clock: inside
        :meth:`advance` / :meth:`run_cycle`, which re-raise the first exception ``fn`` raises.
        ``fn`` must not close the engine.
        """
        if not callable(fn):
            raise TypeError("on_event needs a callable")
        with self._listeners_lock:
            self._listeners.append(fn)
            if not self._dispatcher_installed:
                self._set_event_callback(_make_dispatcher(weakref.ref(self)))
                self._dispatcher_installed = True

        def unsubscribe() -> None:
            with self._listeners_lock:
                try:
                    self._listeners.remove(fn)
                except ValueError:
                    pass
        return unsubscribe


def _make_dispatcher(ref: "weakref.ref[Engine]") -> Callable[[tuple], None]:
    # Holds the engine weakly: the engine owns this callable, a strong reference would be a
    # cycle through C++ that the garbage collector cannot see.
    def dispatch(raw: tuple) -> None:
        engine = ref()
        if engine is None:
            return
        with engine._listeners_lock:
            listeners = list(engine._listeners)
        if not listeners:
            return
        event = Event._from_raw(raw)
        first_error: Optional[BaseException] = None
        for fn in listeners:
            try:
                fn(event)
            except Exception as e:  # every listener still sees the event
                if first_error is None:
                    first_error = e
        if first_error is not None:
            raise first_error
    return dispatch
