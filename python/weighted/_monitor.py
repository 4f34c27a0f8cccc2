"""Read another process's engine through its state file: :func:`attach`.

An engine whose config sets ``export.state_file`` publishes its snapshot, one history point per
controller cycle and its recent events to that file; :func:`attach` opens it read-only from any
process (``wt_monitor_open``). Nothing here can change the engine. docs/state-file.md.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Tuple, Union

from . import _weighted
from ._errors import WeightedError

__all__ = ["StateView", "attach", "find_state_files"]

PathLike = Union[str, "os.PathLike[str]"]


class StateView:
    """A read-only view of an engine in another process, through its state file.

    ``snapshot()`` is the engine's snapshot as of its last publication (the dict
    ``Engine.snapshot()`` returns in the writer's process); ``history()`` its per-cycle points;
    ``events()`` its recent events; ``info()`` who writes the file and how recently. Safe to use
    from several threads; close it (or use ``with``) to release the file.
    """

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        self._monitor = _weighted.Monitor(self.path)

    def snapshot(self) -> Dict[str, Any]:
        return json.loads(self._monitor._snapshot_json())

    def history(self, since: int = 0, max_points: int = 0) -> Dict[str, Any]:
        """``{"interval_ms", "next", "points"}``: the points after ``since`` (0: every point
        kept), at most the newest ``max_points`` (0: all). Each point has ``columns`` naming the
        fields of its endpoint rows; :meth:`history_rows` turns them into dicts."""
        return json.loads(self._monitor._history_json(int(since), int(max_points)))

    def history_rows(self, since: int = 0, max_points: int = 0) -> List[Dict[str, Any]]:
        """The history as one dict per point and endpoint: ``{"n", "time_s", "service",
        "id", "state", "weight", "share", "measured", "penalty"}`` (None where the writer's
        snapshot lacks the field): ``weight`` is the effective weight, ``share`` the share of
        picks the model expected for the next cycle, ``measured`` the share of results the last
        cycle had."""
        rows = []
        for p in self.history(since, max_points)["points"]:
            cols = p.get("columns") or []
            for s in p.get("services", []):
                for values in s.get("endpoints", []):
                    row = dict(zip(cols, values))
                    row.update(n=p.get("n"), time_s=p.get("time_ns", 0) / 1e9,
                               service=s.get("name"))
                    rows.append(row)
        return rows

    def events(self, cursor: int = 0, max_events: int = 0) -> Dict[str, Any]:
        """``{"next", "lost", "reset", "events"}``: the events after ``cursor``; pass ``next``
        back as the cursor to read only newer ones. ``lost`` counts events overwritten before
        they were read."""
        return json.loads(self._monitor._events_json(int(cursor), int(max_events)))

    def info(self) -> Dict[str, Any]:
        """``{"service", "pid", "state": "running"|"closed"|"gone", "writer_alive",
        "last_write_unix_ms", "age_ms", ...}``."""
        return json.loads(self._monitor._info_json())

    def close(self) -> None:
        self._monitor.close()

    @property
    def closed(self) -> bool:
        return self._monitor.closed

    def __enter__(self) -> "StateView":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<weighted.StateView {self.path!r}{' closed' if self.closed else ''}>"


def attach(path: PathLike) -> StateView:
    """Opens the state file at ``path`` read-only. Raises ``ConfigFileError`` (an ``OSError``)
    when it cannot be opened and ``StateFileFormatError`` when it is not a state file this
    library reads."""
    return StateView(path)


def find_state_files(directory: PathLike) -> List[Tuple[str, Dict[str, Any]]]:
    """The state files in ``directory`` (not recursive), each with its ``info()``, newest write
    first. Files that are not state files are skipped."""
    found = []
    for entry in sorted(Path(directory).iterdir()):
        if not entry.is_file() or ".tmp-" in entry.name:
            continue
        try:
            with StateView(entry) as view:
                found.append((str(entry), view.info()))
        except (WeightedError, OSError):
            continue
    found.sort(key=lambda item: -int(item[1].get("last_write_unix_ms") or 0))
    return found
