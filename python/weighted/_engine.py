"""The Pythonic layer over ``weighted._weighted``: Engine, Service, outcomes, events, calls.

The classes subclass the binding's types, so the hot path (``Service.pick``, ``complete``,
``report``) is the C++ method itself with no Python frame in between. Everything here only
converts arguments and results; all state lives in the engine.
"""
from __future__ import annotations

import atexit
import enum
import functools
import inspect
import json
import math
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple,
                    TypeVar, Union)

from . import _errors, _weighted
from ._config import (DEFAULT_LIMITS, ConfigLike, Limits, PathLike, config_bytes,
                      default_client_id, read_config_file, resolve_config, validate_config,
                      validate_config_file, with_client_id)

__all__ = ["Engine", "Service", "Pick", "Outcome", "EventType", "Event", "Call",
           "classify_exception", "validate_config", "validate_config_file", "resolve_config"]

Pick = _weighted.Pick
F = TypeVar("F", bound=Callable[..., Any])
_INT64_MAX = (1 << 63) - 1


class Outcome(enum.IntEnum):
    """How a call ended (``wt_outcome``). Strings such as ``"timeout"`` (the core's names,
    ``weighted._weighted.outcome_name``) are accepted too."""

    SUCCESS = 0
    HTTP_5XX = 1
    TIMEOUT = 2
    CONNECT_ERROR = 3
    BUSINESS_ERROR = 4

    @classmethod
    def from_http_status(cls, http_status: int) -> "Outcome":
        """500..599 is HTTP_5XX, any other status (100..599) SUCCESS (a 4xx is the caller's
        fault). A status that is not an int (``"500"``, ``500.0``, ``True``) is a TypeError and
        one outside 100..599 an InvalidArgumentError: either would be recorded as a success."""
        return cls(_weighted.outcome_from_http_status(_http_status(http_status)))


def _http_status(value: Any, where: str = "http_status") -> int:
    # int() would take "500", 500.9 and True, and the core maps every non-5xx number to success:
    # a status read from the wrong field would count as a healthy answer.
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where} must be an int (an HTTP status code), not {type(value).__name__}")
    if not 100 <= value <= 599:
        raise _errors.InvalidArgumentError(
            f"{where} must be an HTTP status code in 100..599, got {value}")
    return int(value)


# The core's spelling of each outcome; the breaker's string outcomes resolve through it.
_OUTCOMES_BY_NAME: Dict[str, Outcome] = {_weighted.outcome_name(o): o for o in Outcome}


class EventType(enum.IntEnum):
    """``wt_event_type``."""

    WEIGHT_CHANGED = 1
    ISOLATED = 2
    RESTORED = 3
    FORCED_RESTORE = 4  # alert: max isolation time ran out; needs a human
    PANIC_ENTER = 5
    PANIC_EXIT = 6
    ENDPOINT_ADDED = 7
    ENDPOINT_REMOVED = 8
    CONFIG_RELOADED = 9
    SERVICE_REMOVED = 10  # Service.remove(); ``endpoint`` is ""
    SOURCE_STALE = 11  # a metric source (config ``sources``) has failed for its stale_ms
    SOURCE_FRESH = 12  # and has answered again; ``service`` and ``endpoint`` are ""
    BUDGET_MISSED = 13  # the service's error rate over budget.window_ms went above its budget
    BUDGET_MET = 14  # and is back within it; ``endpoint`` is ""
    GUARD = 15  # the capacity guard holds back a different number of cuts; ``endpoint`` is ""
    STATE_CHANGED = 16  # an endpoint's state changed; ``reason`` is the judgement behind it


class EndpointState(str, enum.Enum):
    """``wt_endpoint_state``: the snapshot's ``state`` of an endpoint (docs/algorithm.md).
    ``UNKNOWN`` is what the dashboard shows for an endpoint without evidence
    (``judgement.evidence`` "none"); the engine's own state for it reads healthy or recovering."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    ISOLATED = "isolated"
    RECOVERING = "recovering"
    FAILING = "failing"  # failure-rate rules fire: cut, and avoided because it fails
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Event:
    """One engine event. ``reason`` is the core's JSON reason (rules that fired, on which values)."""

    type: Union[EventType, int]
    time_ns: int
    service: str
    endpoint: str
    old_weight: float
    new_weight: float
    reason: Dict[str, Any] = field(default_factory=dict)

    @property
    def time(self) -> float:
        """Engine time in seconds."""
        return self.time_ns / 1e9

    @property
    def name(self) -> str:
        """The core's name: ``"isolated"``, ``"panic_enter"``, ... (``"event_<n>"`` for a type
        the loaded library does not name)."""
        return _weighted.event_type_name(int(self.type)) or f"event_{self.type}"

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.name, "time_ns": self.time_ns, "service": self.service,
                "endpoint": self.endpoint, "old_weight": self.old_weight,
                "new_weight": self.new_weight, "reason": self.reason}

    @classmethod
    def _from_raw(cls, raw: Tuple[int, int, str, str, float, float, str]) -> "Event":
        etype, time_ns, service, endpoint, old_w, new_w, reason_text = raw
        try:
            reason = json.loads(reason_text) if reason_text else {}
        except ValueError:
            reason = {"text": reason_text}
        if not isinstance(reason, dict):
            reason = {"value": reason}
        try:
            etype = EventType(etype)
        except ValueError:
            pass
        return cls(etype, time_ns, service, endpoint, old_w, new_w, reason)


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


