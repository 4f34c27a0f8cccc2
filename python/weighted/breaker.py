"""Circuit breakers beside the engine, with one data source and no call counted twice (S-P3).

A breaker and the engine answer different questions: the breaker reacts within a few calls to a
transient failure burst (it opens and stops traffic at once), the engine reacts over its sliding
window to sustained degradation (it moves weights). Both must see each call exactly once. The
pitfall is two reporting paths: a client that reports to the engine from one interceptor and to
the breaker from another counts a call twice when both fire, or once in one and never in the
other when only one does.

:class:`BreakerBridge` is the single place where a call's outcome is recorded. Its
:meth:`~BreakerBridge.record` reports the outcome to the engine **once** (``complete`` for a
pick, ``report`` otherwise) and feeds the endpoint's breaker the **same** outcome; nothing else
reports. A call that an open breaker refuses is never sent, so it is cancelled in the engine
(no outcome, no count) and counted nowhere::

    bridge = BreakerBridge(service)
    with bridge.call() as call:          # picks an endpoint whose breaker admits the call
        response = http_get(call.endpoint)
        call.set_http_status(response.status)
    # the engine's totals and the breaker's counts now each hold this call once

The breakers here are deliberately small (count-based sliding window, failure-rate threshold,
open duration, half-open trial calls, an injectable clock so tests never sleep). To keep a
breaker library you already run (pybreaker, a service mesh), register its recording function
with ``listeners=`` and drop the built-in one with ``breaker_factory=None``: the library then
receives exactly the calls the engine receives. See docs/reliability.md.
"""
from __future__ import annotations

import collections
import enum
import threading
import time
from typing import Any, Callable, Deque, Dict, List, Optional, Union

from ._outcome import _OUTCOMES_BY_NAME, Outcome, classify_exception
from ._service import Call, Pick, Service
from ._errors import NoEndpointError, NotFoundError, StaleEndpointError

__all__ = ["BreakerState", "CircuitBreaker", "BreakerBridge", "AllOpenError"]

_MIN_SWEEP = 16  # breakers a bridge keeps before it first looks for departed endpoints


def _as_outcome(outcome: Union[Outcome, int, str]) -> Outcome:
    if isinstance(outcome, str):
        try:
            return _OUTCOMES_BY_NAME[outcome.lower()]
        except KeyError:
            raise ValueError(f"unknown outcome {outcome!r}") from None
    return Outcome(int(outcome))


class BreakerState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class AllOpenError(NoEndpointError):
    """Every endpoint's breaker is open: no call may be sent now (``status`` is
    NoEndpointError's)."""


