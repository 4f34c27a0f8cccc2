"""What the dashboard shows, computed from an engine's snapshot or a simulation's results.

Every source (in-process engine, replay, a state file, an actuator endpoint: _attach.py)
produces the same view (``/api/state``)::

    {"mode": "live" | "replay" | "attach", "title": str, "time_s": float,
     "services": [{"name", "panic", "budget", "endpoints": [{"id", "state", "weight", "target",
                   "base_weight", "penalty", "share", "measured_share", "share_source",
                   "rules": [{"metric", "value", "threshold", "penalty", "fired",
                   "contribution"}], "reasons": [{"kind", "name", "value", "threshold",
                   "effect"}], "p99_ms", "error_rate", "requests"}]}],
     "timeline": {"t": [s, ...], "series": {"service/endpoint": [weight, ...]},
                  "share": {"service/endpoint": [share, ...]}},
     "events": [{"time_s", "type", "service", "endpoint", "old_weight", "new_weight", "reason"}]}

``budget`` is null, or (config ``budget.max_error_rate`` set) {"max_error_rate",
"observed_error_rate", "met", "limited", "error_cost", "window_ms"}: the service's error budget
and whether it holds.

Fields of the snapshot that an engine may or may not have (``share`` per endpoint with its
expected and last cycle's measured share, ``reasons``, the state ``failing``) are read by name
when present; when absent, the share is derived from the weights (expected) and from the
window's requests (measured), and the reasons from the rules that fired, and ``share_source``
says which ("engine" or "derived").
"""
from __future__ import annotations

import collections
import json
import threading
from pathlib import Path
from typing import Any, Deque, Dict, List, Optional, Union