# ------------------------------------------------------------------------------------------------
# Service
# ------------------------------------------------------------------------------------------------

EndpointsLike = Union[Mapping[str, float], Iterable[Union[str, Tuple[str, float]]]]


def _endpoint_specs(endpoints: EndpointsLike) -> List[Any]:
    # Pairs as they came: the binding converts each weight and names the endpoint of a bad one.
    if isinstance(endpoints, (str, bytes)):
        raise TypeError("endpoints must be a dict {id: base_weight} or a list, not a string")
    if isinstance(endpoints, Mapping):
        return list(endpoints.items())
    return [(item, 1.0) if isinstance(item, str) else item for item in endpoints]


def classify_exception(exc: BaseException) -> Outcome:
    """The default mapping of an exception raised by a tracked call to an :class:`Outcome`.

    ``TimeoutError`` (``socket.timeout``, ``asyncio.TimeoutError``) is TIMEOUT;
    ``ConnectionError`` (refused, reset, aborted) is CONNECT_ERROR; an exception carrying an HTTP
    status (``.status_code``, ``.status``, ``.code`` or ``.response.status_code``) maps through
    :meth:`Outcome.from_http_status` (so a 4xx counts as SUCCESS: the caller's fault); anything
    else is HTTP_5XX. Pass ``classify=`` to :meth:`Service.call` or :meth:`Service.tracked` to
    change it.
    """
    if isinstance(exc, TimeoutError):
        return Outcome.TIMEOUT
    if isinstance(exc, ConnectionError):
        return Outcome.CONNECT_ERROR
    status = None
    for holder in (exc, getattr(exc, "response", None)):
        if holder is None:
            continue
        for attr in ("status_code", "status", "code"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and 100 <= value <= 599:
                status = value
                break
        if status is not None:
            break
    if status is not None:
        return Outcome.from_http_status(status)
    return Outcome.HTTP_5XX


Classifier = Callable[[BaseException], Union[Outcome, int, str]]
_SUCCESS = Outcome.SUCCESS
_now_ns = time.perf_counter_ns


class Service(_weighted.Service):
    """One service of an engine: its endpoint set, picks and reports.

    ``pick``, ``complete``, ``cancel``, ``report``, ``report_resources``, ``report_batch``,
    ``key`` and ``remove`` are the binding's methods (see the stubs); this class adds the
    conveniences. After ``remove()`` (or the engine's ``close()``) every call raises
    :class:`weighted.ClosedError`.
    """

    def __init__(self, engine: Engine, name: str) -> None:
        super().__init__(engine, name)
        self._limits: Limits = getattr(engine, "_limits", DEFAULT_LIMITS)

    def __repr__(self) -> str:
        return f"<weighted.Service {self.name!r}{' closed' if self.closed else ''}>"

    def set_endpoints(self, endpoints: EndpointsLike) -> None:
        """Replaces the endpoint set: ``{"10.0.0.7:8080": 100, ...}``, ``[(id, weight), ...]`` or
        ``[id, ...]`` (base weight 1). Endpoints that stay keep their state; new ones start in
        slow start. The position of each endpoint is the ``index`` of a :class:`Pick`, and its id
        object (the very str given here) is its ``endpoint``: the engine holds it for the picks."""
        self._set_endpoints(_endpoint_specs(endpoints))

    def snapshot(self) -> Dict[str, Any]:
        """This service's entry of :meth:`Engine.snapshot` (the same dict), made and parsed
        for this service alone: its cost follows the service's size, not the engine's."""
        return json.loads(self._snapshot_json())["services"][0]

    def endpoint_snapshot(self, endpoint_id: str) -> Dict[str, Any]:
        """One endpoint's entry of the snapshot (the same dict as in :meth:`snapshot`), made
        and parsed for that endpoint alone; :class:`weighted.NotFoundError` if the set lacks it."""
        return json.loads(self._snapshot_json(endpoint_id))["services"][0]["endpoints"][0]

    def report_http(self, endpoint: Union[str, int], latency_ms: float, http_status: int) -> None:
        """:meth:`report` with the outcome taken from an HTTP status."""
        outcome = _weighted.outcome_from_http_status(_http_status(http_status, "report_http: http_status"))
        self.report(endpoint, latency_ms, outcome)

    def call(self, *, classify: Optional[Classifier] = None) -> "Call":
        """A context manager around one call: picks on entry, times the block, and on exit reports
        its latency and outcome (an exception is classified, then re-raised)::

            with service.call() as call:
                response = http_get(call.endpoint)
                call.set_http_status(response.status)

        A block slower than the config's ``limits.max_latency_ms`` is reported at that limit,
        with its own outcome; the block's result or exception always reaches the caller.
        """
        return Call(self, classify or classify_exception)

    def tracked(self, fn: Optional[F] = None, *, classify: Optional[Classifier] = None) -> Any:
        """A decorator: each call of ``fn`` picks an endpoint, passes its id as the first
        argument, times the call and reports its outcome (an exception is classified, then
        re-raised). Works on plain and ``async`` functions::

            @service.tracked
            def fetch(endpoint, path): ...
            fetch("/orders/1")
        """
        def decorate(func: F) -> F:
            if inspect.iscoroutinefunction(func):
                @functools.wraps(func)
                async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                    with self.call(classify=classify) as c:
                        return await func(c.endpoint, *args, **kwargs)
                return async_wrapper  # type: ignore[return-value]

            @functools.wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                with self.call(classify=classify) as c:
                    return func(c.endpoint, *args, **kwargs)
            return wrapper  # type: ignore[return-value]

        return decorate(fn) if fn is not None else decorate


class Call:
    """One tracked call (see :meth:`Service.call`).

    Inside the block: ``endpoint`` and ``pick`` say where to send the request;
    ``set_outcome`` / ``set_http_status`` override the outcome, ``latency_ms`` can be set to a
    measured value instead of the block's wall time, and ``cancel()`` reports nothing (the
    request was never sent). KeyboardInterrupt and other non-Exception exits also cancel.

    A latency above ``limits.max_latency_ms`` is reported as that limit: the engine refuses
    larger values as absurd, and the call did take at least that long, so a latency rule still
    sees it at the top of its range. Its outcome stays what the call gave (a slow answer is not
    a timeout unless the caller says so). If the engine refuses the outcome all the same (an
    unknown one from ``set_outcome``), the pick is cancelled so it holds no in-flight count;
    the refusal is raised only when the block itself succeeded, and an exception of the block's
    own is never replaced (it carries the refusal as a note where Python has notes).
    """

    __slots__ = ("_service", "_classify", "pick", "outcome", "latency_ms", "_start", "_cancelled",
                 "load_report")

    def __init__(self, service: Service, classify: Classifier) -> None:
        self._service = service
        self._classify = classify
        self.pick: Optional[Pick] = None
        self.outcome: Optional[Union[Outcome, int, str]] = None
        self.latency_ms: Optional[float] = None
        self._start = 0
        self._cancelled = False
        self.load_report: Optional[Union[str, bytes]] = None

    @property
    def endpoint(self) -> str:
        if self.pick is None:
            raise RuntimeError("the call has not started: use it in a with block")
        return self.pick.endpoint

    def set_outcome(self, outcome: Union[Outcome, int, str]) -> None:
        self.outcome = outcome

    def set_http_status(self, http_status: int) -> None:
        self.outcome = Outcome.from_http_status(http_status)

    def set_response(self, response: Any) -> None:
        """The outcome from a ``requests`` / ``httpx`` response's status, and the server's load
        report from its ``endpoint-load-metrics`` header (weighted.load_report)."""
        self.outcome = Outcome.from_http_status(int(response.status_code))
        headers = getattr(response, "headers", None)
        self.load_report = headers.get("endpoint-load-metrics") if headers is not None else None

    def cancel(self) -> None:
        self._cancelled = True

    def __enter__(self) -> "Call":
        self.pick = self._acquire()
        self._start = _now_ns()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        elapsed_ns = _now_ns() - self._start
        pick = self.pick
        assert pick is not None
        if exc is None:
            if self._cancelled:
                self._release(pick)
                return
            outcome = _SUCCESS if self.outcome is None else self.outcome
        elif self._cancelled or not isinstance(exc, Exception):
            self._release(pick)
            return
        else:
            outcome = self._classify(exc) if self.outcome is None else self.outcome
        latency = elapsed_ns / 1e6 if self.latency_ms is None else self.latency_ms
        limit = self._service._limits.max_latency_ms
        if latency > limit:
            latency = limit
        try:
            self._record(pick, latency, outcome)
        except Exception as refused:
            if not pick.finished:
                try:
                    self._release(pick)
                except Exception:
                    pass  # the refusal above is the error to report
            if exc is None:
                raise
            add_note = getattr(exc, "add_note", None)  # Python 3.11+
            if add_note is not None:
                add_note(f"weighted: the call's outcome was not recorded: {refused}")

    # The three steps a subclass may route elsewhere (weighted.breaker.BridgeCall does). The
    # engine's StaleEndpointError is swallowed: the endpoint left the set during the call (a
    # discovery update) and the core counted the outcome as stale. Not the caller's error.
    def _acquire(self) -> Pick:
        return self._service.pick()

    def _release(self, pick: Pick) -> None:
        try:
            self._service.cancel(pick)
        except _errors.StaleEndpointError:
            pass

    def _record(self, pick: Pick, latency_ms: float, outcome: Union[Outcome, int, str]) -> None:
        try:
            if self.load_report:
                self._service.complete_with_load(pick, latency_ms, outcome, self.load_report)
            else:
                self._service.complete(pick, latency_ms, outcome)
        except _errors.StaleEndpointError:
            pass
        except _errors.BadLoadReportError:
            # The outcome is recorded and the engine counted the bad report (the snapshot's
            # bad_load_reports): what a server wrote in a header is not the caller's error.
            pass
