"""Service and Call: one service's endpoint set, picks and reports, and the tracked call.

``Service`` subclasses the binding's type, so the hot path (``pick``, ``complete``, ``report``)
is the C++ method itself with no Python frame in between.
"""
from __future__ import annotations

import functools
import inspect
import json
import time
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple,
                    TypeVar, Union)

from . import _errors, _weighted
from ._config import DEFAULT_LIMITS, Limits
from ._outcome import Classifier, Outcome, _http_status, classify_exception

if TYPE_CHECKING:
    from ._engine import Engine

Pick = _weighted.Pick
F = TypeVar("F", bound=Callable[..., Any])


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
