"""Sources that watch an engine in another process (``--attach``).

- :class:`FileSource`: a state file (``export.state_file``) through :func:`weighted.attach`;
  the timeline comes from the file's own history, so a page opened late still has one.
- :class:`DirSource`: a directory of state files; the page picks one (``?file=NAME``).
- :class:`HttpSource`: a Spring service's ``/actuator/weighted`` endpoint (the snapshot and the
  events since a cursor), polled with a timeout; the timeline is built from the polls.

Each gives the view of ``_model.py``; none can change the engine it watches.
"""
from __future__ import annotations

import collections
import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Deque, Dict, List, Optional

from .._errors import WeightedError
from .._monitor import StateView, find_state_files
from ._model import BadRequest, Timeline, services_view

__all__ = ["FileSource", "DirSource", "HttpSource", "SourceUnavailable", "attach_source"]

MAX_EVENTS = 500
MAX_OPEN_FILES = 64
HTTP_TIMEOUT_S = 5.0
MAX_HTTP_BYTES = 64 << 20


class SourceUnavailable(RuntimeError):
    """The watched engine cannot be read right now (answered 503 with this message)."""


def _event_view(e: Dict[str, Any]) -> Dict[str, Any]:
    d = dict(e)
    d["time_s"] = (e.get("time_ns") or 0) / 1e9
    return d


class FileSource:
    """A state file written by another process's engine."""

    mode = "attach"

    def __init__(self, path: str, *, max_events: int = MAX_EVENTS) -> None:
        self.path = path
        self._view = StateView(path)
        self._lock = threading.Lock()
        self._events: Deque[Dict[str, Any]] = collections.deque(maxlen=max_events)
        self._cursor = 0
        self._history_next = 0
        self._history_rows: Deque[Dict[str, Any]] = collections.deque(maxlen=100_000)
        self._points: Deque[Dict[str, Any]] = collections.deque(maxlen=2000)
        info = self._view.info()
        self.title = f"{info.get('service') or Path(path).name} (pid {info.get('pid')})"

    def close(self) -> None:
        self._view.close()

    def _poll(self) -> None:
        # Only what is new since the last poll crosses: the cursor and the history's number.
        history = self._view.history(self._history_next, 0)
        self._points.extend(history["points"])
        self._history_next = history["next"] or self._history_next
        events = self._view.events(self._cursor, 0)
        if events.get("reset"):
            self._events.clear()
        self._events.extend(_event_view(e) for e in events["events"])
        self._cursor = events["next"]

    def _timeline(self) -> Dict[str, Any]:
        t: List[float] = []
        series: Dict[str, List[Optional[float]]] = {}
        share: Dict[str, List[Optional[float]]] = {}
        for i, p in enumerate(self._points):
            t.append((p.get("time_ns") or 0) / 1e9)
            cols = p.get("columns") or []
            for s in p.get("services", []):
                rows = [dict(zip(cols, values)) for values in s.get("endpoints", [])]
                total = sum(r.get("weight") or 0 for r in rows)
                for r in rows:
                    key = f"{s.get('name')}/{r.get('id')}"
                    value = r.get("share")
                    if value is None and total > 0:
                        value = (r.get("weight") or 0) / total  # derived, as in the table
                    series.setdefault(key, [None] * i).append(r.get("weight"))
                    share.setdefault(key, [None] * i).append(value)
            for table in (series, share):
                for values in table.values():
                    if len(values) < i + 1:
                        values.append(None)
        return {"t": t, "series": series, "share": share}

    def view(self, params: Dict[str, str]) -> Dict[str, Any]:
        with self._lock:
            try:
                self._poll()
                snap = self._view.snapshot()
                info = self._view.info()
            except WeightedError as e:
                raise SourceUnavailable(f"{self.path}: {e}") from None
            return {
                "mode": self.mode, "title": self.title,
                "time_s": (snap.get("time_ns") or 0) / 1e9, "clock": snap.get("clock"),
                "profile": snap.get("profile"), "services": services_view(snap),
                "writer": {k: info.get(k) for k in ("path", "service", "pid", "state",
                                                   "writer_alive", "age_ms",
                                                   "last_write_unix_ms")},
                "timeline": self._timeline(), "events": list(self._events)[-100:],
            }

    def metrics(self) -> Optional[str]:
        return None


