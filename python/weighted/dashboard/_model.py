"""What the dashboard shows, computed from an engine's snapshot or a simulation's results.

Both sources produce the same view (``/api/state``)::

    {"mode": "live" | "replay", "title": str, "time_s": float,
     "services": [{"name", "panic", "endpoints": [{"id", "state", "weight", "target",
                   "base_weight", "penalty", "rules": [{"metric", "value", "threshold",
                   "penalty", "fired", "contribution"}], "p99_ms", "error_rate", "requests"}]}],
     "timeline": {"t": [s, ...], "series": {"service/endpoint": [weight, ...]}},
     "events": [{"time_s", "type", "service", "endpoint", "old_weight", "new_weight", "reason"}]}
"""
from __future__ import annotations

import collections
import json
import threading
from pathlib import Path
from typing import Any, Deque, Dict, List, Optional, Union


def _endpoint_view(ep: Dict[str, Any]) -> Dict[str, Any]:
    window = ep.get("window") or {}
    return {
        "id": ep.get("id"),
        "state": ep.get("state"),
        "weight": ep.get("effective_weight", ep.get("weight")),
        "health_weight": ep.get("weight"),
        "target": ep.get("target"),
        "base_weight": ep.get("base_weight"),
        "penalty": ep.get("penalty"),
        "rules": [
            {k: r.get(k) for k in ("metric", "value", "threshold", "penalty", "fired", "contribution")}
            for r in ep.get("rules") or []
        ],
        "p99_ms": window.get("p99_ms"),
        "error_rate": window.get("error_rate"),
        "requests": window.get("requests"),
        "known": ep.get("known"),
        "slow_start": ep.get("slow_start"),
    }


class LiveSource:
    """Watches an engine in this process: samples its snapshot, collects its events."""

    mode = "live"

    def __init__(self, engine: Any, *, history: int = 600, max_events: int = 500,
                 title: str = "weighted engine") -> None:
        self.engine = engine
        self.title = title
        self._lock = threading.Lock()
        self._t: Deque[float] = collections.deque(maxlen=history)
        self._series: Dict[str, Deque[Optional[float]]] = {}
        self._events: Deque[Dict[str, Any]] = collections.deque(maxlen=max_events)
        self._last_time_ns: Optional[int] = None
        self._latest: Optional[Dict[str, Any]] = None
        self._history = history
        self._unsubscribe = engine.on_event(self._on_event)

    def close(self) -> None:
        self._unsubscribe()

    def _on_event(self, event: Any) -> None:
        with self._lock:
            d = event.to_dict()
            d["time_s"] = event.time
            self._events.append(d)

    def sample(self) -> Dict[str, Any]:
        """Takes a snapshot now and adds it to the timeline (one point per engine time)."""
        snap = self.engine.snapshot()
        time_ns = int(snap.get("time_ns", 0))
        services = [{"name": s.get("name"), "panic": bool(s.get("panic")),
                     "endpoints": [_endpoint_view(e) for e in s.get("endpoints", [])]}
                    for s in snap.get("services", [])]
        with self._lock:
            weights = {f"{s['name']}/{e['id']}": e["weight"] for s in services for e in s["endpoints"]}
            if self._last_time_ns == time_ns and self._t:
                # Same engine time (a manual clock that has not moved): update the last point.
                for key, dq in self._series.items():
                    dq[-1] = weights.get(key)
                replace = True
            else:
                self._t.append(time_ns / 1e9)
                replace = False
            for key, w in weights.items():
                dq = self._series.get(key)
                if dq is None:
                    dq = collections.deque([None] * (len(self._t) - 1), maxlen=self._history)
                    self._series[key] = dq
                    dq.append(w)
                elif not replace:
                    dq.append(w)
            if not replace:
                for key, dq in self._series.items():
                    if key not in weights:
                        dq.append(None)
            self._last_time_ns = time_ns
            self._latest = {"time_s": time_ns / 1e9, "services": services,
                            "clock": snap.get("clock"), "profile": snap.get("profile")}
        return self._latest

    def view(self, params: Dict[str, str]) -> Dict[str, Any]:
        with self._lock:
            latest = self._latest
        if latest is None:
            latest = self.sample()
        with self._lock:
            return {
                "mode": self.mode, "title": self.title,
                "time_s": latest["time_s"], "clock": latest.get("clock"),
                "profile": latest.get("profile"), "services": latest["services"],
                "timeline": {"t": list(self._t),
                             "series": {k: list(v) for k, v in self._series.items()}},
                "events": list(self._events)[-100:],
            }