def _number(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _derived_reasons(ep: Dict[str, Any]) -> List[Dict[str, Any]]:
    judgement = ep.get("judgement")
    if isinstance(judgement, dict) and isinstance(judgement.get("contributors"), list):
        # The engine's own main contributors: fired rules, largest first, and the picker's
        # failure share where it prices the endpoint out.
        return [{"kind": c.get("source"), "name": c.get("metric"), "value": c.get("value"),
                 "threshold": c.get("threshold"), "effect": c.get("contribution")}
                for c in judgement["contributors"] if isinstance(c, dict)]
    return [{"kind": "rule", "name": r.get("metric"), "value": r.get("value"),
             "threshold": r.get("threshold"), "effect": r.get("contribution")}
            for r in ep.get("rules") or [] if r.get("fired")]


def shown_state(ep: Dict[str, Any]) -> Optional[str]:
    """The state an operator should read: the engine's, or ``"unknown"`` for an endpoint the
    engine has no evidence on (``judgement.evidence`` "none"; older engines: ``known`` false
    while healthy or recovering), which is not the same as healthy."""
    state = ep.get("state")
    judgement = ep.get("judgement")
    if isinstance(judgement, dict) and "evidence" in judgement:
        unknown = judgement.get("evidence") == "none"
    else:
        unknown = ep.get("known") is False
    return "unknown" if unknown and state in ("healthy", "recovering") else state


def services_view(snapshot: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The table of every service of a snapshot, shares and reasons filled in (module doc)."""
    out = []
    for s in snapshot.get("services", []):
        endpoints = [_endpoint_view(e) for e in s.get("endpoints", [])]
        total_w = sum(e["weight"] or 0 for e in endpoints)
        total_r = sum(e["requests"] or 0 for e in endpoints)
        for e in endpoints:
            if e["share"] is None:
                e["share_source"] = "derived"
                e["share"] = (e["weight"] or 0) / total_w if total_w > 0 else None
                if e["measured_share"] is None and total_r > 0:
                    e["measured_share"] = (e["requests"] or 0) / total_r
            else:
                e["share_source"] = "engine"
        out.append({"name": s.get("name"), "panic": bool(s.get("panic")),
                    "budget": _budget_view(s.get("budget")), "endpoints": endpoints})
    return out


def _budget_view(b: Any) -> Optional[Dict[str, Any]]:
    if not isinstance(b, dict):
        return None
    return {"max_error_rate": _number(b.get("max_error_rate")),
            "observed_error_rate": _number(b.get("observed_error_rate")),
            "met": bool(b.get("met")), "limited": bool(b.get("limited")),
            "error_cost": _number(b.get("error_cost")), "window_ms": _number(b.get("window_ms"))}


def _endpoint_view(ep: Dict[str, Any]) -> Dict[str, Any]:
    window = ep.get("window") or {}
    share = ep.get("share") if isinstance(ep.get("share"), dict) else {}
    last = share.get("last_cycle")
    # The engine writes the last cycle's measured share as a number; a dict form
    # {"expected", "measured"} is read too.
    last = last if isinstance(last, dict) else {"measured": last}
    reasons = ep.get("reasons")
    return {
        "id": ep.get("id"),
        "state": shown_state(ep),
        "engine_state": ep.get("state"),
        "evidence": (ep.get("judgement") or {}).get("evidence"),
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
        "share": _number(share.get("expected")),
        "measured_share": _number(last.get("measured")),
        "reasons": reasons if isinstance(reasons, list) else _derived_reasons(ep),
    }


class Timeline:
    """Weight and share per endpoint over time, one point per distinct engine time, at most
    ``history`` points: what a source that samples snapshots accumulates."""

    def __init__(self, history: int = 600) -> None:
        self.history = history
        self.t: Deque[float] = collections.deque(maxlen=history)
        self.series: Dict[str, Deque[Optional[float]]] = {}
        self.share: Dict[str, Deque[Optional[float]]] = {}
        self._last_time: Optional[float] = None

    def add(self, time_s: float, services: List[Dict[str, Any]]) -> None:
        values = {f"{s['name']}/{e['id']}": (e["weight"], e["share"])
                  for s in services for e in s["endpoints"]}
        if self._last_time == time_s and self.t:
            # Same engine time (a manual clock that has not moved): update the last point.
            for key in self.series:
                w, sh = values.get(key, (None, None))
                self.series[key][-1], self.share[key][-1] = w, sh
            return
        self.t.append(time_s)
        self._last_time = time_s
        for key, (w, sh) in values.items():
            if key not in self.series:
                pad = [None] * (len(self.t) - 1)
                self.series[key] = collections.deque(pad, maxlen=self.history)
                self.share[key] = collections.deque(pad, maxlen=self.history)
            self.series[key].append(w)
            self.share[key].append(sh)
        for key in self.series:
            if key not in values:
                self.series[key].append(None)
                self.share[key].append(None)

    def view(self) -> Dict[str, Any]:
        return {"t": list(self.t), "series": {k: list(v) for k, v in self.series.items()},
                "share": {k: list(v) for k, v in self.share.items()}}


class LiveSource:
    """Watches an engine in this process: samples its snapshot, collects its events."""

    mode = "live"

    def __init__(self, engine: Any, *, history: int = 600, max_events: int = 500,
                 title: str = "weighted engine") -> None:
        self.engine = engine
        self.title = title
        self._lock = threading.Lock()
        self._timeline = Timeline(history)
        self._events: Deque[Dict[str, Any]] = collections.deque(maxlen=max_events)
        self._latest: Optional[Dict[str, Any]] = None
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
        time_s = int(snap.get("time_ns", 0)) / 1e9
        services = services_view(snap)
        with self._lock:
            self._timeline.add(time_s, services)
            self._latest = {"time_s": time_s, "services": services,
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
                "timeline": self._timeline.view(),
                "events": list(self._events)[-100:],
            }

    def metrics(self) -> str:
        return self.engine.prometheus()


class BadRequest(ValueError):
    """A query parameter the view cannot use: answered 400 with this message."""


def parse_cursor(text: Optional[str], default: int) -> int:
    """``?t=``: a whole second of the replay. Not a number, not finite, or absurd is refused
    (``float('inf')`` would overflow ``int``)."""
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise BadRequest(f"t must be a number of seconds, got {text[:40]!r}") from None
    if value != value or value in (float("inf"), float("-inf")) or abs(value) > 1e9:
        raise BadRequest(f"t must be a finite number of seconds, got {text[:40]!r}")
    return int(value)


class ReplaySource:
    """Replays a simulation's results.json (``weighted.sim.run`` or ``weighted-sim --out``).

    The results carry per-second series per backend (share, weight, errors, the fault ground
    truth), not the engine's internal state, so the table shows those; the timeline is the
    chosen policy's weight per backend and the events are the scenario's fault onsets and ends.
    """

    mode = "replay"

    def __init__(self, results: Union[Dict[str, Any], str, Path], *, policy: Optional[str] = None) -> None:
        if not isinstance(results, dict):
            path = Path(results)
            try:
                results = json.loads(path.read_text(encoding="utf-8"))
            except ValueError as e:  # not UTF-8, not JSON
                raise ValueError(f"{path}: not a simulation's results.json ({e})") from None
            if not isinstance(results, dict):
                raise ValueError(f"{path}: not a simulation's results.json (not a JSON object)")
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
        cursor = parse_cursor(params.get("t"), len(t) - 1)
        cursor = max(0, min(cursor, len(t) - 1)) if t else 0
        endpoints = []
        timeline: Dict[str, List[Optional[float]]] = {}
        shares: Dict[str, List[Optional[float]]] = {}
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
                "share": at("share"), "measured_share": at("share"), "share_source": "replay",
                "reasons": [], "cpu": at("cpu"), "memory": at("memory"),
            })
            timeline[f"{policy}/{b.get('id')}"] = list(b.get("weight") or [])
            shares[f"{policy}/{b.get('id')}"] = list(b.get("share") or [])
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
            "services": [{"name": policy, "panic": False, "budget": None,
                          "endpoints": endpoints}],
            "timeline": {"t": list(t), "series": timeline, "share": shares},
            "events": events,
        }
