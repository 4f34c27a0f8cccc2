"""Servers' load reports: the ``endpoint-load-metrics`` response header (ORCA's TEXT form, the
fields of ``xds.data.orca.v3.OrcaLoadReport``) that gRPC, Envoy and vLLM use over HTTP.

Server side: :class:`LoadReportASGI` and :class:`LoadReportWSGI` add the header to every
response of an ASGI or WSGI application, from figures a :class:`LoadSampler` refreshes at most
once per ``interval_s`` (a request that finds the sample fresh pays one clock read and one
header copy)::

    app = LoadReportASGI(app, max_concurrency=64)       # uvicorn --limit-concurrency 64
    app = LoadReportWSGI(app, threads=8)                # waitress threads=8

Client side: :func:`load_report_of` reads the header from a ``requests`` or ``httpx`` response
(or any object with case-insensitive ``headers``), and :func:`complete_response` finishes a
pick with the response's status and load report in one call; ``Call.set_response`` does the
same inside ``with service.call()``.

The module needs no third-party package; with psutil installed, CPU and memory are the
process's share of the machine as psutil measures them, else CPU comes from ``os.times()`` and
memory from ``/proc/self/statm`` (Linux) or is left out.
"""

import os
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

try:  # optional: the better figures where installed
    import psutil as _psutil
except ImportError:  # pragma: no cover - exercised where psutil is absent
    _psutil = None

HEADER = "endpoint-load-metrics"
_HEADER_BYTES = HEADER.encode("ascii")

__all__ = ["HEADER", "LoadSampler", "LoadReportASGI", "LoadReportWSGI", "load_report_of",
           "complete_response"]


class _ProcessFigures:
    """CPU and memory of this process as fractions of what the machine has."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._cpus = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                         else (os.cpu_count() or 1))
        self._proc = _psutil.Process() if _psutil is not None else None
        self._last_cpu = self._cpu_seconds()
        self._last_t = clock()
        try:
            self._page = os.sysconf("SC_PAGE_SIZE")
            self._total = self._page * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
            self._page = self._total = 0

    def _cpu_seconds(self) -> float:
        if self._proc is not None:
            t = self._proc.cpu_times()
            return t.user + t.system
        t = os.times()
        return t.user + t.system

    def cpu(self) -> Optional[float]:
        """The process's CPU use since the last call, over the CPUs it may run on."""
        now, used = self._clock(), self._cpu_seconds()
        elapsed = now - self._last_t
        if elapsed <= 0:
            return None
        share = (used - self._last_cpu) / (elapsed * self._cpus)
        self._last_cpu, self._last_t = used, now
        return min(1.0, max(0.0, share))

    def memory(self) -> Optional[float]:
        if self._proc is not None:
            return min(1.0, self._proc.memory_percent() / 100.0)
        if not self._total:
            return None
        try:
            with open("/proc/self/statm") as f:
                rss_pages = int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            return None
        return min(1.0, rss_pages * self._page / self._total)


class LoadSampler:
    """The figures one server reports, refreshed at most once per ``interval_s``.

    ``busy`` / ``capacity`` is the request pool's use (the WSGI server's threads, the ASGI
    server's concurrency limit); ``connection_pool`` is an optional callable returning the
    database pool's use in [0, 1] (e.g. ``lambda: engine.pool.checkedout() / engine.pool.size()``
    for SQLAlchemy). rps and eps are the server's own over the last interval; an error is a 5xx.
    ``named_metrics.<latency_metric>`` (default ``latency_ms``; None: not sent) is the mean time
    in ms from :meth:`begin` to :meth:`end` of the requests that ended in the last interval
    (the last figure again when none did): the server's own service time over every client's
    requests, which the engine's ``server_latency`` rule judges against the fleet's (a client of
    thousands hears from one server too rarely to measure it). It must match the clients'
    ``load_report.latency_metric``.
    ``clock`` (seconds, monotonic) is injectable so tests decide when a sample falls due.
    """

    def __init__(self, capacity: int, *, interval_s: float = 1.0,
                 connection_pool: Optional[Callable[[], float]] = None,
                 thread_pool_metric: str = "thread_pool",
                 connection_pool_metric: str = "connection_pool",
                 latency_metric: Optional[str] = "latency_ms",
                 clock: Callable[[], float] = time.monotonic,
                 process: Optional[Any] = None) -> None:
        if capacity < 1:
            raise ValueError(f"LoadSampler: capacity must be at least 1, got {capacity}")
        if interval_s <= 0:
            raise ValueError(f"LoadSampler: interval_s must be positive, got {interval_s}")
        names = [thread_pool_metric, connection_pool_metric]
        if latency_metric is not None:
            names.append(latency_metric)
        for name in names:
            if not name or any(c in name for c in ",= \t\r\n"):
                raise ValueError(f"LoadSampler: {name!r} cannot be a named_metrics name")
        if len(set(names)) != len(names):
            raise ValueError(f"LoadSampler: the named metrics {names} must differ: one entry "
                             f"cannot carry two figures")
        self.capacity = capacity
        self.interval_s = interval_s
        self._pool = connection_pool
        self._names = (thread_pool_metric, connection_pool_metric)
        self._latency_name = latency_metric
        self._clock = clock
        self._process = process if process is not None else _ProcessFigures(clock)
        self._lock = threading.Lock()
        self.busy = 0  # requests being served now
        self._peak = 0  # the most at once since the last sample: a sample between bursts
        self._requests = self._errors = 0
        self._served_s = 0.0  # time in the application of the requests counted in _requests
        self._timed = 0
        self._latency_ms: Optional[float] = None  # the last interval's mean that had requests
        self._since = clock()
        self._header = "TEXT "
        self._due = self._since  # the first response samples
        self.figures: Dict[str, float] = {}

    def begin(self) -> float:
        """A request enters the application; returns its start, for :meth:`end`."""
        started = self._clock()
        with self._lock:
            self.busy += 1
            if self.busy > self._peak:
                self._peak = self.busy
        return started

    def end(self, status: int, started: Optional[float] = None) -> None:
        """The request has its answer; ``started`` (from :meth:`begin`) times it."""
        took = self._clock() - started if started is not None else None
        with self._lock:
            self.busy -= 1
            self._requests += 1
            if status >= 500:
                self._errors += 1
            if took is not None:
                self._served_s += max(0.0, took)
                self._timed += 1

    def header(self) -> str:
        """The header's value for the response being sent now."""
        now = self._clock()
        if now < self._due:
            return self._header
        with self._lock:
            if now >= self._due:  # another thread may have sampled meanwhile
                self._sample(now)
        return self._header

    def _sample(self, now: float) -> None:
        elapsed = now - self._since
        f: Dict[str, float] = {}
        cpu, mem = self._process.cpu(), self._process.memory()
        if cpu is not None:
            f["cpu_utilization"] = cpu
        if mem is not None:
            f["mem_utilization"] = mem
        # The pool's use is the peak since the last sample, the response being sent included: a
        # pool that was full between two samples was full.
        f[f"named_metrics.{self._names[0]}"] = min(1.0, max(self.busy, self._peak) / self.capacity)
        if self._pool is not None:
            try:
                f[f"named_metrics.{self._names[1]}"] = min(1.0, max(0.0, float(self._pool())))
            except Exception:  # a pool that cannot say is left out, never fails the response
                pass
        if elapsed > 0 and self._requests:
            f["rps_fractional"] = self._requests / elapsed
            f["eps"] = self._errors / elapsed
        if self._timed:
            self._latency_ms = 1000.0 * self._served_s / self._timed
        # An idle interval repeats the last figure: a server every client has drained is still
        # as slow as it last was, and its silence must not bring the fleet back at once.
        if self._latency_name is not None and self._latency_ms is not None:
            f[f"named_metrics.{self._latency_name}"] = self._latency_ms
        self._requests = self._errors = 0
        self._served_s, self._timed = 0.0, 0
        self._peak = self.busy
        self._since = now
        self._due = now + self.interval_s
        self.figures = f
        self._header = "TEXT " + ", ".join(f"{k}={v:.4g}" for k, v in f.items())