class ReplaySource:
    """Replays a simulation's results.json (``weighted.sim.run`` or ``weighted-sim --out``).

    The results carry per-second series per backend (share, weight, errors, the fault ground
    truth), not the engine's internal state, so the table shows those; the timeline is the
    chosen policy's weight per backend and the events are the scenario's fault onsets and ends.
    """

    mode = "replay"

    def __init__(self, results: Union[Dict[str, Any], str, Path], *, policy: Optional[str] = None) -> None:
        if not isinstance(results, dict):
            results = json.loads(Path(results).read_text(encoding="utf-8"))
        if "series" not in results:
            raise ValueError("the results have no per-second series (run with series=True)")
        self.results = results
        self.policies: List[str] = [p for p in results.get("policies", []) if p in results["series"]]
        if not self.policies:
            raise ValueError("the results name no policy with a series")
        self.policy = policy or next((p for p in self.policies if p.startswith("engine")), self.policies[0])
        if self.policy not in self.policies:
            raise ValueError(f"no series for policy {policy!r}; have: {', '.join(self.policies)}")
        scen = results.get("scenario", {})
        self.title = f"replay: {scen.get('name', 'simulation')}"

    def view(self, params: Dict[str, str]) -> Dict[str, Any]:
        policy = params.get("policy") or self.policy
        if policy not in self.policies:
            policy = self.policy
        series = self.results["series"][policy]
        t = series.get("t_s", [])
        try:
            cursor = int(float(params.get("t", len(t) - 1)))
        except ValueError:
            cursor = len(t) - 1
        cursor = max(0, min(cursor, len(t) - 1)) if t else 0
        endpoints = []
        timeline: Dict[str, List[Optional[float]]] = {}
        for b in series.get("backends", []):
            def at(name: str, default: Any = None) -> Any:
                values = b.get(name) or []
                return values[cursor] if cursor < len(values) else default
            sent, errors = at("sent", 0) or 0, at("errors", 0) or 0
            endpoints.append({
                "id": b.get("id"), "state": "fault" if at("sick", 0) else "ok",
                "weight": at("weight"), "target": None, "base_weight": None, "penalty": None,
                "rules": [], "p99_ms": None,
                "error_rate": (errors / sent) if sent else 0.0, "requests": sent,
                "share": at("share"), "cpu": at("cpu"), "memory": at("memory"),
            })
            timeline[f"{policy}/{b.get('id')}"] = list(b.get("weight") or [])
        events = []
        for ev in self.results.get("scenario", {}).get("fault_events", []):
            backends = self.results["scenario"].get("backends", [])
            idx = ev.get("backend", -1)
            events.append({"time_s": ev.get("t_s"), "type": f"fault_{ev.get('kind')}",
                           "service": policy,
                           "endpoint": backends[idx]["id"] if 0 <= idx < len(backends) else str(idx),
                           "old_weight": None, "new_weight": None,
                           "reason": {"fault": ev.get("type")}})
        events.sort(key=lambda e: (e["time_s"] is None, e["time_s"]))
        p99 = series.get("p99_latency_ms") or []
        return {
            "mode": self.mode, "title": self.title, "time_s": t[cursor] if t else 0,
            "cursor": cursor, "duration_s": len(t), "policy": policy, "policies": self.policies,
            "service_p99_ms": p99[cursor] if cursor < len(p99) else None,
            "services": [{"name": policy, "panic": False, "endpoints": endpoints}],
            "timeline": {"t": list(t), "series": timeline},
            "events": events,
        }
