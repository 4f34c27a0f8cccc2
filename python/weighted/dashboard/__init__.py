"""The operator console: ``python -m weighted.dashboard``.

Per service, each endpoint's state, weight, share (expected and measured) and the reasons for
its weight (the rules that fired, with value and threshold); plots of weight and share over time
with their axes and the events marked; the event list with each event's reason. It watches an
engine in the same process (:func:`serve`), another process's engine through its state file or a
directory of them (:func:`attach`, ``--attach PATH|DIR``), a Spring service's
``/actuator/weighted`` endpoint (``--attach http://host:port/actuator/weighted``), or replays a
simulation's ``results.json``.

Served by waitress (``_http.py``): a fixed pool of workers, idle and half-sent connections closed
after a timeout, a cap on connections, no traceback for a client that vanishes.

Security: it binds 127.0.0.1 unless told otherwise; another address needs both
``allow_remote=True`` (``--allow-remote``) and a token (``--token`` or the environment variable
``WEIGHTED_DASHBOARD_TOKEN``), which every data request must then carry (``?token=`` on the
page's URL, which the page forwards as an ``Authorization: Bearer`` header); the page's static
files carry no data. It only reads: no request changes the engine.
"""
from __future__ import annotations

import threading
import urllib.parse
from typing import Any, Optional

from ._attach import DirSource, FileSource, HttpSource, SourceUnavailable, attach_source
from ._http import MIN_TOKEN_LENGTH, App, Server, check_bind
from ._http import is_loopback as _is_loopback  # noqa: F401  (kept for callers of 2.0)
from ._model import BadRequest, LiveSource, ReplaySource

__all__ = ["Dashboard", "serve", "replay", "attach", "LiveSource", "ReplaySource", "FileSource",
           "DirSource", "HttpSource", "SourceUnavailable", "BadRequest", "check_bind",
           "MIN_TOKEN_LENGTH", "main"]


class Dashboard:
    """An HTTP server for one source (:class:`LiveSource`, :class:`ReplaySource`,
    :class:`FileSource`, :class:`DirSource` or :class:`HttpSource`).

    ``start()`` serves from a background thread and, for a live source, samples the engine every
    ``interval`` seconds of wall time; ``url`` is the address to open (with the token).
    ``server_options`` (threads, connection_limit, channel_timeout, cleanup_interval) override
    the server's bounds.
    """

    def __init__(self, source: Any, *, host: str = "127.0.0.1", port: int = 8765,
                 token: Optional[str] = None, allow_remote: bool = False,
                 interval: float = 0.5, verbose: bool = False, **server_options: int) -> None:
        check_bind(host, allow_remote=allow_remote, token=token)
        if not 0 <= int(port) <= 65535:
            raise ValueError(f"port must be in [0, 65535], got {port}")
        if not interval > 0:
            raise ValueError(f"interval must be > 0 seconds, got {interval}")
        self.source = source
        self.token = token or None
        self.interval = interval
        self.verbose = verbose
        self._server = Server(App(self), host, int(port), **server_options)
        self._started = False
        self._stop = threading.Event()
        self._threads: list = []

    @property
    def host(self) -> str:
        return self._server.host

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        suffix = f"?token={urllib.parse.quote(self.token)}" if self.token else ""
        return f"http://{host}:{self.port}/{suffix}"

    def worker_count(self) -> int:
        return self._server.worker_count()

    def sample(self) -> None:
        """Live source: records a snapshot now (a manual-clock program calls this after advance)."""
        if isinstance(self.source, LiveSource):
            self.source.sample()

    def _sampler(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sample()
            except Exception:  # the engine was closed: keep serving the last state
                if getattr(self.source.engine, "closed", False):
                    return

    def start(self) -> "Dashboard":
        # Once: replay() and attach() return a started console that `with` starts again, and a
        # second server thread on the same connections made the two race for each read (one
        # got EAGAIN and dropped the connection) and outlived stop().
        if self._started:
            return self
        self._started = True
        if isinstance(self.source, LiveSource):
            self.source.sample()
            t = threading.Thread(target=self._sampler, name="weighted-dashboard-sampler",
                                 daemon=True)
            t.start()
            self._threads.append(t)
        self._server.start()
        return self

    def serve_forever(self) -> None:
        """Serves on this thread until interrupted."""
        # start() inside the try: an interrupt that lands while it starts the threads (a busy
        # machine can hold this thread there) still stops what was started.
        try:
            self.start()
            self._stop.wait()
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._server.stop()
        for t in self._threads:
            t.join(timeout=5)
        close = getattr(self.source, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> "Dashboard":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve(engine: Any, *, host: str = "127.0.0.1", port: int = 8765, token: Optional[str] = None,
          allow_remote: bool = False, interval: float = 0.5, title: str = "weighted engine",
          **server_options: int) -> Dashboard:
    """Starts a dashboard watching ``engine`` (in this process) and returns it, already serving."""
    return Dashboard(LiveSource(engine, title=title), host=host, port=port, token=token,
                     allow_remote=allow_remote, interval=interval, **server_options).start()


def replay(results: Any, *, policy: Optional[str] = None, **kwargs: Any) -> Dashboard:
    """Starts a dashboard replaying a simulation's results (a dict or a results.json path)."""
    return Dashboard(ReplaySource(results, policy=policy), **kwargs).start()


def attach(target: str, *, source_token: Optional[str] = None, **kwargs: Any) -> Dashboard:
    """Starts a dashboard watching another process's engine: ``target`` is a state file, a
    directory of them, or an ``http(s)://.../actuator/weighted`` URL (``source_token`` is sent
    to it as a Bearer token)."""
    return Dashboard(attach_source(target, token=source_token), **kwargs).start()


def main(argv: Optional[list] = None) -> int:
    from ._cli import main as cli_main
    return cli_main(argv)