class DirSource:
    """A directory of state files; ``?file=NAME`` picks one (a plain name in that directory)."""

    mode = "attach"

    def __init__(self, directory: str) -> None:
        self.directory = os.path.realpath(directory)
        if not os.path.isdir(self.directory):
            raise ValueError(f"{directory!r} is not a directory")
        self.title = f"state files in {self.directory}"
        self._lock = threading.Lock()
        self._open: "collections.OrderedDict[str, FileSource]" = collections.OrderedDict()

    def files(self) -> List[Dict[str, Any]]:
        return [dict(info, name=os.path.basename(path))
                for path, info in find_state_files(self.directory)]

    def _source(self, name: str) -> FileSource:
        if not name or "/" in name or name in (".", "..") or "\0" in name:
            raise BadRequest("file must be the name of a state file in the directory")
        with self._lock:
            src = self._open.get(name)
            if src is None:
                try:
                    src = FileSource(os.path.join(self.directory, name))
                except (WeightedError, OSError) as e:
                    raise BadRequest(f"{name!r}: {e}") from None
                self._open[name] = src
                while len(self._open) > MAX_OPEN_FILES:
                    self._open.popitem(last=False)[1].close()
            self._open.move_to_end(name)
            return src

    def view(self, params: Dict[str, str]) -> Dict[str, Any]:
        files = self.files()
        name = params.get("file") or (files[0]["name"] if files else "")
        if not name:
            return {"mode": self.mode, "title": self.title, "time_s": 0, "services": [],
                    "timeline": {"t": [], "series": {}, "share": {}}, "events": [],
                    "files": files, "file": None}
        out = self._source(name).view(params)
        out.update(files=files, file=name)
        return out

    def close(self) -> None:
        with self._lock:
            for src in self._open.values():
                src.close()
            self._open.clear()

    def metrics(self) -> Optional[str]:
        return None


class HttpSource:
    """A service's ``/actuator/weighted`` endpoint: ``GET URL/N`` answers
    ``{"snapshot": {...}, "events": {"next", "lost", "reset", "events"}}`` with the events
    after N (``"events": null`` when the service writes no state file: the page then shows no
    events)."""

    mode = "attach"

    def __init__(self, url: str, *, token: Optional[str] = None, history: int = 600,
                 timeout: float = HTTP_TIMEOUT_S) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http(s) URL")
        self.url = url
        self.title = f"{parts.netloc}{parts.path}"
        self._token = token
        self._timeout = timeout
        self._lock = threading.Lock()
        self._timeline = Timeline(history)
        self._events: Deque[Dict[str, Any]] = collections.deque(maxlen=MAX_EVENTS)
        self._cursor = 0

    def _get(self) -> Dict[str, Any]:
        # The endpoint's events since a cursor are GET URL/{cursor} (an actuator selector).
        parts = urllib.parse.urlsplit(self.url)
        path = f"{parts.path.rstrip('/')}/{self._cursor}"
        req = urllib.request.Request(urllib.parse.urlunsplit(parts._replace(path=path)),
                                     headers={"Accept": "application/json"})
        if self._token:
            req.add_header("Authorization", f"Bearer {self._token}")
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as r:
                body = r.read(MAX_HTTP_BYTES + 1)
        except urllib.error.HTTPError as e:
            raise SourceUnavailable(f"{self.url}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError) as e:
            raise SourceUnavailable(f"{self.url}: {getattr(e, 'reason', e)}") from None
        if len(body) > MAX_HTTP_BYTES:
            raise SourceUnavailable(f"{self.url}: answer larger than {MAX_HTTP_BYTES} bytes")
        try:
            doc = json.loads(body)
        except ValueError as e:
            raise SourceUnavailable(f"{self.url}: not JSON ({e})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("snapshot"), dict):
            raise SourceUnavailable(f"{self.url}: no \"snapshot\" object in the answer")
        return doc

    def view(self, params: Dict[str, str]) -> Dict[str, Any]:
        with self._lock:
            doc = self._get()
            snap = doc["snapshot"]
            events = doc.get("events") if isinstance(doc.get("events"), dict) else {}
            if events.get("reset"):
                self._events.clear()
            self._events.extend(_event_view(e) for e in events.get("events") or []
                                if isinstance(e, dict))
            if isinstance(events.get("next"), int):
                self._cursor = events["next"]
            time_s = (snap.get("time_ns") or 0) / 1e9
            services = services_view(snap)
            self._timeline.add(time_s, services)
            return {"mode": self.mode, "title": self.title, "time_s": time_s,
                    "clock": snap.get("clock"), "profile": snap.get("profile"),
                    "services": services, "timeline": self._timeline.view(),
                    "events": list(self._events)[-100:]}

    def close(self) -> None:
        pass

    def metrics(self) -> Optional[str]:
        return None


def attach_source(target: str, *, token: Optional[str] = None):
    """The source for ``--attach TARGET``: an http(s) URL, a directory or a state file."""
    if target.startswith(("http://", "https://")):
        return HttpSource(target, token=token)
    if os.path.isdir(target):
        return DirSource(target)
    return FileSource(target)
