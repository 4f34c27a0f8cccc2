"""The dashboard's HTTP side: a WSGI application served by waitress (pinned in pyproject.toml).

waitress gives what a page that operators leave open needs: a fixed pool of worker threads
(requests queue rather than spawn threads), connections read by one event loop and closed when
idle past a timeout (a half-sent request cannot hold a worker), a cap on open connections, and
quiet handling of clients that vanish mid-answer. This module adds the routes, the token and Host
checks, and turns every failure into a status with a one-line JSON reason (no traceback reaches
the client or the log).
"""
from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import threading
import urllib.parse
from http import HTTPStatus
from importlib import resources
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from .._errors import WeightedError
from ._attach import SourceUnavailable
from ._model import BadRequest

log = logging.getLogger("weighted.dashboard")

_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/plot.js": ("plot.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
MIN_TOKEN_LENGTH = 16
_HEADERS = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy",
             "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self'")]

# Bounds of the server (Dashboard takes others for tests).
THREADS = 4                # workers: at most this many requests are handled at once
CONNECTION_LIMIT = 64      # open connections; more wait in the listen backlog
CHANNEL_TIMEOUT_S = 10     # a connection idle (or a request half sent) this long is closed
CLEANUP_INTERVAL_S = 2     # how often idle connections are looked for
MAX_HEADER_BYTES = 16384   # request line and headers


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, allow_remote: bool, token: Optional[str]) -> None:
    """Refuses a non-loopback address unless ``allow_remote`` and a token of at least 16
    characters are both given."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise ValueError(f"refusing to bind {host!r}: the dashboard binds 127.0.0.1 unless "
                         "allow_remote=True (--allow-remote) and a token are given")
    if not token or len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"refusing to bind {host!r} without a token of at least "
                         f"{MIN_TOKEN_LENGTH} characters (--token or WEIGHTED_DASHBOARD_TOKEN)")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _json_body(value: Any) -> bytes:
    try:
        return json.dumps(value, allow_nan=False, default=str).encode()
    except ValueError:  # NaN or an infinity somewhere: JSON has none, the page shows "–"
        return json.dumps(_finite(value), default=str).encode()


Response = Tuple[int, str, bytes]


class App:
    """The WSGI application of one dashboard: its source, token and verbosity."""

    def __init__(self, dashboard: Any) -> None:
        self.dashboard = dashboard

    def __call__(self, environ: Dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        try:
            status, ctype, body = self._handle(environ)
        except Exception as e:  # a bug: one line in the log, a reason to the client
            log.warning("dashboard: %s %s failed: %s: %s", environ.get("REQUEST_METHOD"),
                        environ.get("PATH_INFO"), type(e).__name__, e)
            status, ctype, body = self._error(HTTPStatus.INTERNAL_SERVER_ERROR,
                                              f"{type(e).__name__}: {e}")
        if self.dashboard.verbose:
            log.info("%s %s %d", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO"), status)
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))] + _HEADERS
        start_response(f"{status} {HTTPStatus(status).phrase}", headers)
        return [b"" if environ.get("REQUEST_METHOD") == "HEAD" else body]

    @staticmethod
    def _error(status: int, message: str) -> Response:
        return int(status), "application/json", json.dumps({"error": message}).encode()

    def _authorized(self, environ: Dict[str, Any], query: Dict[str, str]) -> bool:
        token = self.dashboard.token
        if not token:
            return True
        given = query.get("token", "")
        auth = environ.get("HTTP_AUTHORIZATION", "")
        if auth.startswith("Bearer "):
            given = auth[len("Bearer "):]
        return hmac.compare_digest(given.encode(), token.encode())

    def _host_allowed(self, environ: Dict[str, Any]) -> bool:
        # Without a token the only guard is the loopback bind, which DNS rebinding gets around:
        # a page from attacker.example whose name then resolves to 127.0.0.1 talks to this
        # server from the user's browser, with Host: attacker.example. So a tokenless dashboard
        # answers only requests addressed to a loopback name.
        if self.dashboard.token:
            return True
        host = environ.get("HTTP_HOST", "")
        try:
            name = urllib.parse.urlsplit(f"//{host}").hostname if host else None
        except ValueError:
            return False
        return name is not None and is_loopback(name)

    def _handle(self, environ: Dict[str, Any]) -> Response:
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return self._error(HTTPStatus.METHOD_NOT_ALLOWED, "the dashboard only reads: GET")
        if not self._host_allowed(environ):
            return (HTTPStatus.FORBIDDEN, "text/plain",
                    b"the Host header must name a loopback address (127.0.0.1, ::1, localhost) "
                    b"when no token is set\n")
        path = environ.get("PATH_INFO") or "/"
        query = dict(urllib.parse.parse_qsl(environ.get("QUERY_STRING", ""), max_num_fields=20))
        static = _STATIC.get(path)
        if static is not None:
            # The page's own files carry no data and are served to anyone who can connect; the
            # page then sends the token from its URL with every data request.
            name, ctype = static
            return HTTPStatus.OK, ctype, resources.files(__package__).joinpath(
                "static", name).read_bytes()
        if not self._authorized(environ, query):
            return HTTPStatus.UNAUTHORIZED, "text/plain", b"missing or wrong token\n"
        source = self.dashboard.source
        try:
            if path == "/api/state":
                return HTTPStatus.OK, "application/json", _json_body(source.view(query))
            if path == "/api/files" and hasattr(source, "files"):
                return HTTPStatus.OK, "application/json", _json_body({"files": source.files()})
            if path == "/metrics":
                text = source.metrics() if hasattr(source, "metrics") else None
                if text is not None:
                    return HTTPStatus.OK, "text/plain; version=0.0.4", text.encode()
        except BadRequest as e:
            return self._error(HTTPStatus.BAD_REQUEST, str(e))
        except (SourceUnavailable, WeightedError) as e:  # the engine was closed, a file vanished
            return self._error(HTTPStatus.SERVICE_UNAVAILABLE, f"{type(e).__name__}: {e}")
        return HTTPStatus.NOT_FOUND, "text/plain", b"not found\n"


class Server:
    """waitress serving `app` from a background thread; stop() returns once it has stopped."""

    def __init__(self, app: App, host: str, port: int, *, threads: int = THREADS,
                 connection_limit: int = CONNECTION_LIMIT,
                 channel_timeout: int = CHANNEL_TIMEOUT_S,
                 cleanup_interval: int = CLEANUP_INTERVAL_S) -> None:
        try:
            from waitress.server import create_server
        except ImportError as e:  # an optional dependency: the engine itself needs no server
            raise ImportError("the console serves its page with waitress, which is not "
                              "installed: pip install 'weighted[dashboard]'") from e
        self._server = create_server(
            app, host=host, port=port, threads=threads, connection_limit=connection_limit,
            channel_timeout=channel_timeout, cleanup_interval=cleanup_interval,
            max_request_header_size=MAX_HEADER_BYTES, max_request_body_size=4096,
            log_socket_errors=False, expose_tracebacks=False, asyncore_use_poll=True,
            ident="weighted-dashboard", clear_untrusted_proxy_headers=True)
        self._thread: Optional[threading.Thread] = None

    @property
    def host(self) -> str:
        return str(self._server.effective_host)

    @property
    def port(self) -> int:
        return int(self._server.effective_port)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.run, name="weighted-dashboard",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        from waitress import wasyncore
        server = self._server
        if self._thread is not None and self._thread.is_alive():
            # Closed from the event loop's own thread: its loop ends once its map is empty.
            try:
                server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
                self._thread.join(timeout=10)
            except OSError:  # the trigger's pipe is gone: close from here, the loop then ends
                wasyncore.close_all(server._map)
                self._thread.join(timeout=10)
        else:
            wasyncore.close_all(server._map)
        # waitress's trigger closes its pipe but not the duplicate of it that its file wrapper
        # holds; left to the garbage collector, that close hits whatever file now has the
        # number (another server's trigger, in a process that starts several: EBADF there).
        wrapper = getattr(server.trigger, "socket", None)
        if wrapper is not None and getattr(wrapper, "fd", -1) >= 0:
            wrapper.close()
        server.task_dispatcher.shutdown(timeout=5)

    def worker_count(self) -> int:
        """How many worker threads serve requests (tests hold it to the bound)."""
        return len(self._server.task_dispatcher.threads)