class CircuitBreaker:
    """A count-based circuit breaker for one endpoint.

    CLOSED: every call is admitted; after at least ``minimum_calls`` results, a failure rate
    over the last ``window`` results at or above ``failure_rate`` opens it. OPEN: nothing is
    admitted for ``open_seconds``; then HALF_OPEN admits ``half_open_calls`` trial calls, which
    close it if their failure rate is below ``failure_rate`` and reopen it otherwise.

    It counts only what :meth:`on_result` is given; :class:`BreakerBridge` gives it each call
    once. ``clock`` returns seconds (default ``time.monotonic``).
    """

    def __init__(self, *, window: int = 20, minimum_calls: int = 10, failure_rate: float = 0.5,
                 open_seconds: float = 10.0, half_open_calls: int = 3,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if window < 1 or minimum_calls < 1 or half_open_calls < 1:
            raise ValueError("window, minimum_calls and half_open_calls must be >= 1")
        if not 0 < failure_rate <= 1:
            raise ValueError(f"failure_rate must be in (0, 1], got {failure_rate!r}")
        if not open_seconds >= 0:
            raise ValueError(f"open_seconds must be >= 0, got {open_seconds!r}")
        self.window = window
        self.minimum_calls = minimum_calls
        self.failure_rate = failure_rate
        self.open_seconds = open_seconds
        self.half_open_calls = half_open_calls
        self._clock = clock
        self._lock = threading.Lock()
        self._results: Deque[bool] = collections.deque(maxlen=window)  # True = failed
        self._state = BreakerState.CLOSED
        self._opened_at = 0.0
        self._trials_admitted = 0
        self._trials: List[bool] = []
        self.calls = 0      # every result this breaker was given
        self.failures = 0   # of which failed

    @property
    def state(self) -> BreakerState:
        with self._lock:
            self._tick()
            return self._state

    def _tick(self) -> None:
        if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self.open_seconds:
            self._state = BreakerState.HALF_OPEN
            self._trials_admitted = 0
            self._trials = []

    def allow(self) -> bool:
        """Whether a call may be sent now (a half-open breaker admits its trial calls)."""
        with self._lock:
            self._tick()
            if self._state is BreakerState.CLOSED:
                return True
            if self._state is BreakerState.HALF_OPEN and self._trials_admitted < self.half_open_calls:
                self._trials_admitted += 1
                return True
            return False

    def release(self) -> None:
        """A call admitted by :meth:`allow` was not sent after all (its trial slot is returned)."""
        with self._lock:
            if self._state is BreakerState.HALF_OPEN and self._trials_admitted > len(self._trials):
                self._trials_admitted -= 1

    def on_result(self, failed: bool) -> None:
        with self._lock:
            self._tick()
            self.calls += 1
            self.failures += bool(failed)
            if self._state is BreakerState.HALF_OPEN:
                self._trials.append(bool(failed))
                if len(self._trials) >= self.half_open_calls:
                    if sum(self._trials) / len(self._trials) >= self.failure_rate:
                        self._open()
                    else:
                        self._state = BreakerState.CLOSED
                        self._results.clear()
                return
            if self._state is BreakerState.OPEN:
                return  # a call admitted before the breaker opened; counted, changes nothing
            self._results.append(bool(failed))
            if (len(self._results) >= self.minimum_calls
                    and sum(self._results) / len(self._results) >= self.failure_rate):
                self._open()

    def _open(self) -> None:
        self._state = BreakerState.OPEN
        self._opened_at = self._clock()
        self._results.clear()


Listener = Callable[[str, float, Outcome], Any]


class BreakerBridge:
    """Picks through per-endpoint breakers and records each call's outcome once, for both.

    ``breaker_factory(endpoint_id)`` makes an endpoint's breaker (default: a
    :class:`CircuitBreaker` with its defaults); ``None`` runs without built-in breakers, for use
    with ``listeners`` only. ``listeners`` are called ``(endpoint_id, latency_ms, outcome)``
    after the engine has accepted each outcome: the hook for another breaker library.
    ``is_failure(outcome)`` says what a breaker counts as a failure (default: anything but
    SUCCESS).

    Breakers live as long as their endpoint is in the service's set: once the bridge holds
    twice as many as the set has endpoints (and at least 16), making a new one first drops
    those of endpoints that have left, so a fleet whose instances come and go (new addresses
    on every deploy) does not pile them up. An endpoint that comes back gets a new breaker.
    """

    def __init__(self, service: Service, *,
                 breaker_factory: Optional[Callable[[str], CircuitBreaker]] = (
                     lambda endpoint: CircuitBreaker()),
                 listeners: Optional[List[Listener]] = None,
                 is_failure: Callable[[Outcome], bool] = lambda o: o is not Outcome.SUCCESS,
                 max_repicks: int = 8) -> None:
        self.service = service
        self._factory = breaker_factory
        self._breakers: Dict[str, CircuitBreaker] = {}
        self._sweep_at = _MIN_SWEEP
        self._lock = threading.Lock()
        self._listeners = list(listeners or [])
        self._is_failure = is_failure
        self.max_repicks = max_repicks
        self.vetoed = 0  # picks an open breaker refused (cancelled, never sent, never counted)

    def breaker(self, endpoint: str) -> Optional[CircuitBreaker]:
        """The breaker of ``endpoint`` (created on first use), or None without a factory."""
        if self._factory is None:
            return None
        with self._lock:
            b = self._breakers.get(endpoint)
            if b is None:
                if len(self._breakers) >= self._sweep_at:
                    self._drop_departed()
                b = self._breakers[endpoint] = self._factory(endpoint)
            return b

    def _drop_departed(self) -> None:
        # Called with the lock held. The engine's endpoint table is the one record of the set.
        def in_set(endpoint: str) -> bool:
            try:
                self.service.key(endpoint)
                return True
            except NotFoundError:
                return False
        self._breakers = {ep: b for ep, b in self._breakers.items() if in_set(ep)}
        self._sweep_at = max(_MIN_SWEEP, 2 * len(self._breakers))

    def pick(self) -> Pick:
        """An engine pick whose endpoint's breaker admits the call.

        A pick whose breaker is open is cancelled in the engine (the request is never sent, so
        there is no outcome to count anywhere) and the engine is asked again, at most
        ``max_repicks`` times; then :class:`AllOpenError`.
        """
        for _ in range(self.max_repicks + 1):
            p = self.service.pick()
            b = self.breaker(p.endpoint)
            if b is None or b.allow():
                return p
            self.vetoed += 1
            self._cancel(p)
        raise AllOpenError(f"service {self.service.name!r}: every endpoint picked in "
                           f"{self.max_repicks + 1} tries has an open circuit breaker")

    def release(self, pick: Pick) -> None:
        """The picked call was not sent: cancels it in the engine and returns a trial slot."""
        self._cancel(pick)
        b = self.breaker(pick.endpoint)
        if b is not None:
            b.release()

    def record(self, call: Union[Pick, str], latency_ms: float,
               outcome: Union[Outcome, int, str] = Outcome.SUCCESS) -> bool:
        """Records one call's outcome: to the engine once (``complete`` for a pick, ``report``
        for an endpoint id), then the same outcome to the endpoint's breaker and the listeners.

        Returns False when the endpoint had left the endpoint set: the engine counted the
        outcome as stale; the breaker still counts it, since the call did happen. Any other
        rejection (a NaN latency, an unknown outcome) raises before anyone has counted it.
        """
        o = _as_outcome(outcome)
        endpoint = call.endpoint if isinstance(call, Pick) else call
        live = True
        try:
            if isinstance(call, Pick):
                self.service.complete(call, latency_ms, o)
            else:
                self.service.report(call, latency_ms, o)
        except StaleEndpointError:
            live = False
        b = self.breaker(endpoint)
        if b is not None:
            b.on_result(self._is_failure(o))
        for fn in self._listeners:
            fn(endpoint, latency_ms, o)
        return live

    def call(self, *, classify: Optional[Callable[[BaseException], Any]] = None) -> "BridgeCall":
        """Like :meth:`Service.call`: a context manager that picks (through the breakers), times
        the block and records its outcome once, for the engine and the breaker."""
        return BridgeCall(self, classify or classify_exception)

    def _cancel(self, pick: Pick) -> None:
        # The engine releases the pick's in-flight count; nothing is recorded anywhere.
        try:
            self.service.cancel(pick)
        except StaleEndpointError:
            pass  # the endpoint left the set meanwhile; there is nothing to release


class BridgeCall(Call):
    """:class:`weighted.Call` whose pick and outcome go through a :class:`BreakerBridge`."""

    __slots__ = ("_bridge",)

    def __init__(self, bridge: BreakerBridge, classify: Callable[[BaseException], Any]) -> None:
        super().__init__(bridge.service, classify)
        self._bridge = bridge

    def _acquire(self) -> Pick:
        return self._bridge.pick()

    def _release(self, pick: Pick) -> None:
        self._bridge.release(pick)

    def _record(self, pick: Pick, latency_ms: float, outcome: Any) -> None:
        self._bridge.record(pick, latency_ms, outcome)
