"""A live web page of an engine's state: ``python -m weighted.dashboard``.

Per endpoint: weight, target, state (healthy, degraded, isolated, recovering; the service's
panic), penalty with each rule's contribution, p99 and error rate, and a timeline of weights and
events. It watches an engine in the same process (:func:`serve`) or replays a simulation's
``results.json``.

Security: it binds 127.0.0.1 unless told otherwise; another address needs both
``allow_remote=True`` (``--allow-remote``) and a token (``--token`` or the environment variable
``WEIGHTED_DASHBOARD_TOKEN``), which every data request must then carry (``?token=`` on the
page's URL, which the page forwards as an ``Authorization: Bearer`` header); the page's static
files carry no data. It only reads: no request changes the engine.
"""
from __future__ import annotations

import hmac
import ipaddress
import json
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Dict, Optional, Union

from ._model import LiveSource, ReplaySource

__all__ = ["Dashboard", "serve", "replay", "LiveSource", "ReplaySource", "main"]

_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
MIN_TOKEN_LENGTH = 16


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, allow_remote: bool, token: Optional[str]) -> None:
    """Refuses a non-loopback address unless ``allow_remote`` and a token of at least 16
    characters are both given."""
    if _is_loopback(host):
        return
    if not allow_remote:
        raise ValueError(f"refusing to bind {host!r}: the dashboard binds 127.0.0.1 unless "
                         "allow_remote=True (--allow-remote) and a token are given")
    if not token or len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"refusing to bind {host!r} without a token of at least "
                         f"{MIN_TOKEN_LENGTH} characters (--token or WEIGHTED_DASHBOARD_TOKEN)")


class _Handler(BaseHTTPRequestHandler):
    server_version = "weighted-dashboard"
    dashboard: "Dashboard"  # set on the subclass made per server

    def log_message(self, format: str, *args: Any) -> None:  # quiet by default
        if self.dashboard.verbose:
            super().log_message(format, *args)

    def _authorized(self, query: Dict[str, str]) -> bool:
        token = self.dashboard.token
        if not token:
            return True
        given = query.get("token", "")
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            given = auth[len("Bearer "):]
        return hmac.compare_digest(given.encode(), token.encode())

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy",
                         "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self'")
        self.end_headers()
        self.wfile.write(body)

    def _host_allowed(self) -> bool:
        # Without a token the only guard is the loopback bind, which DNS rebinding gets around:
        # a page from attacker.example whose name then resolves to 127.0.0.1 talks to this
        # server from the user's browser, with Host: attacker.example. So a tokenless dashboard
        # answers only requests addressed to a loopback name.
        if self.dashboard.token:
            return True
        host = self.headers.get("Host", "")
        name = urllib.parse.urlsplit(f"//{host}").hostname if host else None
        return name is not None and _is_loopback(name)

    def do_GET(self) -> None:  # noqa: N802
        if not self._host_allowed():
            self._send(HTTPStatus.FORBIDDEN, b"the Host header must name a loopback address "
                       b"(127.0.0.1, ::1, localhost) when no token is set\n", "text/plain")
            return
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        static = _STATIC.get(url.path)
        if static is not None:
            # The page's own files carry no data and are served to anyone who can connect; the
            # page then sends the token from its URL with every data request.
            name, ctype = static
            body = resources.files(__package__).joinpath("static", name).read_bytes()
            self._send(HTTPStatus.OK, body, ctype)
            return
        if not self._authorized(query):
            self._send(HTTPStatus.UNAUTHORIZED, b"missing or wrong token\n", "text/plain")
            return
        if url.path == "/api/state":
            try:
                body = json.dumps(self.dashboard.source.view(query), allow_nan=False,
                                  default=str).encode()
            except ValueError:
                body = json.dumps(_finite(self.dashboard.source.view(query))).encode()
            except Exception as e:  # e.g. the engine was closed
                self._send(HTTPStatus.SERVICE_UNAVAILABLE,
                           json.dumps({"error": f"{type(e).__name__}: {e}"}).encode(),
                           "application/json")
                return
            self._send(HTTPStatus.OK, body, "application/json")
            return
        if url.path == "/metrics" and isinstance(self.dashboard.source, LiveSource):
            text = self.dashboard.source.engine.prometheus()
            self._send(HTTPStatus.OK, text.encode(), "text/plain; version=0.0.4")
            return
        self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


class Dashboard:
    """An HTTP server for one source (a :class:`LiveSource` or a :class:`ReplaySource`).

    ``start()`` serves from a background thread and, for a live source, samples the engine every
    ``interval`` seconds of wall time; ``url`` is the address to open (with the token).
    """

    def __init__(self, source: Union[LiveSource, ReplaySource], *, host: str = "127.0.0.1",
                 port: int = 8765, token: Optional[str] = None, allow_remote: bool = False,
                 interval: float = 0.5, verbose: bool = False) -> None:
        check_bind(host, allow_remote=allow_remote, token=token)
        self.source = source
        self.token = token or None
        self.interval = interval
        self.verbose = verbose
        handler = type("Handler", (_Handler,), {"dashboard": self})
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self._stop = threading.Event()
        self._threads: list = []

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        suffix = f"?token={urllib.parse.quote(self.token)}" if self.token else ""
        return f"http://{host}:{self.port}/{suffix}"

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
        if isinstance(self.source, LiveSource):
            self.source.sample()
            t = threading.Thread(target=self._sampler, name="weighted-dashboard-sampler", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._server.serve_forever, name="weighted-dashboard",
                             daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def serve_forever(self) -> None:
        """Serves on this thread until interrupted."""
        self.start()
        try:
            self._stop.wait()
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        for t in self._threads:
            t.join(timeout=5)
        if isinstance(self.source, LiveSource):
            self.source.close()

    def __enter__(self) -> "Dashboard":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve(engine: Any, *, host: str = "127.0.0.1", port: int = 8765, token: Optional[str] = None,
          allow_remote: bool = False, interval: float = 0.5, title: str = "weighted engine") -> Dashboard:
    """Starts a dashboard watching ``engine`` (in this process) and returns it, already serving."""
    return Dashboard(LiveSource(engine, title=title), host=host, port=port, token=token,
                     allow_remote=allow_remote, interval=interval).start()


def replay(results: Any, *, policy: Optional[str] = None, **kwargs: Any) -> Dashboard:
    """Starts a dashboard replaying a simulation's results (a dict or a results.json path)."""
    return Dashboard(ReplaySource(results, policy=policy), **kwargs).start()


def main(argv: Optional[list] = None) -> int:
    from ._cli import main as cli_main
    return cli_main(argv)