class LoadReportASGI:
    """ASGI middleware: every HTTP response carries ``endpoint-load-metrics``.

    ``max_concurrency`` is the limit the server enforces (uvicorn's ``--limit-concurrency``): its
    use is the thread pool's figure. Pass a ``sampler`` to share one with other middlewares.
    """

    def __init__(self, app: Any, *, max_concurrency: int = 100,
                 sampler: Optional[LoadSampler] = None, **sampler_args: Any) -> None:
        self.app = app
        self.sampler = sampler or LoadSampler(max_concurrency, **sampler_args)

    async def __call__(self, scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sampler = self.sampler
        status = [500]  # an app that fails before it answers is a server error

        async def send_with_report(message: Dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                headers = list(message.get("headers", ()))
                headers.append((_HEADER_BYTES, sampler.header().encode("ascii")))
                message = dict(message, headers=headers)
            await send(message)

        started = sampler.begin()
        try:
            await self.app(scope, receive, send_with_report)
        finally:
            sampler.end(status[0], started)


class LoadReportWSGI:
    """WSGI middleware: every response carries ``endpoint-load-metrics``.

    ``threads`` is the WSGI server's request threads (waitress ``threads=``, gunicorn
    ``--threads`` x workers of this process): requests in the app over it is the pool's figure.
    """

    def __init__(self, app: Any, *, threads: int = 4, sampler: Optional[LoadSampler] = None,
                 **sampler_args: Any) -> None:
        self.app = app
        self.sampler = sampler or LoadSampler(threads, **sampler_args)

    def __call__(self, environ: Dict[str, Any], start_response: Any) -> Iterable[bytes]:
        sampler = self.sampler
        status = [500]

        def start_with_report(status_line: str, headers: List[Tuple[str, str]],
                              exc_info: Any = None) -> Any:
            try:
                status[0] = int(status_line.split(None, 1)[0])
            except (ValueError, IndexError):
                status[0] = 500
            headers = list(headers)
            headers.append((HEADER, sampler.header()))
            return start_response(status_line, headers, exc_info)

        started = sampler.begin()
        try:
            body = self.app(environ, start_with_report)
        except BaseException:
            sampler.end(500, started)
            raise
        # The request ends when the server has the whole body (and closed it, as PEP 3333 says).
        return _Finished(body, lambda: sampler.end(status[0], started))


class _Finished:
    """A WSGI body that calls ``done`` once, when the server closes it."""

    def __init__(self, body: Iterable[bytes], done: Callable[[], None]) -> None:
        self._body = body
        self._done: Optional[Callable[[], None]] = done

    def __iter__(self) -> Any:
        return iter(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            done, self._done = self._done, None
            if done is not None:
                done()


def load_report_of(response: Any) -> Optional[str]:
    """The ``endpoint-load-metrics`` value of a ``requests`` / ``httpx`` response, or None."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get(HEADER)
    return value or None


def complete_response(service: Any, pick: Any, latency_ms: float, response: Any) -> None:
    """Finishes ``pick`` with the response's HTTP status as the outcome and its load report.

    A malformed report raises :class:`weighted.BadLoadReportError` after the outcome was
    recorded (the engine counts it in the snapshot's ``bad_load_reports``)."""
    from . import _weighted
    outcome = _weighted.outcome_from_http_status(int(response.status_code))
    service.complete_with_load(pick, latency_ms, outcome, load_report_of(response))
